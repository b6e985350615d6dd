"""`colint pareto`: a design's throughput–interactivity frontier, and another design's against it.

Loads the design (and the one to compare: another file, or the same file with ``--variant
key=value`` edits spliced into its text the way `colint suggest` builds its variants), builds the
scenario (formats, context, prefill tokens; the deployment and concurrency are what
colint.analysis.frontier enumerates), and computes one frontier per GPU. Reporters format the
result: colint.reporters.pareto_text.
"""

from __future__ import annotations

import json
from dataclasses import field, replace
from typing import Any, Optional

from colint.engine.deployment import Deployment
from colint.util.records import dataclass
from colint.util.version import __version__
from colint.analysis.frontier import compare, frontier
from colint.analysis.serving import Serving, serving_for
from colint.errors import ColintError, UsageError
from colint.findings import Edit
from colint.fixing.fix_text import apply_edits, parse_key
from colint.hardware_profiles import load_profile
from colint.loading import load, load_text
from colint.normalize import normalize
from colint.engine.settings import Settings


@dataclass
class ParetoResult:
    designs: list[str]  # display names: A, then B when comparing
    frontiers: list[list[Any]]  # per design, one colint.analysis.frontier.Frontier per GPU
    comparisons: list[dict[str, Any]] = field(default_factory=list)  # per GPU, when comparing

    def public(self) -> dict[str, Any]:

        out: dict[str, Any] = {
            "version": __version__,
            "estimate": "every figure is an estimate of colint's step model (not a measurement)",
            "designs": [
                {"name": name, "gpus": [f.public() for f in frs]} for name, frs in zip(self.designs, self.frontiers)
            ],
        }
        if self.comparisons:
            out["comparison"] = self.comparisons
        return out


def parse_variants(items: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """``key=value`` pairs (value: a JSON literal — 8, 1.5, true, "x" — or else the bare string)."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise UsageError(f"--variant {item!r}: write key=value (a key of the file, e.g. num_key_value_heads=8)")
        try:
            out[key] = json.loads(value)
        except ValueError:
            out[key] = value
    return out


def load_design(
    path: str,
    variant: Optional[dict[str, Any]] = None,
    *,
    input_format: Optional[str] = None,
    vocab_size: Optional[int] = None,
):
    """The ModelSpec of ``path``, with ``variant`` edits (key -> new value) applied to its text."""
    try:
        doc = load(path)
        if not variant:
            return normalize(doc, input_format=input_format, vocab_size=vocab_size)

        edits = []
        for key, new in variant.items():
            parts = parse_key(key)
            if not parts or not doc.has(parts):
                raise UsageError(f"--variant {key}: the file has no key {key!r} to change")
            edits.append(Edit(key=key, old=doc.get(parts), new=new))
        vdoc = load_text(apply_edits(doc, edits), doc.path, syntax=doc.syntax)
        return normalize(vdoc, input_format=input_format, vocab_size=vocab_size)
    except ColintError as exc:
        if exc.path is None:
            exc.path = path
        raise


def run(
    path: str,
    gpus: list[str],
    scenario,
    *,
    compare_path: Optional[str] = None,
    variant: Optional[dict[str, Any]] = None,
    input_format: Optional[str] = None,
    vocab_size: Optional[int] = None,
    serving: Optional[Serving] = None,
) -> ParetoResult:
    """Frontiers of ``path`` (and of the compared design: ``compare_path`` and/or ``variant``) on each GPU,
    served as ``serving`` says (None: decode steps alone)."""
    profiles = [load_profile(g) for g in gpus]
    specs: list[tuple[str, dict, Any]] = [
        (path, {}, load_design(path, input_format=input_format, vocab_size=vocab_size))
    ]
    if compare_path or variant:
        other = compare_path or path
        specs.append(
            (other, dict(variant or {}), load_design(other, variant, input_format=input_format, vocab_size=vocab_size))
        )
    names = [_name(p, v) for p, v, _ in specs]
    frontiers = []
    for p, v, spec in specs:
        frontiers.append(
            [frontier(spec, prof, replace(scenario, gpu=prof.name), p, v, serving=serving) for prof in profiles]
        )
    result = ParetoResult(names, frontiers)
    if len(specs) == 2:
        for fa, fb in zip(*frontiers):
            result.comparisons.append({"gpu": fa.gpu, "a": names[0], "b": names[1], "levels": compare(fa, fb)})
    return result


def run_settings(
    path: str,
    opts: Settings,
    *,
    compare_path: Optional[str] = None,
    variants: tuple[str, ...] = (),
    prefill_tokens: Optional[int] = None,
    serving: str = "aggregated",
    isl: Optional[int] = None,
    osl: Optional[int] = None,
    total_gpus: Optional[int] = None,
    ttft_limit_s: Optional[float] = None,
) -> ParetoResult:
    """``run`` as ``colint pareto`` asks for it: the GPUs, scenario, formats, context and input settings of
    ``opts``; ``variants``: the ``KEY=VALUE`` items of ``--variant``; ``serving`` and its workload
    (:func:`serving_for`)."""
    sc = Deployment.from_settings(opts).frontier_scenario(prefill_tokens=prefill_tokens)
    sv = serving_for(serving, sc.context, isl, osl, total_gpus, ttft_limit_s)
    if sv.isl:
        sc = replace(sc, context=sv.isl + sv.osl)  # the KV cache of a request at its last output token
    return run(
        path,
        list(opts.gpus),
        sc,
        compare_path=compare_path,
        variant=parse_variants(variants),
        input_format=opts.input_format,
        vocab_size=opts.vocab_size,
        serving=sv,
    )


def _name(path: str, variant: dict[str, Any]) -> str:
    if not variant:
        return path
    return path + " [" + ", ".join(f"{k}={v}" for k, v in variant.items()) + "]"

"""Run selected rules on a config text, for the rule tests."""

from __future__ import annotations

import json

from colint.engine.checking import build_targets, check_spec
from colint.engine.settings import Settings
from colint.loading import load, load_text
from colint.rules import Context, select_rules
from colint.normalize import normalize


def spec_of(config: dict | str, name: str = "config.json"):
    text = config if isinstance(config, str) else json.dumps(config, indent=2)
    return normalize(load_text(text, name))


def corpus(path: str):
    """The normalized spec of a config file (a corpus or fixture path)."""
    return normalize(load(path))


def run(spec_or_path, select: list[str], **opts):
    """Findings of the ``select``ed rules through the check engine (a spec, or a path to load)."""
    spec = corpus(spec_or_path) if isinstance(spec_or_path, str) else spec_or_path
    # a rule test names its deployment: tp=1 at the preset's concurrency unless the test sets them (without one the
    # engine would choose an automatic deployment per model, colint.analysis.deployments.automatic_deployment,
    # and price the checkpoint's own format; tests of that pass auto=True)
    if not opts.pop("auto", False):
        if not any(k in opts for k in ("tp", "ep", "pp", "kvp")):
            opts["tp"] = 1
        opts.setdefault("concurrency", None)
        if opts["concurrency"] is None:
            from colint.analysis.scenario import PRESETS

            opts["concurrency"] = PRESETS[opts.get("scenario", "throughput")]["decode_concurrency"]
        opts.setdefault("dtype", "bf16")
    options = Settings(select=select, **opts)
    return check_spec(spec, build_targets(options), options)


def render(findings) -> str:
    """Findings as a rule's expected-output file holds them (tests/rules/fixtures/<family>/NAME.findings.txt):
    one line per finding (line:column code severity key: message), then its loss, details, evidence and fixes."""
    out = []
    for f in findings:
        out.append(f"{f.line}:{f.column} {f.code} {f.severity} {f.key}: {f.message}")
        if f.impact.estimated_loss_pct is not None:
            out.append(f"  est. loss: {f.impact.estimated_loss_pct}% of the step")
        out += [f"  detail: {d}" for d in f.details]
        if f.evidence:
            out.append(f"  evidence: {json.dumps(f.evidence, sort_keys=True)}")
        for fx in f.fixes:
            out.append(f"  fix ({fx.safety}): {fx.title}")
            out += [f"    {e.key}: {e.old!r} -> {e.new!r}" for e in fx.edits]
    return "\n".join(out) + "\n" if out else "no findings\n"


def run_spec_rules(config, select: list[str], name: str = "config.json"):
    spec = spec_of(config, name)
    out = []
    for r in select_rules(select):
        assert not r.needs_workload, f"{r.code} needs a workload; use the check engine"
        out.extend(r.check(Context(rule=r, spec=spec)))
    return out


LLAMA_8B = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "num_hidden_layers": 32,
    "vocab_size": 128256,
    "max_position_embeddings": 131072,
    "tie_word_embeddings": False,
}

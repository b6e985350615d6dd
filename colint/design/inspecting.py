"""`colint inspect`: the normalized spec, parameter counts and GEMM table of one file (with a GPU: its
step estimates under the resolved scenario)."""

from __future__ import annotations

from colint.analysis.inventory import gemms, param_counts
from colint.analysis.kv_cache import kv_cache_bytes_per_token
from colint.analysis.scenario import fit_to_model
from colint.analysis.workload import analyse, summary
from colint.engine.checking import build_targets
from colint.errors import ColintError
from colint.loading import load
from colint.normalize import normalize
from colint.normalize.model_spec import ModelSpec
from colint.util.plain_data import dump
from colint.engine.settings import Settings


def inspect_file(path: str, opts: Settings, estimates: bool = False) -> dict:
    """``inspect_spec`` of the file at ``path`` read under ``opts``; with ``estimates``, ``"estimates"`` for the
    one GPU of ``opts.gpus`` under the rest of the scenario, fitted to the model. A file that cannot be read
    raises its ColintError located at ``path``."""
    try:
        spec = normalize(load(path), input_format=opts.input_format, vocab_size=opts.vocab_size)
    except ColintError as exc:
        exc.path = path  # where the file is reported: the path as given
        raise
    info = inspect_spec(spec, path)
    if estimates:
        info["estimates"] = estimates_for(spec, opts)
    return info


def estimates_for(spec: ModelSpec, opts: Settings) -> dict:
    """The ``"estimates"`` of an inspection: the step on the one GPU of ``opts.gpus`` under the rest of the
    scenario, fitted to the model (a context beyond its positions is clipped), as ``check`` prices it."""
    (target,) = build_targets(opts)
    return summary(analyse(spec, target.profile, fit_to_model(target.scenario, spec)))


def inspect_spec(spec: ModelSpec, path: str) -> dict:
    """The ``inspect`` JSON shape of docs/output.md."""
    p = param_counts(spec)
    return {
        "path": path,
        "format": spec.format,
        "model_type": spec.model_type,
        "spec": dump(spec, json=True, exclude={"sources"}),
        "params": {
            "total": p.total,
            "embedding": p.embedding,
            "lm_head": p.lm_head,
            "active_per_token": p.active_per_token,
            "mtp": p.mtp,
            "counts_include_vocab": p.known_vocab,
        },
        "gemms": [
            {"name": g.name, "layers": g.layers, "k": g.k, "n": g.n, "m_per_token": g.m_per_token, "count": g.count}
            for g in gemms(spec)
        ],
        "kv_cache_bytes_per_token": kv_cache_bytes_per_token(spec),
        "notes": list(spec.notes),
    }

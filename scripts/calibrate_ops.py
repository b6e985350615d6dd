#!/usr/bin/env python3
"""Error of colint's op models (attention, MLA, MoE, collectives) against measured kernels.

    .venv/bin/python scripts/calibrate_ops.py                        # the shipped sample (tests/data/measured)
    .venv/bin/python scripts/calibrate_ops.py --wheel DIR            # the full aiconfigurator files (pyarrow)
    .venv/bin/python scripts/calibrate_ops.py --wheel DIR --heldout  # fit the shared constants without one GPU
    .venv/bin/python scripts/calibrate_ops.py --wheel DIR --heldout-shared  # ... on a fixed subsample, judged on ALL rows
    .venv/bin/python scripts/calibrate_ops.py --wheel DIR --fit      # fit the shared constants on all GPUs
    .venv/bin/python scripts/calibrate_ops.py --make-sample DIR      # rebuild tests/data/measured/ops_*.csv

DIR is the unzipped wheel's ``aiconfigurator_core/systems/data`` folder (only ``a100_sxm``,
``h100_sxm`` and ``b200_sxm`` are read). For each op family and GPU: median and 90th percentile of
|log2(estimate / measured)| and Spearman's ρ, for the model (``colint.analysis.ops``) and for the
plain roofline max(FLOPs / peak, bytes / bandwidth) (collectives: bytes / link bandwidth).
pyarrow is needed only to read the wheel's parquet files (a script extra, not a colint dependency).
"""

from __future__ import annotations

import argparse
import csv
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

SAMPLE_DIR = ROOT / "tests" / "data" / "measured"
WHEEL = "aiconfigurator-core 0.12.0 wheel (PyPI, Apache-2.0)"
# wheel folder -> colint profile
GPUS = {"a100_sxm": "a100-sxm-80gb", "h100_sxm": "h100-sxm", "b200_sxm": "b200"}
# family -> (parquet path under <gpu>/ per GPU folder (first that exists), sample rows per GPU)
SOURCES = {
    "generation_attention": (
        [
            "attention/trtllm/1.3.0rc20/generation_attention_perf.parquet",
            "attention/trtllm/1.0.0/generation_attention_perf.parquet",
        ],
        300,
    ),
    "context_attention": (
        [
            "attention/trtllm/1.3.0rc20/context_attention_perf.parquet",
            "attention/trtllm/1.0.0/context_attention_perf.parquet",
        ],
        300,
    ),
    "mla_generation": (
        ["mla/trtllm/1.3.0rc20/generation_mla_perf.parquet", "mla/trtllm/1.0.0/generation_mla_perf.parquet"],
        150,
    ),
    "mla_context": (
        ["mla/trtllm/1.3.0rc20/context_mla_perf.parquet", "mla/trtllm/1.0.0/context_mla_perf.parquet"],
        150,
    ),
    "moe": (["moe/trtllm/1.3.0rc20/moe_perf.parquet", "moe/trtllm/1.0.0/moe_perf.parquet"], 300),
    "custom_allreduce": (
        ["comm/trtllm/1.3.0rc20/custom_allreduce_perf.parquet", "comm/trtllm/1.0.0/custom_allreduce_perf.parquet"],
        100,
    ),
    "nccl": (["comm/nccl/2.27.3/nccl_perf.parquet"], 200),
    "moe_a2a": (["comm/trtllm/1.3.0rc11/moe_a2a_perf.parquet"], 150),
}
DROP = ("framework", "version", "device")  # named in the file's first line instead
TARGETS = {"median": 0.25, "p90": 0.8, "rho": 0.95}


def read_parquet(path: Path) -> tuple[dict, dict]:
    """({column: list}, {framework, version, device}) of one wheel file."""
    import pyarrow.parquet as pq

    t = pq.read_table(path)
    cols = {c: t.column(c).to_pylist() for c in t.schema.names}
    meta = {k: (cols[k][0] if k in cols and cols[k] else "") for k in DROP}
    return cols, meta


def wheel_files(data_dir: Path):
    """(gpu folder, family, path) of every source file found."""
    for gpu in GPUS:
        for fam, (cands, _) in SOURCES.items():
            for rel in cands:
                p = data_dir / gpu / rel
                if p.is_file():
                    yield gpu, fam, p, rel
                    break


def _spaced(n: int, quota: int) -> list[int]:
    """``quota`` evenly spaced positions among ``n`` (all when n <= quota)."""
    step = max(1.0, n / quota)
    return sorted({int(i * step) for i in range(min(quota, n))})


def make_sample(data_dir: Path) -> None:
    """Deterministic sample: rows sorted by every column, taken at evenly spaced positions."""
    for gpu, fam, path, rel in wheel_files(data_dir):
        cols, meta = read_parquet(path)
        keep = [c for c in cols if c not in DROP]
        rows = sorted(zip(*(cols[c] for c in keep)), key=lambda r: tuple(str(x) for x in r))
        picked = _spaced(len(rows), SOURCES[fam][1])
        out = SAMPLE_DIR / f"ops_{fam}_{gpu}.csv"
        unit = "latency in us" if fam == "moe_a2a" else "latency in ms"
        with open(out, "w", newline="", encoding="utf-8") as fh:
            fh.write(
                f"# Measured {fam} kernels on {meta['device'] or gpu}, {meta['framework']} {meta['version']} "
                f"({unit}); from the {WHEEL}, systems/data/{gpu}/{rel}\n"
            )
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(keep)
            for i in picked:
                w.writerow(rows[i])
        print(f"{out.name}: {len(picked)} of {len(rows)} rows")


def subsample(data: dict, scale: float) -> dict:
    """The fixed stratified subsample the held-out fits use on the full files: per (GPU, family),
    ``scale`` x the shipped sample's quota of rows, drawn as ``make_sample`` draws (sorted by every
    column, evenly spaced), so every shape axis is covered; no row is chosen by its latency or error."""
    out = {}
    for (gpu, fam), rows in data.items():
        keys = [k for k in rows[0] if k not in DROP] if rows else []
        srt = sorted(rows, key=lambda r: tuple(r[k] for k in keys))
        out[(gpu, fam)] = [srt[i] for i in _spaced(len(srt), int(SOURCES[fam][1] * scale))]
    return out


def _rows_csv(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        lines = [ln for ln in fh if not ln.startswith("#")]
    return list(csv.DictReader(lines))


def load(wheel: Path | None) -> dict[tuple[str, str], list[dict]]:
    """{(gpu folder, family): rows as {column: str}} from the wheel or the shipped sample."""
    out: dict[tuple[str, str], list[dict]] = {}
    if wheel is None:
        for path in sorted(SAMPLE_DIR.glob("ops_*.csv")):
            stem = path.stem[len("ops_") :]
            gpu = next(g for g in GPUS if stem.endswith(g))
            out[(gpu, stem[: -len(gpu) - 1])] = _rows_csv(path)
        return out
    for gpu, fam, path, _ in wheel_files(wheel):
        cols, _ = read_parquet(path)
        keys = [c for c in cols if c not in DROP]
        out[(gpu, fam)] = [{k: str(v) for k, v in zip(keys, vals)} for vals in zip(*(cols[k] for k in keys))]
    return out


def table_key(fam: str, row: dict) -> str:
    """The error table's row: the family, NCCL split by collective, MoE dispatch/combine by backend."""
    if fam == "nccl":
        return "nccl " + row["op_name"]
    if fam == "custom_allreduce":
        return "all_reduce (custom)"
    if fam == "moe_a2a":
        return "moe_a2a " + row.get("comm_backend", "").replace("trtllm_", "")
    return fam


def measured_s(fam: str, row: dict) -> float:
    return float(row["latency"]) * (1e-6 if fam == "moe_a2a" else 1e-3)


def evaluate(data, models: dict | None = None, skip: set[str] = frozenset()) -> list[dict]:
    """One row per (GPU, table key): rows, model and roofline errors."""
    import numpy as np

    from calibrate import errors
    from colint.analysis.ops_csv import row_estimate
    from colint.hardware_profiles import load_profile, time_model

    groups: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
    for (gpu, fam), rows in data.items():
        if gpu in skip:
            continue
        profile = load_profile(GPUS[gpu])
        model = (models or {}).get(profile.architecture) or time_model(profile)
        for row in rows:
            r = row_estimate(row, profile, model)
            if r is None:
                continue
            groups.setdefault((gpu, table_key(fam, row)), []).append((r[0], r[1], measured_s(fam, row)))
    out = []
    for (gpu, key), vals in sorted(groups.items()):
        a = np.array(vals)
        out.append(
            {
                "gpu": GPUS[gpu],
                "family": key,
                "rows": len(a),
                "model": errors(a[:, 0], a[:, 2]),
                "roofline": errors(np.maximum(a[:, 1], 1e-12), a[:, 2]),
            }
        )
    return out


def meets(r: dict) -> bool:
    m = r["model"]
    return m["median"] <= TARGETS["median"] and m["p90"] <= TARGETS["p90"] and m["rho"] >= TARGETS["rho"]


def table(results: list[dict]) -> str:
    lines = [
        "| GPU | op family | rows | model median | model p90 | model ρ | roofline median | roofline p90 | roofline ρ |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        mo, ro = r["model"], r["roofline"]
        flag = "" if meets(r) else " ✗"
        lines.append(
            f"| {r['gpu']} | {r['family']}{flag} | {r['rows']:,} | {mo['median']:.3f} | {mo['p90']:.3f} | "
            f"{mo['rho']:.3f} | {ro['median']:.3f} | {ro['p90']:.3f} | {ro['rho']:.3f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wheel", type=Path, default=None, help="the wheel's systems/data folder (default: the sample)")
    ap.add_argument("--make-sample", type=Path, metavar="DIR", help="rebuild tests/data/measured/ops_*.csv")
    ap.add_argument("--fit", action="store_true", help="fit the shared op constants on all GPUs, print them")
    ap.add_argument(
        "--heldout",
        action="store_true",
        help="fit the shared constants without one GPU, report it; "
        "its architecture's constants from the other architectures / published figures",
    )
    ap.add_argument(
        "--heldout-shared",
        action="store_true",
        help="as --heldout, but keep the held-out "
        "architecture's measured constants (only the shared constants are held out)",
    )
    ap.add_argument(
        "--fit-scale",
        type=float,
        default=1.0,
        help="with --wheel: the held-out / --fit fits run on a fixed subsample of this many times the "
        "shipped sample's rows per file (evaluation uses every row); 0 = fit on every row (slow)",
    )
    ap.add_argument("--bias", action="store_true", help="print the median signed log2 error too")
    args = ap.parse_args(argv)
    if args.make_sample:
        make_sample(args.make_sample)
        return 0
    data = load(args.wheel)
    fit_data = subsample(data, args.fit_scale) if args.wheel is not None and args.fit_scale > 0 else data
    if args.fit:
        print(fit_shared(fit_data, set()))
        return 0
    if args.heldout or args.heldout_shared:
        return _heldout(data, priors=not args.heldout_shared, fit_data=fit_data)
    results = evaluate(data)
    print(table(results))
    if args.bias:
        for r in results:
            print(f"{r['gpu']:14s} {r['family']:24s} bias {r['model']['bias']:+.3f}")
    bad = [r for r in results if not meets(r)]
    print(
        f"\ntargets: median <= {TARGETS['median']}, p90 <= {TARGETS['p90']}, rho >= {TARGETS['rho']}: "
        + ("all met" if not bad else "missed for " + ", ".join(f"{r['gpu']}/{r['family']}" for r in bad))
    )
    return 0 if not bad else 1


# ------------------------------------------------------------ fitting the cross-architecture constants
SHARED_GRID = {  # the cross-architecture op constants (``common:`` in _architectures.yaml)
    "softmax_overlap": [0.0, 0.25, 0.5],
    "context_cta_cycles": [2500.0, 5000.0, 7500.0, 10000.0],
    "decode_memory_efficiency": [0.8, 0.85, 0.9, 0.92, 0.95],
    "decode_split_elems_per_clk": [10.0, 12.0, 14.0, 16.0, 20.0],
    "link_efficiency": [0.6, 0.7, 0.8, 0.9],
    "peer_link_share": [0.5, 0.7, 1.0],
    "oneshot_max_bytes": [2.0**19, 2.0**20, 2.0**21],
    "moe_gemm_efficiency": [0.5, 0.6, 0.7, 0.8, 1.0],
    "moe_pick_ns": [0.0, 0.5, 1.0, 1.5, 2.0],
    "a2a_sm_copy_gbps": [12.0, 14.0, 16.0, 18.0],
    "p2p_ll_gbps": [4.0, 6.0, 8.0, 10.0],
    "p2p_simple_us": [6.0, 8.0, 10.0],
}
# per-architecture op constants measured on that architecture's GPU (MEAS-OPS); a held-out GPU takes
# the mean of the other architectures' values instead (what a new architecture would get)
ARCH_OPS = (
    "attention_floor_us",
    "mla_floor_us",
    "context_floor_us",
    "decode_item_cycles",
    "decode_combine_us",
    "mla_serial_cycles",
    "custom_allreduce_latency_us",
    "collective_latency_us",
    "collective_step_latency_us",
    "a2a_copy_cycles",
    "a2a_latency_us",
    "a2a_ll_pick_us",
    "moe_fixed_us",
    "custom_allreduce_max_bytes",
)


def _with(base: dict, upd: dict) -> dict:
    return {a: replace(tm, **upd) for a, tm in base.items()}


def _score(results) -> float:
    return sum(r["model"]["median"] + 0.5 * r["model"]["p90"] for r in results) / max(len(results), 1)


def fit_shared(data, skip: set[str], base: dict | None = None) -> dict:
    from colint.hardware_profiles import _architectures

    base = dict(base or _architectures())
    tm = next(iter(base.values()))
    cur = {k: getattr(tm, k) for k in SHARED_GRID}
    best = _score(evaluate(data, _with(base, cur), skip))
    for _ in range(2):
        for key, grid in SHARED_GRID.items():
            for v in grid:
                trial = {**cur, key: v}
                s = _score(evaluate(data, _with(base, trial), skip))
                if s < best - 1e-9:
                    best, cur = s, trial
    return cur


# Published FlashAttention forward rates / dense peak: FA2 on A100 ~0.70 (Dao 2023); FA3 on H100 740
# TFLOP/s BF16 (0.75) and 1.2 PFLOP/s FP8 (0.61) (Shah et al. 2024); B200 ~1,600 TFLOP/s BF16 (0.71)
PUBLISHED_ATTENTION = {
    "ampere": {"bf16": 0.70, "fp16": 0.70},
    "hopper": {"bf16": 0.75, "fp16": 0.75, "fp8": 0.61},
    "blackwell-dc": {"bf16": 0.71, "fp16": 0.71, "fp8": 0.60},
}


def _prior(base: dict, arch: str, others: list[str]) -> dict:
    """``arch``'s op constants as a GPU of an unmeasured architecture gets them: the mean of the other
    measured architectures' values; its GEMM constants from published matmul figures (calibrate.py)."""
    from calibrate import PUBLISHED_LAUNCH_US, PUBLISHED_MAMF

    from colint.analysis.gemm_model import FORMATS

    upd = {}
    for key in ARCH_OPS:
        vals = [getattr(base[a], key) for a in others]
        if any(v is None for v in vals):  # a kernel only some architectures run (sm80's serial MLA decode):
            upd[key] = None  # an unmeasured architecture is taken to have the split-KV kernel
        elif isinstance(vals[0], dict):
            keys = set().union(*vals)
            upd[key] = {k: sum(v.get(k, v.get("gqa", 0.0)) for v in vals) / len(vals) for k in keys}
        else:
            upd[key] = sum(vals) / len(vals)
    pub = PUBLISHED_MAMF.get(arch, {})
    upd["compute_efficiency"] = {
        f: pub.get(f, pub.get(FORMATS[f][0] if f in FORMATS else f, pub.get("bf16", 0.8)))
        for f in base[arch].compute_efficiency
    }
    upd["kernel_floor_us"] = PUBLISHED_LAUNCH_US
    if arch in PUBLISHED_ATTENTION:
        upd["attention_efficiency"] = PUBLISHED_ATTENTION[arch]
    return upd


def _heldout(data, priors: bool = True, fit_data=None) -> int:
    """Each GPU in turn: the shared constants fitted on the other two GPUs; with ``priors``, its
    architecture's op constants the mean of the other two architectures' and its attention and GEMM
    efficiencies the published figures (``_prior``: what an unmeasured architecture gets); without,
    its architecture's measured constants kept (do the SHARED constants transfer?). The fit runs on
    ``fit_data`` (the full files' fixed subsample, ``subsample``); the held-out GPU is judged on every
    row of ``data``."""
    fit_data = data if fit_data is None else fit_data
    from colint.hardware_profiles import _architectures, load_profile

    base = dict(_architectures())
    gpus = sorted({g for g, _ in data})
    archs = {g: load_profile(GPUS[g]).architecture for g in gpus}
    results = []
    for gpu in gpus:
        arch = archs[gpu]
        others = [archs[g] for g in gpus if g != gpu]
        held = dict(base)
        if priors:
            held[arch] = replace(base[arch], **_prior(base, arch, others))
        shared = fit_shared(fit_data, {gpu}, held)
        print(f"{GPUS[gpu]}: shared constants fitted on the other GPUs: {shared}", file=sys.stderr)
        results += evaluate({k: v for k, v in data.items() if k[0] == gpu}, _with(held, shared))
    print(table(results))
    bad = [r for r in results if not meets(r)]
    print(
        "\nheld out: " + ("all met" if not bad else "missed for " + ", ".join(f"{r['gpu']}/{r['family']}" for r in bad))
    )
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())

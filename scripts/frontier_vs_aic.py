"""colint's aggregated and disaggregated frontiers against aiconfigurator's, at 20, 50 and 100 tokens/s per user.

    .venv/bin/python scripts/frontier_vs_aic.py [--markdown] [--serving aggregated] [--collect DIR]
    .venv/bin/python scripts/frontier_vs_aic.py --serving disaggregated --total-gpus 16 [--collect DIR]

aiconfigurator (NVIDIA, PyPI ``aiconfigurator`` 0.12.0, TensorRT-LLM measured-kernel tables) was run for
H100 SXM, B200 SXM and A100 SXM only, 8 GPUs, ISL 4000 / OSL 500, aggregated serving, its default TTFT
limit of 2,000 ms (the command is in the first lines of tests/data/aic_frontier_isl4000_osl500.csv). Its
frontier points are committed in that file; this script takes their upper envelope, reads it at each level
as colint reads its own (log-log between neighbours, colint.analysis.frontier.throughput_at), prices the same
model on the same GPU with `colint pareto --isl 4000 --osl 500 --ttft-limit 2` and prints colint / aic.

``--ep-overlap auto``: colint with two micro-batches where they pay (its default, off, runs the EP exchange in
series, as aiconfigurator prices TensorRT-LLM).
``--total-gpus 16``: both at two HGX nodes (tests/data/aic_frontier16_isl4000_osl500.csv; H100 and B200).
``--steps``: colint's decode step against aiconfigurator's static TPOT at the same deployment and batch
(tests/data/aic_decode_steps_isl4000_osl500.csv). ``--collect DIR``: rebuild the committed CSVs from aiconfigurator's output folders under DIR (``<run>/**/agg/
pareto.csv``, as ``aiconfigurator cli default --save-dir`` writes them).
``--serving disaggregated``: separate prefill and decode pools on both sides (``--serving-mode disagg``;
tests/data/aic_disagg_isl4000_osl500.csv, H100 and B200 at 8 and 16 GPUs; ``--collect DIR`` reads
``<run>/**/disagg/pareto.csv``). aiconfigurator's ``tokens/s/gpu`` is per GPU of one xPyD replica,
``tokens/s/gpu_cluster`` per GPU of --total-gpus (the whole replicas that fit, the rest idle); ``--per replica``
compares the first, the default ``--per cluster`` the second (colint's disaggregated tokens/s per GPU is over all of
--total-gpus). ``--raw``: against the same runs with aiconfigurator's empirical factors set to 1
(tests/data/aic_disagg_raw_isl4000_osl500.csv; ``--collect DIR --raw`` reads ``<run>/**/raw/pareto.csv``).
"""

from __future__ import annotations

import argparse
import csv
import glob
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
POINTS = os.path.join(ROOT, "tests", "data", "aic_frontier_isl4000_osl500.csv")
# the same runs at --total-gpus 16 (two HGX nodes: aiconfigurator lets one MoE replica span them, a dense one not)
POINTS_16 = os.path.join(ROOT, "tests", "data", "aic_frontier16_isl4000_osl500.csv")
STEPS = os.path.join(ROOT, "tests", "data", "aic_decode_steps_isl4000_osl500.csv")
LEVELS_CSV = os.path.join(ROOT, "tests", "data", "aic_frontier_levels_isl4000_osl500.csv")
DISAGG = os.path.join(ROOT, "tests", "data", "aic_disagg_isl4000_osl500.csv")
# the same runs with aiconfigurator's empirical factors set to 1 (``aiconfigurator cli exp``, RAW_YAML): its kernels'
# prefill and decode steps alone, the physics colint prices
DISAGG_RAW = os.path.join(ROOT, "tests", "data", "aic_disagg_raw_isl4000_osl500.csv")
RAW_YAML = (
    "aiconfigurator cli exp --yaml-path Y --save-dir DIR, Y = {raw: {serving_mode: disagg, "
    "prefill_model_path/decode_model_path: {hf_id}, prefill_system_name/decode_system_name: {system}, "
    "prefill_backend_name/decode_backend_name: trtllm, total_gpus: {total}, isl: 4000, osl: 500, ttft: 2000.0, "
    "tpot: 30.0, prefill_latency_correction: 1.0, decode_latency_correction: 1.0, rate_match_prefill_degradation: "
    "1.0, rate_match_decode_degradation: 1.0, autoscale_ttft_correction_factor: 1.0}}  (aiconfigurator 0.12.0, "
    "aiconfigurator-core 0.12.0, perf DB 1.3.0rc20; its other defaults as in aic_disagg_isl4000_osl500.csv)"
)
ISL, OSL, TTFT_LIMIT_S = 4000, 500, 2.0
LEVELS = (20.0, 50.0, 100.0)
COMMAND = (
    "aiconfigurator cli default --model-path {hf_id} --system {system} --total-gpus {total} --isl 4000 --osl 500 "
    "--serving-mode agg --save-dir DIR  (aiconfigurator 0.12.0, aiconfigurator-core 0.12.0, backend trtllm, "
    "perf DB 1.3.0rc20 on h100_sxm/b200_sxm, 1.0.0 on a100_sxm; default TTFT limit 2000 ms)"
)
DISAGG_COMMAND = (
    "aiconfigurator cli default --model-path {hf_id} --system {system} --total-gpus {total} --isl 4000 --osl 500 "
    "--serving-mode disagg --save-dir DIR  (aiconfigurator 0.12.0, aiconfigurator-core 0.12.0, backend trtllm, "
    "perf DB 1.3.0rc20; its defaults: TTFT limit 2000 ms, TPOT 30 ms (the pareto sweeps TPOT 1-295 ms), prefill "
    "batch 1, replicas of 1, 2, 4, 8 or a multiple of 8 GPUs up to --total-gpus, latency corrections x1.1 prefill and "
    "x1.08 decode, rate-matching degradations 0.9 prefill and 0.92 decode, TTFT x1.8 for queueing)"
)
# (case, aiconfigurator model, colint config, colint --dtype, --kv-cache)
CASES = {
    "llama70b_bf16": (
        "meta-llama/Meta-Llama-3.1-70B",
        "tests/corpus/hf/llama3__Llama-3.3-70B-Instruct.json",
        "bf16",
        "bf16",
    ),
    "llama70b_fp8": (
        "nvidia/Llama-3.1-70B-Instruct-FP8",
        "tests/corpus/hf/llama3__Llama-3.3-70B-Instruct.json",
        "fp8",
        "fp8",
    ),
    "deepseek_r1": ("deepseek-ai/DeepSeek-R1", "tests/corpus/hf/deepseek__DeepSeek-V3.json", "fp8_block", "fp8"),
    "qwen3_235b": ("Qwen/Qwen3-235B-A22B", "tests/corpus/hf/qwen3-moe__Qwen3-235B-A22B.json", "bf16", "bf16"),
}
GPUS = {"h100_sxm": "h100-sxm", "b200_sxm": "b200", "a100_sxm": "a100-sxm-80gb"}
FIELDS = ("case", "system", "parallel", "tp", "dp", "moe_tp", "moe_ep", "bs", "tokens_per_s_per_user",
          "tokens_per_s_per_gpu", "ttft_ms", "tpot_ms", "gemm", "kvcache")  # fmt: skip

DISAGG_FIELDS = ("case", "system", "total_gpus", "prefill_parallel", "prefill_workers", "prefill_bs",
                 "decode_parallel", "decode_workers", "decode_bs", "replica_gpus", "ttft_ms", "tpot_ms",
                 "tokens_per_s_per_user", "tokens_per_s_per_gpu", "tokens_per_s_per_gpu_cluster",
                 "prefill_seq_per_s_per_worker", "decode_seq_per_s_per_worker")  # fmt: skip
# the disaggregated runs: (total GPUs, case, system); aiconfigurator finds no disaggregated deployment for the others
# (Qwen3-235B BF16 and DeepSeek-R1 FP8 need all 8 H100 of a node per instance, DeepSeek-R1 at 16 H100 too)
DISAGG_RUNS = [(t, c, s) for t in (8, 16) for c in ("llama70b_bf16", "qwen3_235b", "deepseek_r1")
               for s in ("h100_sxm", "b200_sxm")]  # fmt: skip


def points_file(total_gpus: int = 8) -> str:
    """The committed aiconfigurator frontier points at ``total_gpus`` (8 or 16)."""
    return {8: POINTS, 16: POINTS_16}[total_gpus]


def collect(folder: str, total_gpus: int = 8) -> None:
    rows = []
    for path in sorted(glob.glob(os.path.join(folder, "*", "**", "agg", "pareto.csv"), recursive=True)):
        run = os.path.relpath(path, folder).split(os.sep)[0]  # <case>_<system>
        case = next(c for c in CASES if run.startswith(c + "_"))
        for r in csv.DictReader(open(path, encoding="utf-8")):
            rows.append(
                {
                    "case": case,
                    "system": r["system"],
                    "parallel": r["parallel"],
                    "tp": r["tp"],
                    "dp": r["dp"],
                    "moe_tp": r["moe_tp"],
                    "moe_ep": r["moe_ep"],
                    "bs": r["bs"],
                    "tokens_per_s_per_user": r["tokens/s/user"],
                    "tokens_per_s_per_gpu": r["tokens/s/gpu"],
                    "ttft_ms": r["ttft"],
                    "tpot_ms": r["tpot"],
                    "gemm": r["gemm"],
                    "kvcache": r["kvcache"],
                }
            )
    command = COMMAND.replace("{total}", str(total_gpus))
    with open(points_file(total_gpus), "w", encoding="utf-8", newline="") as fh:
        fh.write(f"# aiconfigurator aggregated frontier points, one row per point of its agg/pareto.csv: {command}\n")
        fh.write("# models: " + "; ".join(f"{c} = {v[0]}" for c, v in CASES.items()) + "\n")
        w = csv.DictWriter(fh, FIELDS)
        w.writeheader()
        w.writerows(rows)
    if total_gpus != 8:
        return
    with open(LEVELS_CSV, "w", encoding="utf-8", newline="") as fh:
        fh.write(f"# tokens/s per GPU of aiconfigurator's frontier (upper envelope of {os.path.basename(POINTS)}, ")
        fh.write("log-log between neighbours) at each tokens/s per user; empty: out of its reach\n")
        fh.write(f"# {command}\n")
        w = csv.writer(fh)
        w.writerow(("case", "system", "tokens_per_s_per_user", "tokens_per_s_per_gpu"))
        for (case, system), pts in sorted(load_points().items()):
            for u in LEVELS:
                t = at(pts, u)
                w.writerow((case, system, f"{u:g}", "" if t is None else f"{t:.2f}"))


def collect_disagg(folder: str, raw: bool = False) -> None:
    """DISAGG (``raw``: DISAGG_RAW) from ``<folder>/g<total>/<case>_<system>/**/pareto.csv`` (a run with no such
    file: none found)."""
    rows = []
    found = []
    for total, case, system in DISAGG_RUNS:
        paths = glob.glob(os.path.join(folder, f"g{total}", f"{case}_{system}", "**", "pareto.csv"), recursive=True)
        if not paths:
            continue
        found.append((total, case, system))
        with open(paths[0], encoding="utf-8") as fh:
            run_rows = list(csv.DictReader(fh))
        for r in run_rows:
            rows.append(
                {
                    "case": case,
                    "system": system,
                    "total_gpus": total,
                    "prefill_parallel": r["(p)parallel"],
                    "prefill_workers": r["(p)workers"],
                    "prefill_bs": r["(p)bs"],
                    "decode_parallel": r["(d)parallel"],
                    "decode_workers": r["(d)workers"],
                    "decode_bs": r["(d)bs"],
                    "replica_gpus": r["num_total_gpus"],
                    "ttft_ms": r["ttft"],
                    "tpot_ms": r["tpot"],
                    "tokens_per_s_per_user": r["tokens/s/user"],
                    "tokens_per_s_per_gpu": r["tokens/s/gpu"],
                    "tokens_per_s_per_gpu_cluster": f"{float(r['tokens/s/gpu_cluster']):.3f}",
                    "prefill_seq_per_s_per_worker": r["(p)seq/s/worker"],
                    "decode_seq_per_s_per_worker": r["(d)seq/s/worker"],
                }
            )
    missing = [f"{c} on {s} at {t}" for t, c, s in DISAGG_RUNS if (t, c, s) not in found]
    with open(DISAGG_RAW if raw else DISAGG, "w", encoding="utf-8", newline="") as fh:
        what = " with its empirical factors set to 1" if raw else ""
        fh.write(f"# aiconfigurator disaggregated frontier points{what}, one row per point of its pareto.csv: ")
        fh.write(f"{RAW_YAML if raw else DISAGG_COMMAND}\n")
        fh.write(
            "# models: " + "; ".join(f"{c} = {CASES[c][0]}" for c in ("llama70b_bf16", "qwen3_235b", "deepseek_r1"))
        )
        none = "not run (no result with the factors on)" if raw else "no disaggregated result (run, no point found)"
        fh.write(f"; {none}: " + ", ".join(missing) + "\n")
        w = csv.DictWriter(fh, DISAGG_FIELDS)
        w.writeheader()
        w.writerows(rows)


def _rows(path: str) -> list[dict]:
    """The rows of one of the committed CSVs, whose first lines (``#``) say where they came from."""
    with open(path, encoding="utf-8") as fh:
        return list(csv.DictReader(line for line in fh if not line.startswith("#")))


def _by_run(rows, column: str) -> dict[tuple[str, str], list[tuple[float, float]]]:
    """(tok/s/user, ``column``'s tok/s/GPU) of each row, per (case, system)."""
    out: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for r in rows:
        out.setdefault((r["case"], r["system"]), []).append((float(r["tokens_per_s_per_user"]), float(r[column])))
    return out


def load_disagg_points(
    total_gpus: int, per: str = "cluster", raw: bool = False
) -> dict[tuple[str, str], list[tuple[float, float]]]:
    """aiconfigurator's disaggregated points at ``total_gpus`` (``raw``: its empirical factors set to 1):
    (tok/s/user, tok/s/GPU per ``per``: "cluster", over --total-gpus, or "replica", over one xPyD replica's GPUs)
    per (case, system)."""
    column = {"cluster": "tokens_per_s_per_gpu_cluster", "replica": "tokens_per_s_per_gpu"}[per]
    rows = _rows(DISAGG_RAW if raw else DISAGG)
    return _by_run([r for r in rows if int(r["total_gpus"]) == total_gpus], column)


def disagg_runs(total_gpus: int) -> list[tuple[str, str]]:
    """(case, system) of every disaggregated run at ``total_gpus``, with points or not."""
    return [(c, s) for t, c, s in DISAGG_RUNS if t == total_gpus]


def load_points(total_gpus: int = 8) -> dict[tuple[str, str], list[tuple[float, float]]]:
    """aiconfigurator's aggregated points at ``total_gpus`` (8 or 16): (tok/s/user, tok/s/GPU) per (case, system)."""
    return _by_run(_rows(points_file(total_gpus)), "tokens_per_s_per_gpu")


def at(points: list[tuple[float, float]], u: float):
    """tok/s/GPU of the upper envelope of ``points`` (tok/s/user, tok/s/GPU) at ``u`` tok/s/user, read as colint
    reads its own frontier: its non-dominated points (colint.analysis.frontier.pareto), log-log between neighbours,
    the top throughput below the slowest point, None past the fastest (throughput_at)."""
    from types import SimpleNamespace

    from colint.analysis.frontier import pareto, throughput_at

    front = pareto([SimpleNamespace(tokens_per_s_per_user=x, tokens_per_s_per_gpu=y) for x, y in points])
    return throughput_at(front, u)


def colint_frontier(case: str, system: str, serving: str, ep_overlap: str | None = None, total_gpus: int = 8):
    from colint.analysis.frontier import frontier
    from colint.analysis.scenario import make_scenario
    from colint.analysis.serving import Serving
    from colint.hardware_profiles import load_profile
    from colint.design.pareto import load_design

    _hf, path, dtype, kv = CASES[case]
    profile = load_profile(GPUS[system])
    spec = load_design(os.path.join(ROOT, path))
    sc = make_scenario(
        "throughput", gpu=profile.name, dtype=dtype, kv_cache=kv, context=ISL + OSL, ep_overlap=ep_overlap
    )
    sv = Serving(serving, ISL, OSL, total_gpus=total_gpus, ttft_limit_s=TTFT_LIMIT_S if serving != "decode" else None)
    return frontier(spec, profile, sc, path, serving=sv)


def load_steps(path: str = STEPS) -> list[dict]:
    """The committed decode-step grid: one dict per row (model, system, tp, attention_dp, moe_tp, moe_ep, batch as
    ints, tpot_ms as a float, oom a bool: aiconfigurator reports that the point does not fit in memory)."""
    rows = _rows(path)
    for r in rows:
        for k in ("tp", "attention_dp", "moe_tp", "moe_ep", "batch"):
            r[k] = int(r[k])
        r["tpot_ms"] = float(r["tpot_ms"])
        r["oom"] = r.get("oom") == "1"
    return rows


def deployment_of(tp: int, attention_dp: int, moe_tp: int, moe_ep: int):
    """colint's Deployment for aiconfigurator's (tp, attention DP, moe_tp, moe_ep): experts over moe_tp x moe_ep
    GPUs (= tp x attention DP); ep = 1 where every expert is split over the attention group (moe_ep 1, no DP)."""
    from colint.analysis.frontier import Deployment

    if moe_ep == 1 and attention_dp == 1:
        return Deployment(tp)
    return Deployment(tp, moe_tp * moe_ep, 1, moe_tp)


def step_ratios(rows: list[dict]) -> list[tuple[dict, str, float, float]]:
    """(row, colint's deployment label, colint's decode ITL in ms, aic TPOT / colint ITL) per row of the grid:
    colint's decode step at the row's deployment and batch (sequences per attention group), at the mean context
    of a request's decode (ISL + OSL / 2)."""
    from colint.analysis.frontier import scenario_for
    from colint.analysis.scenario import make_scenario
    from colint.analysis.workload import analyse
    from colint.hardware_profiles import load_profile
    from colint.design.pareto import load_design

    by_hf = {v[0]: v for v in CASES.values()}
    specs: dict = {}
    out = []
    for r in rows:
        _hf, path, dtype, kv = by_hf[r["model"]]
        profile = load_profile(GPUS[r["system"]])
        spec = specs.setdefault(path, load_design(os.path.join(ROOT, path)))
        sc = make_scenario("throughput", gpu=profile.name, dtype=dtype, kv_cache=kv, context=ISL + OSL // 2)
        d = deployment_of(r["tp"], r["attention_dp"], r["moe_tp"], r["moe_ep"])
        itl = analyse(spec, profile, scenario_for(sc, d, r["batch"])).steps["decode"].estimate_s * 1e3
        out.append((r, d.label(), itl, r["tpot_ms"] / itl))
    return out


def within(ratios, tolerance: float = 1.25) -> int:
    """How many ratios lie within ``tolerance``x either way."""
    return sum(1 for x in ratios if 1 / tolerance <= x <= tolerance)


def steps() -> None:
    """colint's decode step against aiconfigurator's static TPOT at the same deployment and batch (STEPS), at the
    mean context of a request's decode (ISL + OSL / 2), and how many are within 1.25x per model and GPU: of all
    points, and of those aiconfigurator's memory model says fit."""
    res = step_ratios(load_steps())
    print(
        "model                             GPU       deployment                 batch  aic TPOT  colint ITL  aic/colint"
    )
    for r, label, itl, ratio in res:
        miss = "" if within([ratio]) else "  miss"
        oom = "  (aic: does not fit)" if r["oom"] else ""
        print(
            f"{r['model']:33s} {r['system']:9s} {label:26s} {r['batch']:>5d} {r['tpot_ms']:8.2f}  {itl:10.2f}  "
            f"{ratio:10.2f}{miss}{oom}"
        )
    print("\nwithin 1.25x: of all points; of those aiconfigurator says fit")
    groups: dict = {}
    for r, _label, _itl, ratio in res:
        groups.setdefault((r["model"], r["system"]), []).append((ratio, r["oom"]))
    groups[("all", "")] = [(x[3], x[0]["oom"]) for x in res]
    for (model, system), got in groups.items():
        fit = [x for x, oom in got if not oom]
        every = [x for x, _ in got]
        print(f"{model:33s} {system:9s} {within(every)} of {len(every)}; {within(fit)} of {len(fit)} that fit")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--markdown", action="store_true", help="print the docs/serving.md table")
    ap.add_argument("--serving", default="aggregated", choices=("aggregated", "decode", "disaggregated"))
    ap.add_argument(
        "--per",
        default="cluster",
        choices=("cluster", "replica"),
        help="disaggregated: aiconfigurator's tokens/s per GPU of --total-gpus (cluster) or of one xPyD replica",
    )
    ap.add_argument("--raw", action="store_true", help="disaggregated: aiconfigurator with its empirical factors at 1")
    ap.add_argument("--collect", metavar="DIR", help="rebuild the committed CSVs from aiconfigurator's output")
    ap.add_argument("--steps", action="store_true", help="decode steps at the same deployment and batch instead")
    ap.add_argument(
        "--total-gpus", type=int, default=8, choices=(8, 16), help="the GPUs both frontiers may use (16: two HGX nodes)"
    )
    ap.add_argument(
        "--ep-overlap",
        default=None,
        choices=("auto", "on", "off"),
        help="colint's EP exchange overlap (default: colint's, off: in series, as aiconfigurator prices TensorRT-LLM)",
    )
    args = ap.parse_args()
    if args.steps:
        steps()
        return 0
    if args.collect and args.serving == "disaggregated":
        collect_disagg(args.collect, args.raw)
        print(f"wrote {DISAGG_RAW if args.raw else DISAGG}")
        return 0
    if args.collect:
        collect(args.collect, args.total_gpus)
        print(f"wrote {points_file(args.total_gpus)}" + (f" and {LEVELS_CSV}" if args.total_gpus == 8 else ""))
        return 0
    ratios = []
    rows = []
    if args.serving == "disaggregated":
        found = load_disagg_points(args.total_gpus, args.per, args.raw)
        runs = [(k, found.get(k, [])) for k in sorted(disagg_runs(args.total_gpus))]
    else:
        runs = sorted(load_points(args.total_gpus).items())
    for (case, system), pts in runs:
        f = colint_frontier(case, system, args.serving, args.ep_overlap, args.total_gpus)
        cells = []
        for u in LEVELS:
            a, c = at(pts, u), f.throughput_at(u)
            r = c / a if a and c else None
            if r:
                ratios.append(r)
            cells.append((a, c, r))
        best = f.frontier[0].deployment.label() if f.frontier else "-"
        rows.append((case, system, cells, best))
    if args.markdown:
        print("| model | GPU | " + " | ".join(f"{u:g} tok/s/user: aic · colint (ratio)" for u in LEVELS) + " |")
        print("|---|---|" + "---|" * len(LEVELS))
    for case, system, cells, _best in rows:
        txt = []
        for a, c, r in cells:
            fa = f"{a:,.0f}" if a else "out of reach"
            fc = f"{c:,.0f}" if c else "out of reach"
            txt.append(f"{fa} · {fc} ({r:.2f}x)" if r else f"{fa} · {fc}")
        if args.markdown:
            print(f"| {case} | {system} | " + " | ".join(txt) + " |")
        else:
            print(f"{case:14s} {system:9s} " + "  ".join(f"{t:>26s}" for t in txt))
    if ratios:
        within = sum(1 for r in ratios if 1 / 1.25 <= r <= 1.25)
        print(
            f"\n{within} of {len(ratios)} points within 1.25x (both reach {len(ratios)} of {len(rows) * len(LEVELS)})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

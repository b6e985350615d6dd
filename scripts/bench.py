"""colint's speed budget (issue 7, docs/design.md §8), measured the way a commit hook runs it.

    .venv/bin/python scripts/bench.py [--runs N] [--config PATH]

Prints, as medians of N runs (N >= 7) of fresh processes through the venv's ``colint`` console
script and interpreter, with PYTHONDONTWRITEBYTECODE unset and the .pyc files warm:

* ``colint check`` on one HF config against ``python -c "import pydantic, click, ruamel.yaml"``
  (the import-only baseline; runs are interleaved so host load hits both alike);
* one ``colint check`` call over 1,000 HF configs (copies of tests/corpus/hf in a temp dir);
* the core analysis per config, in-process: normalize + analyse + rules, excluding load;
* peak memory (max RSS of the child, from resource.getrusage(RUSAGE_CHILDREN));
* the top ``-X importtime`` offenders of ``colint check`` and any heavy module it imports;
* ``colint pareto`` (issue 14): the full deployment x concurrency enumeration of a dense 70B
  (examples/llama-3.3-70b.json) and a 1T-parameter MoE (examples/kimi-k2.json) on one GPU type,
  as fresh processes and in-process (``--pareto-only`` runs just this part).
* ``--bulk-only``: just the one-call figures (copies, distinct variants, the large-MoE mix without and with
  deployment flags).
* ``--against DIR``: an A/B of the flagged mix, this tree against another checkout (``git worktree add DIR REV``),
  interleaved, with worker processes and in one process. (Setting PYTHONPATH to the other checkout does not do
  it: the venv's editable install of this tree is found first.)

Targets on a 2-core machine: check within 1.4x of the baseline, 1,000 configs under 3 s, a
few milliseconds of analysis per config. The script reports; it asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HF_CORPUS = os.path.join(ROOT, "tests", "corpus", "hf")
DEFAULT_CONFIG = os.path.join(HF_CORPUS, "llama3__Meta-Llama-3.1-8B.json")
BASELINE_CODE = "import pydantic, click, ruamel.yaml"
# A model repository's settings, validated on every run (colint.engine.config_files, without pydantic)
PROJECT_SETTINGS = (
    '[tool.colint]\ngpus = ["b200", "h100-sxm"]\ntp = 8\nextend-select = ["CL2"]\n'
    'fail-on = "error"\n[tool.colint.severity]\nCL201 = "error"\n'
)
HEAVY = ("transformers", "torch", "numpy", "matplotlib", "rich", "scipy", "pandas", "huggingface_hub")
TARGET_RATIO, TARGET_1000_S, TARGET_ANALYSIS_MS = 1.4, 3.0, 5.0  # issue 32: start-up <= 1.4x, with a margin
PARETO_MODELS = (os.path.join("examples", "llama-3.3-70b.json"), os.path.join("examples", "kimi-k2.json"))
PARETO_GPU, TARGET_PARETO_S = "gb200", 2.0


def _venv_bin() -> str:
    here = os.path.dirname(sys.executable)
    if os.path.exists(os.path.join(here, "colint")):
        return here
    return os.path.join(ROOT, ".venv", "bin")


BIN = _venv_bin()
PYTHON, COLINT = os.path.join(BIN, "python"), os.path.join(BIN, "colint")


def _env() -> dict:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # the shell sets it; a user's machine has .pyc files
    env.pop("PYTHONPYCACHEPREFIX", None)
    env["NO_COLOR"] = "1"
    return env


ENV = _env()


def _timed(cmd: list[str]) -> tuple[float, float]:
    """(wall s, CPU s) of one fresh process; CPU (user + sys of the child) suffers less from a busy host."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV, cwd=ROOT)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)


def _wall(cmd: list[str]) -> float:
    return _timed(cmd)[0]


def _peak_rss_mb(cmd: list[str]) -> float:
    """Max RSS of ``cmd`` alone: a wrapper process waits for it and reads RUSAGE_CHILDREN."""
    code = (
        "import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, "
        "stderr=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    out = subprocess.run([PYTHON, "-c", code, *cmd], capture_output=True, text=True, env=ENV, cwd=ROOT)
    return int(out.stdout.strip()) / 1024  # Linux reports KiB


def _interleaved(cmds: dict[str, list[str]], runs: int) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    walls: dict[str, list[float]] = {k: [] for k in cmds}
    cpus: dict[str, list[float]] = {k: [] for k in cmds}
    for _ in range(runs):
        for name, cmd in cmds.items():
            w, c = _timed(cmd)
            walls[name].append(w)
            cpus[name].append(c)
    return walls, cpus


def _ms(s: float) -> str:
    return f"{s * 1e3:,.0f} ms"


def _spread(xs: list[float]) -> str:
    q = statistics.quantiles(xs, n=4) if len(xs) >= 4 else [min(xs), 0, max(xs)]
    return f"(IQR {q[0] * 1e3:,.0f}-{q[2] * 1e3:,.0f} ms)"


def _verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def _make_corpus(n: int, dest: str) -> list[str]:
    sources = sorted(f for f in os.listdir(HF_CORPUS) if f.endswith(".json"))
    paths = []
    for i in range(n):
        src = sources[i % len(sources)]
        p = os.path.join(dest, f"{i:04d}-{src}")
        shutil.copyfile(os.path.join(HF_CORPUS, src), p)
        paths.append(p)
    return paths


_WIDTH_KEYS = ("intermediate_size", "moe_intermediate_size", "ffn_hidden_size", "n_inner", "ffn_dim")


# Large MoE/MLA configs (issue 13 item 4): DeepSeek-, Kimi-, Qwen3.5-397B-, Qwen3-Coder-480B-, MiniMax-like
LARGE_MOE = tuple(
    os.path.join(HF_CORPUS, f)
    for f in (
        "deepseek__DeepSeek-V3.json",
        "qwen3.5-moe__Qwen3.5-397B-A17B.json",
        "qwen3-moe__Qwen3-Coder-480B-A35B-Instruct.json",
        "minimax__MiniMax-M2.5.json",
    )
) + (os.path.join(ROOT, "examples", "kimi-k2.json"),)


# the deployment flags of the flagged mix (issue 32 item 8): expert parallelism over one HGX node of B200s
MIX_FLAGS = ("--gpu", "b200", "--ep", "8")


def _write_variant(src: str, bump: int, dest: str) -> str:
    """``src`` with every FFN width it states (top level or in a wrapper's text_config) raised by
    ``bump``, else its vocab by that much, written to ``dest``."""
    import json

    with open(src, encoding="utf-8") as fh:
        data = json.loads(fh.read(), parse_constant=float)
    changed = False
    for table in (data, data.get("text_config") or {}, data.get("llm_config") or {}):
        for key in _WIDTH_KEYS:
            if isinstance(table.get(key), int) and table[key] > 0:
                table[key] += bump
                changed = True
    if not changed and isinstance(data.get("vocab_size"), int):
        data["vocab_size"] += bump
    with open(dest, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2)
    return dest


def _make_variants(n: int, dest: str) -> list[str]:
    """``n`` distinct configs: corpus file ``i % 45`` with its FFN widths (else vocab) raised by
    64 * (i // 45 + 1), so that repeats of a file do not hit colint's memoized GEMM estimates."""
    sources = sorted(f for f in os.listdir(HF_CORPUS) if f.endswith(".json"))
    return [
        _write_variant(os.path.join(HF_CORPUS, src), 64 * (i // len(sources) + 1), os.path.join(dest, f"{i:04d}-{src}"))
        for i, src in ((i, sources[i % len(sources)]) for i in range(n))
    ]


def _make_moe_mix(n: int, dest: str) -> list[str]:
    """``n`` distinct configs, every third one a variant of a large MoE/MLA config (LARGE_MOE, in turn),
    the others variants of the corpus files; each file's widths raised by a different multiple of 64."""
    sources = [os.path.join(HF_CORPUS, f) for f in sorted(os.listdir(HF_CORPUS)) if f.endswith(".json")]
    paths = []
    for i in range(n):
        pool = LARGE_MOE if i % 3 == 0 else sources
        k = i // 3 if i % 3 == 0 else i - i // 3 - 1
        src = pool[k % len(pool)]
        paths.append(
            _write_variant(src, 64 * (k // len(pool) + 1), os.path.join(dest, f"{i:04d}-{os.path.basename(src)}"))
        )
    return paths


def _analysis_ms(repeats: int) -> dict:
    """Per corpus config, the median of (a) load and (b) normalize + analyse + rules; then the
    median, mean and slowest over the configs (the mean is what 1,000 configs pay)."""
    sys.path.insert(0, ROOT)
    from colint.engine.checking import build_targets, check_spec
    from colint.engine.settings import Settings
    from colint.loading import load
    from colint.rules import select_rules
    from colint.normalize import normalize

    opts = Settings()
    rules = select_rules(opts.select, opts.ignore, opts.extend_select)
    targets = build_targets(opts)
    per_config, loads = {}, []
    for name in sorted(os.listdir(HF_CORPUS)):
        if not name.endswith(".json"):
            continue
        path = os.path.join(HF_CORPUS, name)
        doc = load(path)
        check_spec(normalize(doc), targets, opts, rules)  # warm caches and lazy imports
        ts, ls = [], []
        for _ in range(repeats):
            t0 = time.perf_counter()
            load(path)
            t1 = time.perf_counter()
            check_spec(normalize(doc), targets, opts, rules)
            ts.append(time.perf_counter() - t1)
            ls.append(t1 - t0)
        per_config[name] = statistics.median(ts) * 1e3
        loads.append(statistics.median(ls) * 1e3)
    worst = max(per_config, key=per_config.get)
    values = list(per_config.values())
    return {
        "median": statistics.median(values),
        "mean": statistics.fmean(values),
        "max": per_config[worst],
        "worst": worst,
        "n": len(values),
        "load_median": statistics.median(loads),
        "load_mean": statistics.fmean(loads),
    }


def _importtime(config: str) -> tuple[list[tuple[int, int, str]], set[str]]:
    out = subprocess.run(
        [PYTHON, "-X", "importtime", "-m", "colint", "check", config], capture_output=True, text=True, env=ENV, cwd=ROOT
    )
    rows = []
    for line in out.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cum_us, name = line[len("import time:") :].split("|")
        rows.append((int(self_us), int(cum_us), name.rstrip()))
    return rows, {r[2].strip().split(".")[0] for r in rows}


def _pareto(runs: int) -> None:
    """`colint pareto` on a dense 70B and a 1T MoE on one GPU type: fresh processes (start-up and
    imports included) and the enumeration alone, in-process."""
    sys.path.insert(0, ROOT)
    from colint.analysis.frontier import frontier
    from colint.analysis.scenario import make_scenario
    from colint.hardware_profiles import load_profile
    from colint.design.pareto import load_design

    cmds = {m: [COLINT, "pareto", m, "--gpu", PARETO_GPU] for m in PARETO_MODELS}
    cmds["both"] = [COLINT, "pareto", PARETO_MODELS[0], "--gpu", PARETO_GPU, "--compare", PARETO_MODELS[1]]
    for cmd in cmds.values():
        _wall(cmd)
    walls, cpus = _interleaved(cmds, runs)
    profile = load_profile(PARETO_GPU)
    sc = make_scenario("throughput", gpu=profile.name)
    print(f"colint pareto on {PARETO_GPU} (full enumeration; target: both models <= {TARGET_PARETO_S:g} s)")
    total = 0.0
    for m in PARETO_MODELS:
        spec = load_design(os.path.join(ROOT, m))
        frontier(spec, profile, sc)  # warm lazy imports
        ts, f = [], None
        for _ in range(runs):
            t0 = time.perf_counter()
            f = frontier(spec, profile, sc)
            ts.append(time.perf_counter() - t0)
        total += statistics.median(ts)
        print(
            f"  {m:<30} {len(f.deployments)} deployments, {len(f.points) + f.dropped:,} points "
            f"({f.dropped:,} do not fit), {len(f.frontier)} on the frontier: in-process median "
            f"{_ms(statistics.median(ts))}; fresh `colint pareto` wall {_ms(statistics.median(walls[m]))} "
            f"{_spread(walls[m])}, CPU {_ms(statistics.median(cpus[m]))}"
        )
    both = statistics.median(walls["both"])
    print(
        f"  both in one call (--compare): wall {_ms(both)} {_spread(walls['both'])}, CPU "
        f"{_ms(statistics.median(cpus['both']))}; in-process sum {_ms(total)}: "
        f"{_verdict(both <= TARGET_PARETO_S)}"
    )


def _bulk(many: int, runs: int) -> list[str]:
    """The one-call figures over ``many`` configs: copies, distinct variants, and the large-MoE mix (without and
    with MIX_FLAGS).
    Returns the copies' command (its files stay for the peak-memory figure)."""
    tmp_copies = tempfile.mkdtemp(prefix="colint-bench-")
    many_cmd = [COLINT, "check", *_make_corpus(many, tmp_copies)]
    _wall(many_cmd)
    copies = [_timed(many_cmd) for _ in range(runs)]
    with tempfile.TemporaryDirectory(prefix="colint-bench-variants-") as tmp:
        variants_cmd = [COLINT, "check", *_make_variants(many, tmp)]
        _wall(variants_cmd)
        variants = [_timed(variants_cmd) for _ in range(runs)]
    with tempfile.TemporaryDirectory(prefix="colint-bench-moe-") as tmp:
        moe_cmd = [COLINT, "check", *_make_moe_mix(many, tmp)]
        _wall(moe_cmd)
        moe = [_timed(moe_cmd) for _ in range(runs)]
        # issue 32's figure: the same mix with deployment flags, as a repository of large MoE models sets them
        flagged_cmd = [*moe_cmd[:2], *MIX_FLAGS, *moe_cmd[2:]]
        _wall(flagged_cmd)
        flagged = [_timed(flagged_cmd) for _ in range(runs)]
    n_src = len([f for f in os.listdir(HF_CORPUS) if f.endswith(".json")])
    print(
        f"{many:,} HF configs in one `colint check` call, start-up included (target for 1,000: < "
        f"{TARGET_1000_S:.0f} s{'' if many == 1000 else ', scaled'}; load average {os.getloadavg()[0]:.1f})"
    )
    for label, timed in (
        (f"copies of the {n_src} tests/corpus/hf files", copies),
        ("distinct variants of them (FFN widths changed)", variants),
        ("distinct, a third large MoE/MLA (DeepSeek-V3, Kimi-K2, Qwen3.5-397B, ...)", moe),
        (f"the same mix with deployment flags ({' '.join(MIX_FLAGS)})", flagged),
    ):
        xs = [w for w, _ in timed]
        q = statistics.quantiles(xs, n=4)
        med_s = statistics.median(xs)
        cpu_s = statistics.median(c for _, c in timed)  # user + sys of the run and its worker processes
        print(
            f"  {label}\n    wall {med_s:.2f} s (IQR {q[0]:.2f}-{q[2]:.2f} s) = {med_s / many * 1e3:.2f} ms "
            f"per config, CPU {cpu_s:.2f} s: {_verdict(med_s * 1000 / many < TARGET_1000_S)}"
        )
    return many_cmd


# runs colint from the checkout named by its first argument, whatever the venv installed (an editable install's
# finder, ahead of sys.path, would otherwise load this tree's colint for both sides of an A/B)
TREE_RUNNER = (
    "import sys; sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in repr(f).lower()]; "
    "sys.path.insert(0, sys.argv.pop(1)); sys.argv[0] = 'colint'; from colint.__main__ import run; run()"
)


def _against(other: str, many: int, runs: int) -> None:
    """This tree against the checkout ``other`` (e.g. ``git worktree add /tmp/base HEAD~3``): the flagged
    large-MoE mix, one call each, interleaved, as users run it (worker processes) and in one process
    (COLINT_JOBS=1: CPU time less disturbed by the host); medians, best and the ratio this / other."""
    other = os.path.abspath(other)
    if not os.path.isfile(os.path.join(other, "colint", "__main__.py")):
        raise SystemExit(f"bench: {other} holds no colint checkout")
    for root in (ROOT, other):
        subprocess.run([PYTHON, "-m", "compileall", "-q", os.path.join(root, "colint")], env=ENV, check=True)
    with tempfile.TemporaryDirectory(prefix="colint-bench-ab-") as tmp:
        files = _make_moe_mix(many, tmp)
        for label, jobs in (("worker processes", None), ("one process (COLINT_JOBS=1)", "1")):
            cmds = {
                side: ["env", *([f"COLINT_JOBS={jobs}"] if jobs else []), PYTHON, "-c", TREE_RUNNER, root, "check",
                       *MIX_FLAGS, *files]
                for side, root in (("this tree", ROOT), ("other", other))
            }  # fmt: skip
            for cmd in cmds.values():
                _wall(cmd)
            t, cpu = _interleaved(cmds, runs)
            print(f"{many:,}-config large-MoE mix with {' '.join(MIX_FLAGS)}, {label}, {runs} interleaved runs each:")
            for side in cmds:
                print(
                    f"  {side:<10} wall {statistics.median(t[side]):.2f} s (best {min(t[side]):.2f}), "
                    f"CPU {statistics.median(cpu[side]):.2f} s (best {min(cpu[side]):.2f})"
                )
            print(
                f"  this / other: wall {statistics.median(t['this tree']) / statistics.median(t['other']):.3f}, "
                f"CPU {statistics.median(cpu['this tree']) / statistics.median(cpu['other']):.3f} (medians); "
                f"best CPU {min(cpu['this tree']) / min(cpu['other']):.3f}"
            )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=9, help="fresh-process runs per figure (>= 7)")
    ap.add_argument("--config", default=DEFAULT_CONFIG, help="the one HF config for the start-up figure")
    ap.add_argument("--many", type=int, default=1000, help="configs in the one-call figure")
    ap.add_argument("--pareto-only", action="store_true", help="only the `colint pareto` figures")
    ap.add_argument("--bulk-only", action="store_true", help="only the one-call figures over --many configs")
    ap.add_argument("--against", metavar="DIR", help="only an A/B of the flagged mix: this tree against checkout DIR")
    args = ap.parse_args()
    runs = max(7, args.runs)
    if args.against:
        _against(args.against, args.many, runs)
        return 0
    if args.pareto_only:
        subprocess.run([PYTHON, "-m", "compileall", "-q", os.path.join(ROOT, "colint")], env=ENV, check=True)
        print(f"machine: {os.cpu_count()} CPUs shared with the team, load average {os.getloadavg()[0]:.1f} at start")
        _pareto(runs)
        return 0
    if args.bulk_only:
        subprocess.run([PYTHON, "-m", "compileall", "-q", os.path.join(ROOT, "colint")], env=ENV, check=True)
        shutil.rmtree(os.path.dirname(_bulk(args.many, runs)[-1]), ignore_errors=True)
        return 0
    config = os.path.relpath(os.path.abspath(args.config), ROOT)

    # warm: compile the package's .pyc (the shell's PYTHONDONTWRITEBYTECODE would prevent it), page cache
    subprocess.run([PYTHON, "-m", "compileall", "-q", os.path.join(ROOT, "colint")], env=ENV, check=True)
    for cmd in ([PYTHON, "-c", BASELINE_CODE], [COLINT, "check", config], [COLINT, "inspect", config]):
        _wall(cmd)

    cpus = os.cpu_count()
    load1 = os.getloadavg()[0]
    print(
        f"colint benchmark: medians of {runs} fresh processes each ({max(21, runs)} for start-up), .pyc warm, "
        "PYTHONDONTWRITEBYTECODE unset"
    )
    print(
        f"machine: {cpus} CPUs, {platform.python_implementation()} {platform.python_version()}, "
        f"load average {load1:.1f} at start; interpreter {os.path.relpath(PYTHON, ROOT)}"
    )
    print()

    project = tempfile.mkdtemp(prefix="colint-bench-project-")
    with open(os.path.join(project, "pyproject.toml"), "w") as fh:
        fh.write(PROJECT_SETTINGS)
    in_project = shutil.copy(os.path.join(ROOT, config), project)
    cmds = {
        "python": [PYTHON, "-c", "pass"],
        "baseline": [PYTHON, "-c", BASELINE_CODE],
        "check": [COLINT, "check", config],
        "check_project": [COLINT, "check", in_project],
        "inspect": [COLINT, "inspect", config],
        "check_cl0": [COLINT, "check", "--select", "CL0", config],
    }
    # start-up runs are short and the host noisy (9 runs put the same build at 1.37x and 1.56x): at least 21
    t, cpu = _interleaved(cmds, max(21, runs))
    shutil.rmtree(project, ignore_errors=True)
    med = {k: statistics.median(v) for k, v in t.items()}
    cmed = {k: statistics.median(v) for k, v in cpu.items()}
    ratio = med["check"] / med["baseline"]
    labels = {
        "python": "python -c pass",
        "baseline": f'baseline: python -c "{BASELINE_CODE}"',
        "check": "colint check",
        "check_project": "colint check, [tool.colint] with 2 GPUs and tp=8",
        "check_cl0": "colint check --select CL0 (no GPU analysis)",
        "inspect": "colint inspect",
    }
    print(
        "start-up, one config (" + os.path.basename(config) + "): wall median (IQR) | CPU median, ratio to the baseline"
    )
    for k, label in labels.items():
        print(
            f"  {label:<55} {_ms(med[k]):>8} {_spread(t[k]):<18} | CPU {_ms(cmed[k]):>7}  "
            f"wall {med[k] / med['baseline']:.2f}x, CPU {cmed[k] / cmed['baseline']:.2f}x"
        )
    print(
        f"  target: colint check within {TARGET_RATIO}x of the baseline: {_verdict(ratio <= TARGET_RATIO)} "
        f"({ratio:.2f}x wall, {cmed['check'] / cmed['baseline']:.2f}x CPU)"
    )
    print()

    many_cmd = _bulk(args.many, runs)
    rss = {
        "baseline": _peak_rss_mb(cmds["baseline"]),
        "check": _peak_rss_mb(cmds["check"]),
        "many": _peak_rss_mb(many_cmd),
    }
    shutil.rmtree(os.path.dirname(many_cmd[-1]), ignore_errors=True)
    print()

    a = _analysis_ms(repeats=max(7, runs))
    print("core analysis per config, in-process (normalize + analyse + rules on b200, load excluded)")
    print(
        f"  over the {a['n']} corpus configs: median {a['median']:.2f} ms, mean {a['mean']:.2f} ms, slowest "
        f"{a['max']:.2f} ms ({a['worst']}) (target: a few ms: {_verdict(a['median'] <= TARGET_ANALYSIS_MS)})"
    )
    print(
        f"  load (read + parse + key positions), not included above: median {a['load_median']:.2f} ms, "
        f"mean {a['load_mean']:.2f} ms"
    )
    print()

    print("peak memory (max RSS of the process)")
    print(
        f"  baseline {rss['baseline']:.0f} MiB, colint check one config {rss['check']:.0f} MiB, "
        f"{args.many:,} configs {rss['many']:.0f} MiB"
    )
    print()

    rows, top_level = _importtime(config)
    print("python -X importtime -m colint check (one run; microseconds):")
    print("  top self times:")
    for self_us, cum_us, name in sorted(rows, reverse=True)[:12]:
        print(f"    {self_us:>7,} self {cum_us:>8,} cumulative  {name.strip()}")
    roots = [r for r in rows if not r[2].startswith("  ")]
    print(f"  top-level imports, cumulative (total {sum(r[1] for r in roots) / 1e3:,.0f} ms):")
    for _self_us, cum_us, name in sorted(roots, key=lambda r: -r[1])[:8]:
        print(f"    {cum_us:>8,}  {name.strip()}")
    pydantic = sorted(top_level & {"pydantic", "pydantic_core", "annotated_types"})
    print(
        f"  pydantic on the check path: {', '.join(pydantic) if pydantic else 'not imported'} (colint's value "
        "types are stdlib dataclasses; pydantic validates untrusted input only, a user's --gpu YAML)"
    )
    heavy = sorted(set(HEAVY) & top_level)
    print(
        f"  heavy modules on the check path: {', '.join(heavy) if heavy else 'none'} (looked for: {', '.join(HEAVY)})"
    )
    print()
    _pareto(runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())

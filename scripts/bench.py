"""colint's speed budget (issue 7, DESIGN.md §8), measured the way a commit hook runs it.

    .venv/bin/python scripts/bench.py [--runs N] [--config PATH]

Prints, as medians of N runs (N >= 7) of fresh processes through the venv's ``colint`` console
script and interpreter, with PYTHONDONTWRITEBYTECODE unset and the .pyc files warm:

* ``colint check`` on one HF config against ``python -c "import pydantic, click, ruamel.yaml"``
  (the import-only baseline; runs are interleaved so host load hits both alike);
* one ``colint check`` call over 1,000 HF configs (copies of tests/corpus/hf in a temp dir);
* the core analysis per config, in-process: normalize + analyse + rules, excluding load;
* peak memory (max RSS of the child, from resource.getrusage(RUSAGE_CHILDREN));
* the top ``-X importtime`` offenders of ``colint check`` and any heavy module it imports.

Targets on a 2-core machine: check within 1.5x of the baseline, 1,000 configs under 3 s, a
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
HEAVY = ("transformers", "torch", "numpy", "matplotlib", "rich", "scipy", "pandas", "huggingface_hub")
TARGET_RATIO, TARGET_1000_S, TARGET_ANALYSIS_MS = 1.5, 3.0, 5.0


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


def _wall(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV, cwd=ROOT)
    return time.perf_counter() - t0


def _peak_rss_mb(cmd: list[str]) -> float:
    """Max RSS of ``cmd`` alone: a wrapper process waits for it and reads RUSAGE_CHILDREN."""
    code = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, "
            "stderr=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([PYTHON, "-c", code, *cmd], capture_output=True, text=True, env=ENV, cwd=ROOT)
    return int(out.stdout.strip()) / 1024  # Linux reports KiB


def _interleaved(cmds: dict[str, list[str]], runs: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {k: [] for k in cmds}
    for _ in range(runs):
        for name, cmd in cmds.items():
            times[name].append(_wall(cmd))
    return times


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


def _analysis_ms(repeats: int) -> tuple[float, float, str, int]:
    """Median over corpus configs of the per-config median of normalize + analyse + rules."""
    sys.path.insert(0, ROOT)
    from colint.checking import CheckOptions, build_targets, check_spec
    from colint.loading import load
    from colint.rules import select_rules
    from colint.spec import normalize

    opts = CheckOptions()
    rules = select_rules(opts.select, opts.ignore, opts.extend_select)
    targets = build_targets(opts)
    per_config = {}
    for name in sorted(os.listdir(HF_CORPUS)):
        if not name.endswith(".json"):
            continue
        doc = load(os.path.join(HF_CORPUS, name))
        check_spec(normalize(doc), targets, opts, rules)  # warm caches and lazy imports
        ts = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            check_spec(normalize(doc), targets, opts, rules)
            ts.append(time.perf_counter() - t0)
        per_config[name] = statistics.median(ts)
    worst = max(per_config, key=per_config.get)
    return (statistics.median(per_config.values()) * 1e3, per_config[worst] * 1e3, worst, len(per_config))


def _importtime(config: str) -> tuple[list[tuple[int, int, str]], set[str]]:
    out = subprocess.run([PYTHON, "-X", "importtime", "-m", "colint", "check", config], capture_output=True,
                         text=True, env=ENV, cwd=ROOT)
    rows = []
    for line in out.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cum_us, name = line[len("import time:"):].split("|")
        rows.append((int(self_us), int(cum_us), name.rstrip()))
    return rows, {r[2].strip().split(".")[0] for r in rows}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=9, help="fresh-process runs per figure (>= 7)")
    ap.add_argument("--config", default=DEFAULT_CONFIG, help="the one HF config for the start-up figure")
    ap.add_argument("--many", type=int, default=1000, help="configs in the one-call figure")
    args = ap.parse_args()
    runs = max(7, args.runs)
    config = os.path.relpath(os.path.abspath(args.config), ROOT)

    # warm: compile the package's .pyc (the shell's PYTHONDONTWRITEBYTECODE would prevent it), page cache
    subprocess.run([PYTHON, "-m", "compileall", "-q", os.path.join(ROOT, "colint")], env=ENV, check=True)
    for cmd in ([PYTHON, "-c", BASELINE_CODE], [COLINT, "check", config], [COLINT, "inspect", config]):
        _wall(cmd)

    cpus = os.cpu_count()
    load1 = os.getloadavg()[0]
    print(f"colint benchmark: medians of {runs} fresh processes each, .pyc warm, PYTHONDONTWRITEBYTECODE unset")
    print(f"machine: {cpus} CPUs, {platform.python_implementation()} {platform.python_version()}, "
          f"load average {load1:.1f} at start; interpreter {os.path.relpath(PYTHON, ROOT)}")
    print()

    cmds = {
        "python": [PYTHON, "-c", "pass"],
        "baseline": [PYTHON, "-c", BASELINE_CODE],
        "check": [COLINT, "check", config],
        "inspect": [COLINT, "inspect", config],
        "check_cl0": [COLINT, "check", "--select", "CL0", config],
    }
    t = _interleaved(cmds, runs)
    med = {k: statistics.median(v) for k, v in t.items()}
    ratio = med["check"] / med["baseline"]
    print("start-up, one config (" + os.path.basename(config) + ")")
    print(f"  python -c pass                                 {_ms(med['python']):>9}  {_spread(t['python'])}")
    print(f"  baseline: python -c \"{BASELINE_CODE}\"  {_ms(med['baseline']):>9}  {_spread(t['baseline'])}")
    print(f"  colint check                                   {_ms(med['check']):>9}  {_spread(t['check'])}  "
          f"= {ratio:.2f}x baseline (target <= {TARGET_RATIO}x: {_verdict(ratio <= TARGET_RATIO)})")
    print(f"  colint check --select CL0 (no GPU analysis)    {_ms(med['check_cl0']):>9}  "
          f"{_spread(t['check_cl0'])}  = {med['check_cl0'] / med['baseline']:.2f}x")
    print(f"  colint inspect                                 {_ms(med['inspect']):>9}  {_spread(t['inspect'])}  "
          f"= {med['inspect'] / med['baseline']:.2f}x")
    print()

    with tempfile.TemporaryDirectory(prefix="colint-bench-") as tmp:
        paths = _make_corpus(args.many, tmp)
        many_cmd = [COLINT, "check", *paths]
        _wall(many_cmd)
        many = [_wall(many_cmd) for _ in range(runs)]
        m = statistics.median(many)
        rss = {"baseline": _peak_rss_mb(cmds["baseline"]), "check": _peak_rss_mb(cmds["check"]),
               "many": _peak_rss_mb(many_cmd)}
    print(f"{args.many:,} HF configs in one `colint check` call (copies of the {len(os.listdir(HF_CORPUS)) - 0} "
          f"tests/corpus/hf files)")
    print(f"  wall {m:.2f} s  (IQR {statistics.quantiles(many, n=4)[0]:.2f}-{statistics.quantiles(many, n=4)[2]:.2f}"
          f" s) = {m / args.many * 1e3:.2f} ms per config (target < {TARGET_1000_S:.0f} s: "
          f"{_verdict(m < TARGET_1000_S)})")
    print()

    a_med, a_max, a_worst, n_cfg = _analysis_ms(repeats=max(7, runs))
    print("core analysis per config, in-process (normalize + analyse + rules on b200, load excluded)")
    print(f"  median over {n_cfg} corpus configs {a_med:.2f} ms, slowest {a_max:.2f} ms ({a_worst}) "
          f"(target: a few ms: {_verdict(a_med <= TARGET_ANALYSIS_MS)})")
    print()

    print("peak memory (max RSS of the process)")
    print(f"  baseline {rss['baseline']:.0f} MiB, colint check one config {rss['check']:.0f} MiB, "
          f"{args.many:,} configs {rss['many']:.0f} MiB")
    print()

    rows, top_level = _importtime(config)
    print("python -X importtime -m colint check (one run; microseconds):")
    print("  top self times:")
    for self_us, cum_us, name in sorted(rows, reverse=True)[:12]:
        print(f"    {self_us:>7,} self {cum_us:>8,} cumulative  {name.strip()}")
    roots = [r for r in rows if not r[2].startswith("  ")]
    print(f"  top-level imports, cumulative (total {sum(r[1] for r in roots) / 1e3:,.0f} ms):")
    for self_us, cum_us, name in sorted(roots, key=lambda r: -r[1])[:8]:
        print(f"    {cum_us:>8,}  {name.strip()}")
    heavy = sorted(set(HEAVY) & top_level)
    print(f"  heavy modules on the check path: {', '.join(heavy) if heavy else 'none'} "
          f"(looked for: {', '.join(HEAVY)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

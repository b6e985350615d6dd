"""Finding counts by severity over the test corpus at the five settings of issue 17.

    .venv/bin/python scripts/severity_counts.py [--json OUT] [--markdown] [--setting "NAME=ARGS" ...]

Prints one row per setting: errors / warnings / infos, the files the hook would block (exit 1 at the default
--fail-on warning), and per-code counts by severity; ``--markdown`` prints them as the tables of docs/defaults.md. ``--setting``
(repeatable) replaces the five settings with others, e.g. ``--setting "rtx nvfp4=--gpu rtx-pro-6000
--dtype nvfp4"`` for a GPU those five do not reach.
Runs `colint check --format json --isolated` over tests/corpus (one process per setting).
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SETTINGS = {
    "default": [],
    "h100-sxm tp=8": ["--gpu", "h100-sxm", "--tp", "8"],
    "gb200 ep=16": ["--gpu", "gb200", "--ep", "16"],
    "nvfp4": ["--dtype", "nvfp4"],
    "pp=4": ["--pp", "4"],
}


def corpus_files() -> list[str]:
    out = []
    for d, _, files in os.walk(os.path.join(ROOT, "tests", "corpus")):
        out += [os.path.join(d, f) for f in files if f.endswith((".json", ".yaml", ".yml"))]
    return sorted(out)


def run(args: list[str]) -> dict:
    exe = os.path.join(os.path.dirname(sys.executable), "colint")
    p = subprocess.run(
        [exe, "check", "--format", "json", "--isolated", "--fail-on", "never", *args, *corpus_files()],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    return json.loads(p.stdout)


def settings(argv: list[str]) -> dict[str, list[str]]:
    """The five settings, or those given as ``--setting NAME=ARGS``."""
    given = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--setting"]
    if not given:
        return SETTINGS
    return {name.strip(): args.split() for name, _, args in (g.partition("=") for g in given)}


def markdown(table: dict) -> str:
    """The counts as Markdown: one summary row per setting, then one row per rule with its counts by severity."""
    names = list(table)
    out = ["| setting | files blocked | errors | warnings | infos |", "|---|---|---|---|---|"]
    for n in names:
        t = table[n]
        out.append(f"| {n} | {t['blocked']} of {t['files']} | {t['errors']} | {t['warnings']} | {t['infos']} |")
    codes = sorted({k.split()[0] for t in table.values() for k in t["by_code"]})
    out += ["", "| rule | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for c in codes:
        cells = []
        for n in names:
            parts = [
                f"{table[n]['by_code'][f'{c} {sev}']} {sev}"
                for sev in ("error", "warning", "info")
                if f"{c} {sev}" in table[n]["by_code"]
            ]
            cells.append(", ".join(parts) or "-")
        out.append(f"| {c} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main() -> None:
    table = {}
    for name, args in settings(sys.argv).items():
        rep = run(args)
        by_code = collections.Counter()
        for f in rep["files"]:
            for x in f["findings"]:
                by_code[(x["code"], x["severity"])] += 1
        s = rep["summary"]
        blocked = sum(
            bool(f.get("error")) or any(x["severity"] in ("error", "warning") for x in f["findings"])
            for f in rep["files"]
        )
        table[name] = {
            "files": len(rep["files"]),
            "blocked": blocked,
            "errors": s["errors"],
            "warnings": s["warnings"],
            "infos": s["infos"],
            "by_code": {f"{c} {sev}": n for (c, sev), n in sorted(by_code.items())},
        }
        print(
            f"{name:<16} files blocked {blocked:>3}/{len(rep['files'])}  errors {s['errors']:>4}  "
            f"warnings {s['warnings']:>4}  infos {s['infos']:>4}"
        )
    if "--markdown" in sys.argv:
        print(markdown(table))
    if "--json" in sys.argv:
        with open(sys.argv[sys.argv.index("--json") + 1], "w") as fh:
            json.dump(table, fh, indent=1)


if __name__ == "__main__":
    main()

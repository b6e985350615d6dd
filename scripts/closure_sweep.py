"""Apply every fix and advised setting colint offers on the corpus, re-check, and count what is new.

For each corpus file at five settings (default; --gpu h100-sxm --tp 8; --gpu gb200 --ep 16;
--dtype nvfp4; --pp 4), every fix that edits the file or names a deployment setting is applied
(colint.engine.checking.verify_fixes) and the file re-checked there. Prints, per setting, the fixes tried and
those that raised a new finding at warning or above (or left a file that does not load), with
advice closure on (the default) and, with ``--no-closure``, as the rules propose it.

Run: ``.venv/bin/python scripts/closure_sweep.py [--no-closure] [-v]``
"""

from __future__ import annotations

import glob
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

SETTINGS = {
    "default": {},
    "h100-sxm tp=8": {"gpus": ["h100-sxm"], "tp": 8},
    "gb200 ep=16": {"gpus": ["gb200"], "ep": 16},
    "nvfp4": {"dtype": "nvfp4"},
    "pp=4": {"pp": 4},
}


def corpus() -> list[str]:
    return sorted(
        glob.glob(os.path.join(ROOT, "tests", "corpus", "*", "*.json"))
        + glob.glob(os.path.join(ROOT, "tests", "corpus", "*", "*.yaml"))
    )


def sweep(settings: dict, close: bool = True, paths: list[str] | None = None):
    """(fixes tried, [(path, finding code, fix title, new findings, error)] of those that raised something)."""
    from colint.engine.checking import build_targets, check_file
    from colint.engine.settings import Settings
    from colint.engine.checking import verify_fixes as verify
    from colint.rules import select_rules

    opts = Settings(close_advice=close, **settings)
    rules = select_rules()
    targets = build_targets(opts)
    tried, bad = 0, []
    for p in paths or corpus():
        r = check_file(p, targets, opts, rules)
        for f, fx, new, err in verify(r, targets, opts, rules):
            tried += 1
            if new or err:
                bad.append((p, f.code, fx.title, new, err))
    return tried, bad


def main(argv: list[str]) -> int:
    close = "--no-closure" not in argv
    total_tried = total_bad = 0
    for name, s in SETTINGS.items():
        tried, bad = sweep(s, close)
        total_tried += tried
        total_bad += len(bad)
        print(f"{name:16s} fixes tried {tried:4d}, raising a new warning/error {len(bad):3d}")
        if "-v" in argv:
            for p, code, title, new, err in bad:
                what = err or "; ".join(f"{g.code} {g.severity}: {g.message}" for g in new[:2])
                print(f"    {os.path.basename(p)} {code} [{title[:90]}] -> {what[:160]}")
    from colint.engine.closure import STATS

    print(
        f"{'all':16s} fixes tried {total_tried:4d}, raising a new warning/error {total_bad:3d} "
        f"(closure {'on' if close else 'off'})"
    )
    if close:
        print(
            f"closure: {STATS.tried} fix states re-checked, {STATS.kept} kept, {STATS.replaced} replaced by an "
            f"alternative, {STATS.dropped} left out, {STATS.tradeoff} shown as a trade-off, {STATS.noop} no-ops "
            f"dropped, {STATS.delta_corrected} parameter deltas corrected"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

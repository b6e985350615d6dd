"""Snapshot colint's public outputs over the corpus, to prove a refactoring changes none of them.

    .venv/bin/python scripts/snapshot_outputs.py DIR             # write the snapshot into DIR
    .venv/bin/python scripts/snapshot_outputs.py --compare A B   # list the files that differ

Writes, with deterministic names (``<kind>__<setting>__<corpus file>.txt``), for every file in
tests/corpus: ``check --format json`` at four settings that exercise tp, ep, pp and dtype;
``inspect --format json`` without a GPU and at the same four settings with one; ``check --format
sarif`` / ``gitlab`` and ``check --diff --unsafe-fixes`` at the default setting; and ``suggest
--format json`` on a few examples (its ``seconds`` timing field removed). Each file holds stdout,
the exit code and stderr. Commands run in-process (``colint.cli.main.main``) from the repository root,
with ``--isolated`` where the command has it, so a run takes about a minute on two cores.
``--compare`` exits 1 when a file differs or exists on one side only.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join("tests", "corpus")

# name -> flags. Four settings: the defaults; tp on Hopper; ep on Blackwell NVL72; pp with NVFP4.
SETTINGS = {
    "default": [],
    "h100-tp8": ["--gpu", "h100-sxm", "--tp", "8"],
    "gb200-ep16": ["--gpu", "gb200", "--ep", "16"],
    "nvfp4-pp4": ["--gpu", "b200", "--dtype", "nvfp4", "--pp", "4", "--scenario", "latency"],
}
SUGGEST = [
    ("llama2__Llama-2-7b-neuron-training.json", ["--tp", "8"]),
    ("qwen3__Qwen3-8B.json", []),
    ("deepseek__DeepSeek-V3.json", ["--ep", "8"]),
    ("mixtral__Mixtral-8x7B-v0.1.json", ["--gpu", "h100-sxm", "--tp", "4"]),
]


def corpus_files() -> list[str]:
    out = []
    for folder, _dirs, files in os.walk(os.path.join(ROOT, CORPUS)):
        for name in files:
            if name.endswith((".json", ".yaml", ".yml")):
                out.append(os.path.relpath(os.path.join(folder, name), ROOT))
    return sorted(out)


def run(argv: list[str]) -> tuple[int, str, str]:
    from colint.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    return rc, out.getvalue(), err.getvalue()


def _strip_seconds(value):
    if isinstance(value, dict):
        return {k: _strip_seconds(v) for k, v in value.items() if k != "seconds"}
    if isinstance(value, list):
        return [_strip_seconds(v) for v in value]
    return value


def snapshot(dest: str) -> int:
    os.makedirs(dest, exist_ok=True)
    os.chdir(ROOT)
    os.environ["NO_COLOR"] = "1"
    os.environ.pop("GITHUB_ACTIONS", None)
    written = 0

    def write(name: str, argv: list[str], post=None) -> None:
        nonlocal written
        rc, out, err = run(argv)
        if post is not None and rc in (0, 1) and out.strip():
            out = post(out)
        with open(os.path.join(dest, name + ".txt"), "w", encoding="utf-8") as fh:
            fh.write(f"$ colint {' '.join(argv)}\n{out}\n--- exit {rc}\n{err}")
        written += 1

    for path in corpus_files():
        stem = path.replace(os.sep, "__")
        for setting, flags in SETTINGS.items():
            write(f"check__{setting}__{stem}", ["check", path, "--isolated", "--format", "json", *flags])
            inspect_flags = flags if flags else ["--gpu", "b200"]
            write(f"inspect-gpu__{setting}__{stem}", ["inspect", path, "--format", "json", *inspect_flags])
        write(f"inspect__nogpu__{stem}", ["inspect", path, "--format", "json"])
        for fmt in ("sarif", "gitlab"):
            write(f"check-{fmt}__default__{stem}", ["check", path, "--isolated", "--format", fmt])
        write(f"check-diff__default__{stem}", ["check", path, "--isolated", "--diff", "--unsafe-fixes"])

    def no_seconds(text: str) -> str:
        return json.dumps(_strip_seconds(json.loads(text)), indent=2, sort_keys=True)

    for name, flags in SUGGEST:
        path = os.path.join(CORPUS, "hf", name)
        write(
            f"suggest__{'_'.join(flags) or 'default'}__{name}",
            ["suggest", path, "--isolated", "--format", "json", *flags],
            post=no_seconds,
        )
    print(f"wrote {written} files into {dest}")
    return 0


def compare(a: str, b: str) -> int:
    names_a, names_b = set(os.listdir(a)), set(os.listdir(b))
    bad = 0
    for name in sorted(names_a | names_b):
        if name not in names_b or name not in names_a:
            print(f"only in {a if name in names_a else b}: {name}")
            bad += 1
            continue
        with open(os.path.join(a, name), "rb") as fa, open(os.path.join(b, name), "rb") as fb:
            if fa.read() != fb.read():
                print(f"differs: {name}")
                bad += 1
    print(f"{len(names_a | names_b)} files, {bad} differ")
    return 1 if bad else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dest", nargs="?", help="folder to write the snapshot into")
    parser.add_argument("--compare", nargs=2, metavar=("DIR_A", "DIR_B"))
    args = parser.parse_args()
    if args.compare:
        return compare(*args.compare)
    if not args.dest:
        parser.error("give DIR or --compare DIR_A DIR_B")
    return snapshot(os.path.abspath(args.dest))


if __name__ == "__main__":
    sys.exit(main())

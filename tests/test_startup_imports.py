"""What a pre-commit run on one file loads (issue 7, issue 16 item 1): none of the heavy or optional
dependencies. colint's own modules are imported at module level (one-way, tests/test_architecture.py);
only these stay behind function-level imports, at the place that needs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEAVY = (
    "numpy",
    "transformers",
    "torch",
    "pydantic",
    "pydantic_core",
    "ruamel",
    "yaml",
    "matplotlib",
    "huggingface_hub",
    "pygls",
    "rich",
    "multiprocessing",
)
PROBE = (
    "import io, json, runpy, sys, contextlib\n"
    "sys.argv = ['colint', 'check', *sys.argv[1:]]\n"
    "out = io.StringIO()\n"
    "with contextlib.redirect_stdout(out):\n"
    "    try:\n"
    "        runpy.run_module('colint', run_name='__main__')\n"
    "    except SystemExit as e:\n"
    "        code = e.code\n"
    "print(json.dumps([code, out.getvalue().count('CL'), sorted({m.split('.')[0] for m in sys.modules})]))\n"
)


@pytest.mark.parametrize("config", ["examples/llama-2-7b.json", "examples/deepseek-v3.json", "examples/kimi-k2.json"])
def test_checking_one_file_loads_no_heavy_dependency(config):
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, config, "--gpu", "b200", "--tp", "8"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    code, findings, top = json.loads(proc.stdout.splitlines()[-1])
    assert findings > 0, "the probe checked nothing: this test would pass vacuously"
    assert code in (0, 1)
    assert sorted(set(top) & set(HEAVY)) == []

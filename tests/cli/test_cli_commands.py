"""The ``colint`` group lists and runs the commands of colint.cli.design and colint.cli.reference, which it
imports only when one of them is asked for (colint.cli.main.LAZY_COMMANDS)."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys

import click
from click.testing import CliRunner

from colint.cli.main import LAZY_COMMANDS, cli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_every_command_of_the_command_modules_is_on_the_group_under_its_own_name():
    defined = {}
    for module in ("colint.cli.design", "colint.cli.reference"):
        for value in vars(importlib.import_module(module)).values():
            if isinstance(value, click.Command):
                defined[value.name] = f"{module}:{value.callback.__name__}"
    assert defined == LAZY_COMMANDS
    ctx = click.Context(cli)
    assert cli.list_commands(ctx) == sorted([*LAZY_COMMANDS, "check", "lsp"])
    assert all(cli.get_command(ctx, name).name == name for name in cli.list_commands(ctx))
    assert cli.get_command(ctx, "nosuch") is None


def test_a_lazy_command_runs_and_an_unknown_one_is_a_usage_error():
    result = CliRunner().invoke(cli, ["rule", "CL201"])
    assert result.exit_code == 0 and result.output.startswith("CL201")
    result = CliRunner().invoke(cli, ["rulez"])
    assert result.exit_code == 2 and "No such command 'rulez'" in result.output


def test_check_imports_neither_command_module():
    code = (
        "import sys, contextlib, io\n"
        "from colint.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    code = main(['check', 'examples/llama-2-7b.json'])\n"
        "print(code, sorted(m for m in ('colint.cli.design', 'colint.cli.reference') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.split(" ", 1)[1].strip() == "[]"

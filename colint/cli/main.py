"""colint's command line: the ``colint`` group, ``colint check`` and ``colint lsp``, and ``main``, which owns
the exit codes: 0 clean, 1 findings at/above --fail-on, 2 usage, input or internal error (always one
line, never a traceback).

The other commands live in colint.cli.design (inspect, gemm, ops, suggest, pareto, report) and
colint.cli.reference (profiles, config, rules, rule, formats, schema). The group imports such a module
only when one of its commands runs or is listed (click's lazily loaded subcommands), so a one-file
``colint check`` loads neither. Heavy modules are imported inside the commands that need them.
"""

from __future__ import annotations

import importlib
import sys

import click

from colint.util.version import __version__
from colint.cli.options import review_options, settings_options
from colint.cli.output import EXIT_CLEAN, EXIT_ERROR, escape, fail
from colint.reporters import REPORTERS

# command name -> "module:function" of a command defined outside this module
LAZY_COMMANDS = {
    "config": "colint.cli.reference:config_cmd",
    "diff": "colint.cli.design:diff_cmd",
    "formats": "colint.cli.reference:formats_cmd",
    "gemm": "colint.cli.design:gemm_cmd",
    "inspect": "colint.cli.design:inspect_cmd",
    "ops": "colint.cli.design:ops_cmd",
    "pareto": "colint.cli.design:pareto_cmd",
    "profiles": "colint.cli.reference:profiles_cmd",
    "report": "colint.cli.design:report_cmd",
    "rule": "colint.cli.reference:rule_cmd",
    "rules": "colint.cli.reference:rules_cmd",
    "schema": "colint.cli.reference:schema_cmd",
    "suggest": "colint.cli.design:suggest_cmd",
}


class Commands(click.Group):
    """The ``colint`` group: the commands defined here, and those of ``LAZY_COMMANDS``, imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in LAZY_COMMANDS:
            module, name = LAZY_COMMANDS[cmd_name].split(":")
            command: click.Command = getattr(importlib.import_module(module), name)
            return command
        return super().get_command(ctx, cmd_name)


@click.group(cls=Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="colint")
def cli() -> None:
    """Lint LLM architectures for how well they run on a target GPU."""


OUTPUT_FORMATS = list(REPORTERS)  # full, concise, text (= full), json, github, sarif, gitlab, markdown


@cli.command()
# readable=False: click's own access check made one unreadable file a usage error that aborted the whole run;
# each file's read error is its own located error instead (issue 19)
# not required: with --base and no PATH, the configs git sees changed since the revision
@click.argument("paths", nargs=-1, required=False, type=click.Path(allow_dash=True, readable=False))
@settings_options()
@click.option(
    "--output-format",
    "--format",
    "fmt",
    type=click.Choice(OUTPUT_FORMATS),
    default=None,
    envvar="COLINT_OUTPUT_FORMAT",
    show_envvar=True,
    help="full (alias text): findings with details and fixes; concise: one line per finding; json, github, "
    "sarif, gitlab; markdown (a table, for GitHub's step summary). --format is an alias. "
    "[default: github when GITHUB_ACTIONS=true, else full]",
)
@click.option(
    "-o",
    "--output",
    "output",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write the report to this file instead of stdout.",
)
@click.option("-q", "--quiet", is_flag=True, help="Print the findings and errors only: no summary, notes or context.")
@click.option("-v", "--verbose", is_flag=True, help="Also list the files skipped as not decoder LLM configs.")
@click.option("--show-fixes", is_flag=True, help="With --output-format concise: print each finding's fixes too.")
@click.option(
    "--color",
    "color",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help="Colour the human formats; auto: on a terminal, unless NO_COLOR is set (FORCE_COLOR forces it).",
)
@click.option(
    "--stdin-filename",
    default=None,
    help="The name of the file read from standard input (PATH '-'): shown in the report, and where "
    "its [tool.colint] settings are looked up.",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Check every file given, even those recognised as not decoder LLM "
    "configs (pooling, diffusers, vision, tokenizer, generation configs, encoders).",
)
@click.option("--statistics", is_flag=True, help="Print a count per rule instead of the findings.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings are reported (2 still means an error).")
@click.option(
    "--baseline",
    type=click.Path(dir_okay=False, readable=False),
    default=None,
    help="Report only findings not recorded in this baseline file.",
)
@click.option(
    "--write-baseline",
    type=click.Path(dir_okay=False),
    default=None,
    help="Record every current finding in this baseline file, then exit 0 (exit 2 and write nothing when a "
    "file cannot be checked).",
)
@click.option(
    "--fix",
    "apply_fix",
    is_flag=True,
    help="Apply the first safe fix of each finding in place (function-preserving: padding).",
)
@click.option(
    "--unsafe-fixes",
    is_flag=True,
    help="With --fix/--diff, also apply architecture-changing fixes (fine for a design, not a checkpoint); "
    "alone it changes nothing.",
)
@click.option("--diff", "show_diff", is_flag=True, help="Print the fixes as a unified diff; write nothing.")
@click.option(
    "--include",
    multiple=True,
    metavar="GLOB",
    help="In a directory, lint the files matching these globs instead of the pre-commit hook's names.",
)
@click.option(
    "--exclude",
    multiple=True,
    metavar="GLOB",
    help="In a directory, skip files and folders matching these globs (repeatable).",
)
@click.option(
    "--base",
    metavar="REF",
    default=None,
    help="Review a change: compare each config changed since this git revision with its version there "
    "(renames followed; no PATH: every changed config) and print the parameter, memory and step-time deltas; "
    "only findings new since REF are reported and can fail the run (docs/diff.md).",
)
@review_options("With --base: ")
def check(paths, flags, isolated, **run) -> None:
    """Lint the architecture in each PATH for the target GPU(s).

    PATH is a config file, a directory (walked; a checkpoint folder means its config.json), a Hugging
    Face cache folder, a Hub id org/name[@revision] (only config.json is downloaded), or '-' (standard input).
    With --base REF and no PATH: every config changed since the git revision REF (docs/diff.md)."""
    from colint.cli.check import CheckRun, run_check

    if not paths and run["base"] is None:
        raise click.UsageError("Missing argument 'PATHS...'.")
    raise click.exceptions.Exit(run_check(paths, flags, isolated, CheckRun(**run)))


@cli.command("lsp")
@settings_options()
def lsp_cmd(flags, isolated) -> None:
    """Serve diagnostics to an editor over stdio (Language Server Protocol; needs pip install 'colint-llm[lsp]')."""
    import importlib.util

    if importlib.util.find_spec("pygls") is None:
        raise fail("colint: error: `colint lsp` needs pygls: pip install 'colint-llm[lsp]'")
    from colint.lsp import create_server

    create_server(flags, isolated).start_io()


def main(argv: list[str] | None = None) -> int:
    try:
        rv = cli.main(args=argv, prog_name="colint", standalone_mode=False)
        return int(rv or 0) if isinstance(rv, int) else 0
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("colint: aborted", err=True)
        return EXIT_ERROR
    except click.ClickException as exc:
        click.echo(f"colint: error: {exc.format_message()}", err=True)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_CLEAN
    except Exception as exc:  # noqa: BLE001 - the last line of defence: one line, exit 2
        from colint.errors import ColintError

        if isinstance(exc, ColintError):
            click.echo(escape(exc.located()), err=True)
        else:
            click.echo(
                escape(f"colint: internal error: {type(exc).__name__}: {exc} (please report this with the input file)"),
                err=True,
            )
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())

"""colint's command line. Owns the exit codes: 0 clean, 1 findings at/above --fail-on,
2 usage, input or internal error (always one line, never a traceback).

Heavy modules are imported inside the commands that need them.
"""

from __future__ import annotations

import sys

import click

from colint import __version__

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _fail(message: str) -> "click.exceptions.Exit":
    click.echo(message, err=True)
    return click.exceptions.Exit(EXIT_ERROR)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="colint")
def cli() -> None:
    """Lint LLM architectures for how well they run on a target GPU."""


@cli.command()
@click.argument("path", type=click.Path(dir_okay=True, allow_dash=False))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--input-format", default=None, help="Force the input format instead of detecting it.")
@click.option("--vocab-size", type=click.IntRange(min=1), default=None,
              help="Vocabulary size for formats whose vocab comes from a tokenizer (Megatron/NeMo).")
def inspect(path: str, fmt: str, input_format: str | None, vocab_size: int | None) -> None:
    """Show the normalized spec, parameter counts and weight GEMMs of PATH."""
    import json

    from colint.errors import ColintError
    from colint.inspection import inspect_spec
    from colint.loading import load
    from colint.spec import normalize

    try:
        spec = normalize(load(path), input_format=input_format, vocab_size=vocab_size)
    except ColintError as exc:
        raise _fail(exc.located(path))
    info = inspect_spec(spec, path)
    if fmt == "json":
        click.echo(json.dumps(info, indent=2))
    else:
        from colint.reporters.inspect_text import render

        click.echo(render(info))


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
            click.echo(exc.located(), err=True)
        else:
            click.echo(f"colint: internal error: {type(exc).__name__}: {exc} "
                       "(please report this with the input file)", err=True)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())

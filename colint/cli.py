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


def _parallel(value: str | None, name: str):
    if value is None:
        return None
    if value == "auto":
        return "auto"
    try:
        n = int(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a positive integer or 'auto'", param_hint=f"--{name}")
    if n < 1:
        raise click.BadParameter(f"{value!r} must be at least 1", param_hint=f"--{name}")
    return n


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(allow_dash=False))
@click.option("--gpu", "gpus", multiple=True, help="Target GPU profile name or YAML path; repeat to lint for a "
              "fleet. [default: b200]")
@click.option("--scenario", type=click.Choice(["throughput", "latency", "long-context"]), default="throughput",
              show_default=True)
@click.option("--dtype", default=None, help="Weight/activation format: bf16, fp16, fp8, fp8_block, nvfp4, mxfp4, "
              "int8. [default: bf16]")
@click.option("--tp", default=None, help="Tensor-parallel size, or 'auto' (largest power of two that aligns).")
@click.option("--ep", type=click.IntRange(min=1), default=None, help="Expert-parallel size.")
@click.option("--pp", type=click.IntRange(min=1), default=None, help="Pipeline-parallel size.")
@click.option("--context", type=click.IntRange(min=1), default=None, help="Context length, tokens.")
@click.option("--concurrency", type=click.IntRange(min=1), default=None,
              help="Concurrent decode sequences per GPU.")
@click.option("--select", multiple=True, help="Rule codes, prefixes, names or families to run (repeatable).")
@click.option("--ignore", multiple=True, help="Rule codes, prefixes, names or families to skip (repeatable).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--fail-on", type=click.Choice(["error", "warning", "info", "never"]), default="warning",
              show_default=True, help="Exit 1 when a finding at or above this severity is reported.")
@click.option("--input-format", default=None, help="Force the input format instead of detecting it.")
@click.option("--vocab-size", type=click.IntRange(min=1), default=None,
              help="Vocabulary size for formats whose vocab comes from a tokenizer.")
def check(paths, gpus, scenario, dtype, tp, ep, pp, context, concurrency, select, ignore, fmt, fail_on,
          input_format, vocab_size) -> None:
    """Lint the architecture in each PATH for the target GPU(s)."""
    from colint.checking import CheckOptions, check_paths, exit_code, summary
    from colint.errors import ColintError

    def csv(values):
        return [v.strip() for item in values for v in item.split(",") if v.strip()]

    opts = CheckOptions(gpus=list(gpus) or ["b200"], scenario=scenario, dtype=dtype, tp=_parallel(tp, "tp"),
                        ep=ep, pp=pp, context=context, concurrency=concurrency, select=csv(select),
                        ignore=csv(ignore), input_format=input_format, vocab_size=vocab_size)
    try:
        results = check_paths(list(paths), opts)
    except ColintError as exc:
        raise _fail(f"colint: error: {exc.message}" if exc.path is None else exc.located())
    summ = summary(results)
    if fmt == "json":
        from colint.reporters.json_report import render as render_json

        click.echo(render_json(results, summ))
    else:
        from colint.reporters.text import render as render_text

        ctx_line = "estimates: " + ", ".join(opts.gpus) + f", {opts.dtype or 'bf16'}, scenario {opts.scenario}"
        click.echo(render_text(results, summ, colour=sys.stdout.isatty(), context_line=ctx_line))
    raise click.exceptions.Exit(exit_code(results, fail_on))


@cli.command("rules")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def rules_cmd(fmt: str) -> None:
    """List every rule."""
    from colint.rules import all_rules

    rules = all_rules()
    if fmt == "json":
        import json

        click.echo(json.dumps([{"code": r.code, "name": r.name, "family": r.family, "severity": r.severity,
                                "summary": r.summary,
                                "options": {k: v[0] for k, v in r.options.items()}} for r in rules.values()],
                              indent=2))
        return
    for r in rules.values():
        click.echo(f"{r.code}  {r.name:<34} {r.family:<14} {r.severity:<8} {r.summary}")


@cli.command("rule")
@click.argument("code")
def rule_cmd(code: str) -> None:
    """Print the documentation of one rule (by code or name)."""
    from colint.rules import all_rules

    rules = all_rules()
    match = rules.get(code.upper()) or next((r for r in rules.values() if r.name == code), None)
    if match is None:
        raise _fail(f"colint: error: unknown rule {code!r}; `colint rules` lists them")
    click.echo(match.render_doc())


@cli.command("schema")
@click.option("--output", "-o", type=click.Path(dir_okay=False, allow_dash=False), default=None,
              help="Write the JSON Schema to FILE instead of standard output.")
def schema_cmd(output: str | None) -> None:
    """Print the JSON Schema of colint's own design-file format (docs/schema.md)."""
    import json
    import os
    import tempfile

    from colint.spec.colint_schema import json_schema

    text = json.dumps(json_schema(), indent=2) + "\n"
    if output is None:
        click.echo(text, nl=False)
        return
    directory = os.path.dirname(os.path.abspath(output))
    try:  # write a temporary file next to the target and rename it: never a partial file
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".colint-schema-")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, output)
    except OSError as exc:
        raise _fail(f"{output}: error: cannot write: {exc.strerror or exc}")


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

"""The reference commands of colint's command line: profiles, config, rules, rule, formats, schema.

Each declares its flags, calls the one function that computes, and writes the result; colint.cli.main
registers them on the ``colint`` group and imports this module only when one of them runs or is listed.
"""

from __future__ import annotations

import click

from colint.cli.options import settings_options
from colint.cli.output import escape_lines, fail, fail_with, write_or_fail


@click.command("profiles")
@click.argument("name", required=False)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def profiles_cmd(name: str | None, fmt: str) -> None:
    """List the GPU profiles, or show one (NAME or a YAML path) with its sources."""
    import json

    from colint.errors import ColintError
    from colint.hardware_profiles import list_profiles, load_profile, time_model
    from colint.util.plain_data import dump

    try:
        if name is None:
            profiles = [load_profile(n) for n in list_profiles()]
            if fmt == "json":
                click.echo(json.dumps([dump(p, json=True) for p in profiles], indent=2))
            else:
                from colint.reporters.estimates_text import render_profiles

                click.echo(render_profiles(profiles))
            return
        p = load_profile(name)
        tm = time_model(p)
    except ColintError as exc:
        raise fail_with(exc)
    if fmt == "json":
        click.echo(json.dumps({**dump(p, json=True), "time_model": dump(tm, json=True)}, indent=2))
    else:
        from colint.reporters.estimates_text import render_profile

        click.echo(render_profile(p, tm))


@click.command("config")
@click.argument("path", default=".", type=click.Path(allow_dash=False))
@settings_options()
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def config_cmd(path, flags, isolated, fmt) -> None:
    """Show the settings in force for PATH (a file or directory) and where each comes from."""
    from colint.engine.config_files import settings_for
    from colint.errors import ColintError
    from colint.engine.settings import check_selectors, render

    try:
        settings = settings_for(path, flags, isolated=isolated)
        check_selectors(settings)
    except ColintError as exc:
        raise fail_with(exc)
    if fmt == "json":
        import json

        cfg = settings.config
        click.echo(
            json.dumps({"path": path, "config": cfg.label if cfg else None, "settings": settings.as_dict()}, indent=2)
        )
    else:
        click.echo(escape_lines(render(settings, path)))


@click.command("rules")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown"]),
    default="text",
    show_default=True,
    help="markdown: every rule's documentation, the page docs/rules.md holds.",
)
def rules_cmd(fmt: str) -> None:
    """List every rule."""
    from colint.reporters import rules_doc
    from colint.rules import all_rules

    render = {"markdown": rules_doc.render, "json": rules_doc.render_json, "text": rules_doc.render_table}[fmt]
    click.echo(render(all_rules()), nl=fmt != "markdown")


@click.command("formats")
def formats_cmd() -> None:
    """List the input formats and the Hugging Face model types colint reads."""
    from colint.normalize import FORMATS
    from colint.normalize.hf import FAMILIES
    from colint.reporters.formats_text import render

    click.echo(render(FORMATS, FAMILIES))


@click.command("rule")
@click.argument("code")
def rule_cmd(code: str) -> None:
    """Print the documentation of one rule (by code or name)."""
    from colint.rules import find_rule

    match = find_rule(code)
    if match is None:
        raise fail(f"colint: error: unknown rule {code!r}; `colint rules` lists them")
    click.echo(match.render_doc())


@click.command("schema")
@click.argument("which", type=click.Choice(["design", "report", "diff"]), default="design")
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, allow_dash=False),
    default=None,
    help="Write the JSON Schema to FILE instead of standard output.",
)
def schema_cmd(which: str, output: str | None) -> None:
    """Print a JSON Schema: of colint's own design-file format (design, docs/schema.md), or of
    `colint check --output-format json` (report, docs/output.md), or of `colint diff` / `colint check --base REF`
    with --format json (diff, docs/diff.md)."""
    import json

    if which == "report":
        from colint.reporters.json_schema import report_schema as make
    elif which == "diff":
        from colint.reporters.json_schema import diff_schema as make
    else:
        from colint.normalize.design_file import json_schema as make

    text = json.dumps(make(), indent=2) + "\n"
    if output is None:
        click.echo(text, nl=False)
        return
    write_or_fail(output, text)  # never a partial file

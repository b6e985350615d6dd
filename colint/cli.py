"""colint's command line. Owns the exit codes: 0 clean, 1 findings at/above --fail-on,
2 usage, input or internal error (always one line, never a traceback).

Heavy modules are imported inside the commands that need them.
"""

from __future__ import annotations

import sys

import click

from colint import __version__
from colint.cli_options import INPUT, SCENARIO, one_path, settings_at, settings_options
from colint.cli_output import (
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_FINDINGS,
    escape,
    escape_lines,
    fail,
    fail_with,
    write_or_echo,
    write_or_fail,
    write_report,
)
from colint.reporters import REPORTERS
from colint.reporters.report_charts import CHARTS


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="colint")
def cli() -> None:
    """Lint LLM architectures for how well they run on a target GPU."""


@cli.command()
@click.argument("path", type=click.Path(dir_okay=True, allow_dash=False, readable=False))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option(
    "--gpu",
    default=None,
    help="Add the per-GEMM roofline table and step estimates for this GPU profile (name or YAML path).",
)
@settings_options(*INPUT, *SCENARIO)
def inspect(path: str, fmt: str, gpu: str | None, flags: dict, isolated: bool) -> None:
    """Show the normalized spec, parameter counts and weight GEMMs of PATH (with --gpu: estimates).

    The input format, vocab size, scenario, dtype and parallelism come from the project's
    [tool.colint] / .colint.toml like for `check`, unless a flag gives them."""
    import json

    from colint.errors import ColintError
    from colint.inspecting import inspect_spec
    from colint.loading import load
    from colint.normalize import normalize

    path = one_path(path)
    opts = settings_at(path, {**flags, "gpus": [gpu] if gpu is not None else []}, isolated)
    try:
        spec = normalize(load(path), input_format=opts.input_format, vocab_size=opts.vocab_size)
    except ColintError as exc:
        raise fail(exc.located(path))
    info = inspect_spec(spec, path)
    if gpu is not None:  # estimates on request: the GPU of --gpu, the rest of the scenario as resolved
        from colint.analysis.scenario import fit_to_model
        from colint.analysis.workload import analyse, summary
        from colint.checking import build_targets

        try:
            (target,) = build_targets(opts)
            info["estimates"] = summary(analyse(spec, target.profile, fit_to_model(target.scenario, spec)))
        except ColintError as exc:
            raise fail_with(exc)
    if fmt == "json":
        click.echo(json.dumps(info, indent=2))
    else:
        from colint.reporters.inspect_text import render

        text = render(info)
        if "estimates" in info:
            from colint.reporters.estimates_text import render_estimates

            text += "\n" + render_estimates(info["estimates"])
        click.echo(escape_lines(text))


GEMM_OUT_COLUMNS = (
    "sol_s",
    "estimate_s",
    "bound",
    "tile_efficiency",
    "wave_efficiency",
    "arithmetic_intensity",
    "math_s",
    "memory_s",
    "ridge",
)


@cli.command("gemm")
@click.argument("dims", nargs=-1, type=click.IntRange(min=1, max=1 << 31))
@click.option("--gpu", default="b200", show_default=True, help="GPU profile name or YAML path.")
@click.option(
    "--dtype",
    default="bf16",
    show_default=True,
    help="bf16, fp16, fp8, fp8_block, nvfp4, mxfp4, int8, int8_wo, int4_wo.",
)
@click.option("--out-dtype", default=None, help="Output format (default bf16): bf16, fp16, fp8, fp32, nvfp4, ...")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option(
    "--from-csv",
    "from_csv",
    type=click.Path(dir_okay=False, allow_dash=True, readable=False),
    default=None,
    help="Read rows with columns dtype,m,n,k (others passed through); write them back as CSV with the estimates added.",
)
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None, help="With --from-csv: output file.")
def gemm_cmd(dims, gpu, dtype, out_dtype, fmt, from_csv, output) -> None:
    """Speed of light and the time model's estimate for one GEMM: colint gemm M N K."""
    from colint.errors import ColintError
    from colint.hardware_profiles import load_profile

    try:
        profile = load_profile(gpu)
    except ColintError as exc:
        raise fail_with(exc)
    if from_csv is not None:
        if dims:
            raise fail("colint: error: give either M N K or --from-csv, not both")
        from colint.analysis.gemm_csv import estimate_csv

        try:
            text = estimate_csv(from_csv, profile, out_dtype=out_dtype)
        except ColintError as exc:
            raise fail(exc.located())
        write_or_echo(text, output)
        return
    if len(dims) != 3:
        raise fail("colint: error: colint gemm needs M N K (three positive integers) or --from-csv FILE")
    from colint.analysis.gemm_model import estimate

    try:
        g = estimate(dims[0], dims[1], dims[2], dtype, profile, out_dtype)
    except ColintError as exc:
        raise fail(f"colint: error: {exc.message}")
    d = g.public()
    if fmt == "json":
        import json
        import math

        click.echo(
            json.dumps({k: (None if isinstance(v, float) and math.isinf(v) else v) for k, v in d.items()}, indent=2)
        )
    else:
        from colint.reporters.estimates_text import render_gemm

        click.echo(render_gemm({**d, "m_star": None if g.m_star == float("inf") else g.m_star}, profile.name))


@cli.command("ops")
@click.option("--gpu", default="b200", show_default=True, help="GPU profile name or YAML path.")
@click.option(
    "--from-csv",
    "from_csv",
    type=click.Path(dir_okay=False, allow_dash=True),
    required=True,
    help="Rows with the measured-kernel columns (op_name selects the model: generation_attention, "
    "context_attention, mla_generation, mla_context, moe, all_reduce, all_gather, reduce_scatter, "
    "alltoall, moe_a2a); written back with estimate_ms and sol_ms added.",
)
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None, help="Output file.")
def ops_cmd(gpu, from_csv, output) -> None:
    """Estimates of attention, MLA, MoE and collective ops over a CSV (colint.analysis.ops_csv)."""
    from colint.analysis.ops_csv import estimate_csv
    from colint.errors import ColintError
    from colint.hardware_profiles import load_profile

    try:
        profile = load_profile(gpu)
        text = estimate_csv(from_csv, profile, warn=lambda msg: click.echo(msg, err=True))
    except ColintError as exc:
        raise fail(exc.located() if getattr(exc, "path", None) else f"colint: error: {exc.message}")
    write_or_echo(text, output)


@cli.command("profiles")
@click.argument("name", required=False)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def profiles_cmd(name: str | None, fmt: str) -> None:
    """List the GPU profiles, or show one (NAME or a YAML path) with its sources."""
    import json

    from colint.errors import ColintError
    from colint.hardware_profiles import list_profiles, load_profile, time_model
    from colint.plain_data import dump

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


FORMATS = list(REPORTERS)


OUTPUT_FORMATS = FORMATS  # full, concise, text (= full), json, github, sarif, gitlab, markdown


@cli.command()
# readable=False: click's own access check made one unreadable file a usage error that aborted the whole run;
# each file's read error is its own located error instead (issue 19)
@click.argument("paths", nargs=-1, required=True, type=click.Path(allow_dash=True, readable=False))
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
def check(paths, flags, isolated, **run) -> None:
    """Lint the architecture in each PATH for the target GPU(s).

    PATH is a config file, a directory (walked; a checkpoint folder means its config.json), a Hugging
    Face cache folder, a Hub id org/name[@revision] (only config.json is downloaded), or '-' (standard input)."""
    from colint.cli_check import CheckRun, run_check

    raise click.exceptions.Exit(run_check(paths, flags, isolated, CheckRun(**run)))


@cli.command("config")
@click.argument("path", default=".", type=click.Path(allow_dash=False))
@settings_options()
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def config_cmd(path, flags, isolated, fmt) -> None:
    """Show the settings in force for PATH (a file or directory) and where each comes from."""
    from colint.config_files import settings_for
    from colint.errors import ColintError
    from colint.settings import check_selectors, render

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


@cli.command("rules")
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
    from colint.rules import all_rules

    rules = all_rules()
    if fmt == "markdown":
        from colint.reporters.rules_doc import render

        click.echo(render(rules), nl=False)
        return
    if fmt == "json":
        import json

        click.echo(
            json.dumps(
                [
                    {
                        "code": r.code,
                        "name": r.name,
                        "family": r.family,
                        "severity": r.severity,
                        "summary": r.summary,
                        "options": {k: o.default for k, o in r.options.items()},
                    }
                    for r in rules.values()
                ],
                indent=2,
            )
        )
        return
    for r in rules.values():
        click.echo(f"{r.code}  {r.name:<34} {r.family:<14} {r.severity:<8} {r.summary}")


@cli.command("formats")
def formats_cmd() -> None:
    """List the input formats and the Hugging Face model types colint reads."""
    import textwrap

    from colint.normalize import FORMATS
    from colint.normalize.hf import FAMILIES

    click.echo("input formats: " + ", ".join(FORMATS))
    click.echo(f"Hugging Face model types ({len(FAMILIES)}; others are tried through transformers' config class):")
    click.echo(textwrap.fill(", ".join(sorted(FAMILIES)), width=100, initial_indent="  ", subsequent_indent="  "))


@cli.command("rule")
@click.argument("code")
def rule_cmd(code: str) -> None:
    """Print the documentation of one rule (by code or name)."""
    from colint.rules import all_rules

    rules = all_rules()
    match = rules.get(code.upper()) or next((r for r in rules.values() if r.name == code), None)
    if match is None:
        raise fail(f"colint: error: unknown rule {code!r}; `colint rules` lists them")
    click.echo(match.render_doc())


@cli.command("schema")
@click.argument("which", type=click.Choice(["design", "report"]), default="design")
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, allow_dash=False),
    default=None,
    help="Write the JSON Schema to FILE instead of standard output.",
)
def schema_cmd(which: str, output: str | None) -> None:
    """Print a JSON Schema: of colint's own design-file format (design, docs/schema.md), or of
    `colint check --output-format json` (report, docs/output.md)."""
    import json

    if which == "report":
        from colint.reporters.json_schema import report_schema as make
    else:
        from colint.normalize.design_file import json_schema as make

    text = json.dumps(make(), indent=2) + "\n"
    if output is None:
        click.echo(text, nl=False)
        return
    write_or_fail(output, text)  # never a partial file


@cli.command("suggest")
@click.argument("path", type=click.Path(dir_okay=True, allow_dash=False, readable=False))
@settings_options()
@click.option(
    "--budget-pct",
    type=click.FloatRange(min=0),
    default=2.0,
    show_default=True,
    help="Largest change of the total parameter count, in % of the original.",
)
@click.option(
    "--objective",
    type=click.Choice(["throughput", "latency", "frontier"]),
    default="throughput",
    show_default=True,
    help="throughput: prefill and decode step time weigh the same; latency: decode "
    "weighs 3x; frontier: tok/s/GPU on the throughput-interactivity frontier at --at-interactivity.",
)
@click.option(
    "--at-interactivity",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    metavar="TOK_S_USER",
    help="Rank by tok/s/GPU at this many tok/s per user (implies --objective frontier). [default: 50]",
)
@click.option(
    "--top",
    type=click.IntRange(min=1, max=50),
    default=5,
    show_default=True,
    help="How many verified variants to print.",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def suggest_cmd(path, flags, isolated, budget_pct, objective, at_interactivity, top, fmt) -> None:
    """Variants of the design within a parameter budget that pass every rule, ranked by estimated speed.

    Exit 0 when at least one variant passes, 1 when none does, 2 on an error."""
    from colint.errors import ColintError
    from colint.suggesting import PREFILL_WEIGHT, suggest

    path = one_path(path)
    opts = settings_at(path, flags, isolated)
    try:
        result = suggest(
            path,
            opts,
            budget_pct=budget_pct,
            objective=objective,
            top=top,
            at_interactivity=at_interactivity,
        )
    except ColintError as exc:
        raise fail_with(exc)
    if fmt == "json":
        import json

        click.echo(json.dumps(result.public(), indent=2))
    else:
        from colint.reporters.suggest_text import render

        click.echo(escape_lines(render(result, PREFILL_WEIGHT[result.objective])))
    raise click.exceptions.Exit(EXIT_CLEAN if result.candidates else EXIT_FINDINGS)


@cli.command("pareto")
@click.argument("path", type=click.Path(dir_okay=False, allow_dash=False))
@click.option(
    "--compare",
    "compare_path",
    type=click.Path(dir_okay=False, allow_dash=False),
    default=None,
    help="A second design whose frontier is put beside PATH's.",
)
@click.option(
    "--variant",
    "variants",
    multiple=True,
    metavar="KEY=VALUE",
    help="Compare against the design with this key of the file changed (repeatable; with --compare: "
    "applied to that file).",
)
@settings_options("gpus", "scenario", "dtype", "context_tokens", *INPUT)
@click.option("--kv-cache", default=None, help="KV-cache format: bf16, fp8, nvfp4, ... [default: bf16]")
@click.option("--prefill-tokens", type=click.IntRange(min=1), default=None, help="Tokens per prefill forward.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def pareto_cmd(path, compare_path, variants, flags, isolated, kv_cache, prefill_tokens, fmt) -> None:
    """The throughput-interactivity frontier of PATH within one scale-up domain (estimates): tok/s/GPU
    against tok/s/user over tp, ep, attention-DP and concurrency; --compare/--variant put a second
    design beside it.

    The project's [tool.colint] gpus, scenario, dtype, kv-dtype, context and input settings apply, as
    for check; the deployments (tp, ep, concurrency) are enumerated."""
    from colint.analysis.scenario import make_scenario
    from colint.errors import ColintError
    from colint.pareto import parse_variants, run

    opts = settings_at(path, {**flags, "kv_dtype": kv_cache}, isolated)
    try:
        sc = make_scenario(
            opts.scenario,
            dtype=opts.dtype,
            kv_cache=opts.kv_dtype,
            context=opts.context_tokens,
            prefill_tokens=prefill_tokens,
        )
        result = run(
            path,
            list(opts.gpus),
            sc,
            compare_path=compare_path,
            variant=parse_variants(variants),
            input_format=opts.input_format,
            vocab_size=opts.vocab_size,
        )
    except ColintError as exc:
        raise fail_with(exc)
    if fmt == "json":
        import json

        click.echo(json.dumps(result.public(), indent=2))
    else:
        from colint.reporters.pareto_text import render

        click.echo(escape_lines(render(result)))


@cli.command("report")
@click.argument("path", type=click.Path(dir_okay=True, allow_dash=False, readable=False))
@settings_options()
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False),
    help="report.html (every chart and the findings), or x.png / x.svg (one chart).",
)
@click.option(
    "--chart",
    type=click.Choice(list(CHARTS)),
    default=None,
    help="The chart a .png/.svg output holds. [default: roofline]",
)
@click.option(
    "--compare",
    "compare_path",
    type=click.Path(dir_okay=False, allow_dash=False),
    default=None,
    help="A second design whose frontier the frontier chart draws beside PATH's.",
)
@click.option(
    "--variant",
    "variants",
    multiple=True,
    metavar="KEY=VALUE",
    help="Draw the frontier of the design with this key changed beside PATH's (repeatable).",
)
def report_cmd(path, flags, isolated, output, chart, compare_path, variants) -> None:
    """Charts of the design on each GPU: roofline of every GEMM, step-time breakdown, pipeline balance,
    throughput-interactivity frontier.

    The HTML report has one section per --gpu; a .png/.svg output with several GPUs is written once per GPU
    (x-b200.png, ...). Exit 1 when a finding is at or above --fail-on (the report is written either way).
    Stacks of up to 1,000 layers (each layer is drawn and split exactly)."""
    import importlib.util
    import os

    ext = os.path.splitext(output)[1].lower()
    if ext not in (".html", ".htm", ".png", ".svg"):
        raise fail(f"colint: error: -o {output}: write a .html report or a .png/.svg chart")
    if chart is not None and ext in (".html", ".htm"):
        raise fail("colint: error: --chart picks the chart of a .png/.svg output; the HTML report holds all")
    if importlib.util.find_spec("matplotlib") is None:
        raise fail("colint: error: `colint report` needs matplotlib: pip install 'colint-llm[report]'")
    from colint.analysis.workload import analyse
    from colint.checking import build_targets, check_file, exit_code
    from colint.errors import ColintError
    from colint.reporting import report_data

    path = one_path(path)
    opts = settings_at(path, flags, isolated, strict=True)  # strict: charts of this file, never triaged away
    try:
        targets = build_targets(opts)
        result = check_file(path, targets, opts)
        if result.error is not None:
            raise result.error
        from colint.reporting import MAX_REPORT_LAYERS

        if result.spec.num_layers > MAX_REPORT_LAYERS:
            src = result.spec.sources.get("num_layers")
            raise ColintError(
                f"`colint report` charts stacks of up to {MAX_REPORT_LAYERS:,} layers; this one has "
                f"{result.spec.num_layers:,} (`colint check` reads it)",
                path=path,
                line=getattr(src, "line", None) or 1,
                column=getattr(src, "column", None) or 1,
            )
        other = None
        if compare_path or variants:
            from colint.pareto import load_design, parse_variants

            variant = parse_variants(variants)
            other = (
                compare_path or path,
                variant,
                load_design(compare_path or path, variant, input_format=opts.input_format, vocab_size=opts.vocab_size),
            )
        sections = [
            report_data(
                path,
                result.spec,
                analyse(result.spec, t.profile, t.scenario),
                [f for f in result.findings if f.gpu in (None, t.gpu)],
                compare=other,
            )
            for t in targets
        ]
    except ColintError as exc:
        raise fail_with(exc)
    write_report(output, sections, chart)
    raise click.exceptions.Exit(exit_code([result], opts.fail_on))


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

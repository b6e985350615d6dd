"""The model-design commands of colint's command line: inspect, gemm, ops, suggest, pareto, report.

Each declares its flags, calls the one function that computes, and writes the result; colint.cli.main
registers them on the ``colint`` group and imports this module only when one of them runs or is listed.
"""

from __future__ import annotations

import click

from colint.cli.options import INPUT, SCENARIO, one_path, review_options, settings_at, settings_options
from colint.cli.output import EXIT_CLEAN, EXIT_FINDINGS, escape_lines, fail, fail_with, write_or_echo, write_report
from colint.reporters.report_charts import CHARTS


def _echo_result(result, fmt: str, text) -> None:
    """A suggest or pareto result on stdout: its public JSON, or ``text()`` (the reporter's rendering) escaped."""
    if fmt == "json":
        import json

        click.echo(json.dumps(result.public(), indent=2))
    else:
        click.echo(escape_lines(text()))


@click.command("inspect")
@click.argument("path", type=click.Path(dir_okay=True, allow_dash=False, readable=False))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option(
    "--gpu",
    default=None,
    help="Add the per-GEMM roofline table and step estimates for this GPU profile (name or YAML path).",
)
@settings_options(*INPUT, *SCENARIO)
def inspect_cmd(path: str, fmt: str, gpu: str | None, flags: dict, isolated: bool) -> None:
    """Show the normalized spec, parameter counts and weight GEMMs of PATH (with --gpu: estimates).

    The input format, vocab size, scenario, dtype and parallelism come from the project's
    [tool.colint] / .colint.toml like for `check`, unless a flag gives them."""
    import json

    from colint.errors import ColintError
    from colint.design.inspecting import inspect_file

    path = one_path(path)
    opts = settings_at(path, {**flags, "gpus": [gpu] if gpu is not None else []}, isolated)
    try:  # estimates on request: the GPU of --gpu, the rest of the scenario as resolved
        info = inspect_file(path, opts, estimates=gpu is not None)
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


@click.command("gemm")
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
    from colint.reporters.estimates_text import gemm_json, gemm_text

    click.echo(gemm_json(g) if fmt == "json" else gemm_text(g, profile.name))


@click.command("ops")
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


@click.command("suggest")
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
    from colint.suggesting.search import PREFILL_WEIGHT, suggest

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
    from colint.reporters.suggest_text import render

    _echo_result(result, fmt, lambda: render(result, PREFILL_WEIGHT[result.objective]))
    raise click.exceptions.Exit(EXIT_CLEAN if result.candidates else EXIT_FINDINGS)


@click.command("pareto")
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
@settings_options("gpus", "scenario", "dtype", "kv_dtype", "context_tokens", "ep_overlap", *INPUT)
@click.option("--prefill-tokens", type=click.IntRange(min=1), default=None, help="Tokens per prefill forward.")
@click.option(
    "--serving",
    type=click.Choice(["aggregated", "disaggregated", "decode"]),
    default="aggregated",
    show_default=True,
    help="aggregated: each request's prefill shares the decode GPUs (chunked prefill, charged to throughput); "
    "disaggregated: separate prefill and decode pools, sized to balance; decode: decode steps alone.",
)
@click.option(
    "--isl", type=click.IntRange(min=1), default=None, help="Input tokens per request. [default: context - osl]"
)
@click.option("--osl", type=click.IntRange(min=1), default=None, help="Output tokens per request. [default: 1024]")
@click.option(
    "--total-gpus",
    type=click.IntRange(min=1),
    default=None,
    help="GPUs a deployment may use (disaggregated: both pools); past one scale-up domain a replica may span "
    "several (tp, ep or pipeline stages, priced at the link past the domain). [default: one scale-up domain]",
)
@click.option(
    "--ttft-limit",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    metavar="SECONDS",
    help="Leave out points whose time to first token exceeds this.",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def pareto_cmd(
    path,
    compare_path,
    variants,
    flags,
    isolated,
    prefill_tokens,
    serving,
    isl,
    osl,
    total_gpus,
    ttft_limit,
    fmt,
) -> None:
    """The throughput-interactivity frontier of PATH within one scale-up domain (estimates): tok/s/GPU
    against tok/s/user over tp, ep, attention-DP and concurrency, each request's --isl prefill charged as
    --serving says; --compare/--variant put a second design beside it.

    The project's [tool.colint] gpus, scenario, dtype, kv-dtype, context, ep-overlap and input settings
    apply, as for check; the deployments (tp, ep, concurrency) are enumerated."""
    from colint.errors import ColintError
    from colint.design.pareto import run_settings

    opts = settings_at(path, flags, isolated)
    try:
        result = run_settings(
            path,
            opts,
            compare_path=compare_path,
            variants=variants,
            prefill_tokens=prefill_tokens,
            serving=serving,
            isl=isl,
            osl=osl,
            total_gpus=total_gpus,
            ttft_limit_s=ttft_limit,
        )
    except ColintError as exc:
        raise fail_with(exc)
    from colint.reporters.pareto_text import render

    _echo_result(result, fmt, lambda: render(result))


@click.command("report")
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
    from colint.engine.checking import exit_code
    from colint.errors import ColintError
    from colint.design.reporting import report_file

    path = one_path(path)
    opts = settings_at(path, flags, isolated, strict=True)  # strict: charts of this file, never triaged away
    try:
        sections, result = report_file(path, opts, compare_path, variants)
    except ColintError as exc:
        raise fail_with(exc)
    write_report(output, sections, chart)
    raise click.exceptions.Exit(exit_code([result], opts.fail_on))


@click.command("diff")
@click.argument("base", type=click.Path(dir_okay=False, allow_dash=False, readable=False))
@click.argument("head", type=click.Path(dir_okay=False, allow_dash=False, readable=False))
@settings_options()
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown"]),
    default="text",
    show_default=True,
    help="text; json (the shape of `colint schema diff`); markdown (a table, for a job's step summary).",
)
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None, help="Write the report to this file.")
@review_options()
def diff_cmd(base, head, flags, isolated, fmt, output, frontier, fail_on_regression) -> None:
    """Compare two versions of a config: the parameter, weight-memory, KV and step-time deltas on each target GPU,
    and the findings new, fixed and unchanged (only new findings fail the run). Both are checked under HEAD's
    settings (its [tool.colint] and the flags); step times are estimates of colint's step model."""
    from colint.cli.check import report_diff
    from colint.design.diffing import diff_files
    from colint.errors import ColintError

    try:
        run = diff_files(base, head, flags, isolated=isolated, frontier=frontier)
    except ColintError as exc:
        raise fail_with(exc)
    raise click.exceptions.Exit(report_diff(run, fmt, output, fail_on_regression=fail_on_regression))

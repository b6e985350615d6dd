"""colint's command line. Owns the exit codes: 0 clean, 1 findings at/above --fail-on,
2 usage, input or internal error (always one line, never a traceback).

Heavy modules are imported inside the commands that need them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import click

from colint import __version__
from colint.reporters import REPORTERS
from colint.reporters.report_charts import CHARTS

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _fail(message: str) -> click.exceptions.Exit:
    click.echo(_escape(message), err=True)
    return click.exceptions.Exit(EXIT_ERROR)


def _fail_with(exc) -> click.exceptions.Exit:
    """_fail for a ColintError: located when it names a file, else ``colint: error: message``."""
    return _fail(f"colint: error: {exc.message}" if exc.path is None else exc.located())


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="colint")
def cli() -> None:
    """Lint LLM architectures for how well they run on a target GPU."""


@cli.command()
@click.argument("path", type=click.Path(dir_okay=True, allow_dash=False, readable=False))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--input-format", default=None, help="Force the input format instead of detecting it.")
@click.option(
    "--vocab-size",
    type=click.IntRange(min=1),
    default=None,
    help="Vocabulary size for formats whose vocab comes from a tokenizer (Megatron/NeMo).",
)
@click.option(
    "--gpu",
    default=None,
    help="Add the per-GEMM roofline table and step estimates for this GPU profile (name or YAML path).",
)
@click.option(
    "--scenario",
    type=click.Choice(["throughput", "latency", "long-context"]),
    default=None,
    help="[default: throughput]",
)
@click.option(
    "--dtype",
    default=None,
    help="GEMM format: bf16, fp16, fp8, fp8_block, nvfp4, mxfp4, int8, int8_wo, int4_wo. [default: bf16]",
)
@click.option("--tp", type=click.IntRange(min=1), default=None, help="Tensor-parallel size.")
@click.option("--ep", type=click.IntRange(min=1), default=None, help="Expert-parallel size.")
@click.option("--pp", type=click.IntRange(min=1), default=None, help="Pipeline-parallel size.")
@click.option(
    "--kvp",
    type=click.IntRange(min=1),
    default=None,
    help="KV (Helix) parallel size: GPUs per TP rank that split each sequence's KV cache.",
)
@click.option("--context", type=click.IntRange(min=1), default=None, help="Context length, tokens.")
@click.option(
    "--concurrency", type=click.IntRange(min=1), default=None, help="Concurrent decode sequences per replica."
)
@click.option("--kv-dtype", default=None, help="KV-cache format: bf16, fp8, nvfp4, ... [default: bf16]")
@click.option("--out-dtype", default=None, help="GEMM output format: bf16, fp8, fp32, ... [default: bf16]")
@click.option("--isolated", is_flag=True, help="Ignore pyproject.toml / .colint.toml files.")
def inspect(
    path: str,
    fmt: str,
    input_format: str | None,
    vocab_size: int | None,
    gpu: str | None,
    scenario: str | None,
    dtype: str | None,
    tp: int | None,
    ep: int | None,
    pp: int | None,
    kvp: int | None,
    context: int | None,
    concurrency: int | None,
    kv_dtype: str | None,
    out_dtype: str | None,
    isolated: bool,
) -> None:
    """Show the normalized spec, parameter counts and weight GEMMs of PATH (with --gpu: estimates).

    The input format, vocab size, scenario, dtype and parallelism come from the project's
    [tool.colint] / .colint.toml like for `check`, unless a flag gives them."""
    import json

    from colint.errors import ColintError
    from colint.inspect_data import inspect_spec
    from colint.loading import load
    from colint.normalize import normalize

    path = _one_path(path)
    flags = {
        "gpus": [gpu] if gpu is not None else [],
        "scenario": scenario,
        "dtype": dtype,
        "tp": tp,
        "ep": ep,
        "pp": pp,
        "context": context,
        "concurrency": concurrency,
        "select": [],
        "ignore": [],
        "extend_select": [],
        "fail_on": None,
        "input_format": input_format,
        "vocab_size": vocab_size,
        "kv_dtype": kv_dtype,
        "out_dtype": out_dtype,
        "kvp": kvp,
    }
    try:
        opts = _file_options(path, flags, isolated)
    except ColintError as exc:
        raise _fail_with(exc)
    try:
        spec = normalize(load(path), input_format=opts.input_format, vocab_size=opts.vocab_size)
    except ColintError as exc:
        raise _fail(exc.located(path))
    info = inspect_spec(spec, path)
    if gpu is not None:  # estimates on request: the GPU of --gpu, the rest of the scenario as resolved
        from colint.analysis.scenario import fit_to_model
        from colint.analysis.workload import analyse, summary
        from colint.checking import build_targets

        try:
            (target,) = build_targets(opts)
            info["estimates"] = summary(analyse(spec, target.profile, fit_to_model(target.scenario, spec)))
        except ColintError as exc:
            raise _fail_with(exc)
    if fmt == "json":
        click.echo(json.dumps(info, indent=2))
    else:
        from colint.reporters.inspect_text import render

        text = render(info)
        if "estimates" in info:
            from colint.reporters.estimates_text import render_estimates

            text += "\n" + render_estimates(info["estimates"])
        click.echo(_escape_lines(text))


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
        raise _fail_with(exc)
    if from_csv is not None:
        if dims:
            raise _fail("colint: error: give either M N K or --from-csv, not both")
        from colint.analysis.gemm_csv import estimate_csv

        try:
            text = estimate_csv(from_csv, profile, out_dtype=out_dtype)
        except ColintError as exc:
            raise _fail(exc.located())
        _write_or_echo(text, output)
        return
    if len(dims) != 3:
        raise _fail("colint: error: colint gemm needs M N K (three positive integers) or --from-csv FILE")
    from colint.analysis.gemm_model import estimate

    try:
        g = estimate(dims[0], dims[1], dims[2], dtype, profile, out_dtype)
    except ColintError as exc:
        raise _fail(f"colint: error: {exc.message}")
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
        raise _fail(exc.located() if getattr(exc, "path", None) else f"colint: error: {exc.message}")
    _write_or_echo(text, output)


def _write_or_echo(text: str, output: str | None) -> None:
    """A CSV result (gemm/ops --from-csv): to ``output`` atomically, else to stdout as it is."""
    if output:
        try:
            _write_atomic(output, text)
        except OSError as exc:
            raise _fail(f"{output}: error: cannot write: {exc.strerror or exc}")
    else:
        click.echo(text, nl=False)


@cli.command("profiles")
@click.argument("name", required=False)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def profiles_cmd(name: str | None, fmt: str) -> None:
    """List the GPU profiles, or show one (NAME or a YAML path) with its sources."""
    import json

    from colint.errors import ColintError
    from colint.hardware_profiles import list_profiles, load_profile, time_model

    try:
        if name is None:
            profiles = [load_profile(n) for n in list_profiles()]
            if fmt == "json":
                click.echo(json.dumps([p.model_dump(mode="json") for p in profiles], indent=2))
            else:
                from colint.reporters.estimates_text import render_profiles

                click.echo(render_profiles(profiles))
            return
        p = load_profile(name)
        tm = time_model(p)
    except ColintError as exc:
        raise _fail_with(exc)
    if fmt == "json":
        click.echo(json.dumps({**p.model_dump(mode="json"), "time_model": tm.model_dump(mode="json")}, indent=2))
    else:
        from colint.reporters.estimates_text import render_profile

        click.echo(render_profile(p, tm))


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


FORMATS = list(REPORTERS)


_SETTINGS_PARAMS = (
    "gpus",
    "scenario",
    "dtype",
    "tp",
    "ep",
    "pp",
    "context",
    "concurrency",
    "select",
    "ignore",
    "extend_select",
    "fail_on",
    "input_format",
    "vocab_size",
    "kv_dtype",
    "out_dtype",
    "kvp",
)


def _settings_options(fn):
    """Options that a project's [tool.colint] can also set (CLI flags override the file). The command
    receives them as ``overrides`` (the dict settings.resolve takes) and ``isolated``."""
    import functools

    @functools.wraps(fn)
    def with_overrides(**kw):
        overrides = _cli_overrides(**{name: kw.pop(name) for name in _SETTINGS_PARAMS})
        return fn(overrides=overrides, **kw)

    opts = [
        click.option(
            "--gpu",
            "gpus",
            multiple=True,
            help="Target GPU profile name or YAML path; repeat to lint for a fleet. [default: b200]",
        ),
        click.option(
            "--scenario",
            type=click.Choice(["throughput", "latency", "long-context"]),
            default=None,
            help="[default: throughput]",
        ),
        click.option(
            "--dtype",
            default=None,
            help="Weight/activation format: bf16, fp16, fp8, fp8_block, nvfp4, mxfp4, int8. [default: bf16]",
        ),
        click.option("--tp", default=None, help="Tensor-parallel size, or 'auto' (largest power of two that aligns)."),
        click.option("--ep", type=click.IntRange(min=1), default=None, help="Expert-parallel size."),
        click.option("--pp", type=click.IntRange(min=1), default=None, help="Pipeline-parallel size."),
        click.option("--kvp", type=click.IntRange(min=1), default=None, help="KV (Helix) parallel size."),
        click.option("--context", type=click.IntRange(min=1), default=None, help="Context length, tokens."),
        click.option(
            "--concurrency", type=click.IntRange(min=1), default=None, help="Concurrent decode sequences per GPU."
        ),
        click.option("--kv-dtype", default=None, help="KV-cache format: bf16, fp8, nvfp4, ... [default: bf16]"),
        click.option("--out-dtype", default=None, help="GEMM output format: bf16, fp8, fp32, ... [default: bf16]"),
        click.option(
            "--select",
            multiple=True,
            help="Rule codes, prefixes, names or families to run (repeatable; replaces the config's select).",
        ),
        click.option(
            "--ignore",
            multiple=True,
            help="Rule codes, prefixes, names or families to skip (repeatable; adds to the config's ignore).",
        ),
        click.option("--extend-select", multiple=True, help="Rules to run in addition to select (repeatable)."),
        click.option(
            "--fail-on",
            type=click.Choice(["error", "warning", "info", "never"]),
            default=None,
            help="Exit 1 when a finding at or above this severity is reported. [default: warning]",
        ),
        click.option("--input-format", default=None, help="Force the input format instead of detecting it."),
        click.option(
            "--vocab-size",
            type=click.IntRange(min=1),
            default=None,
            help="Vocabulary size for formats whose vocab comes from a tokenizer.",
        ),
        click.option("--isolated", is_flag=True, help="Ignore pyproject.toml / .colint.toml files."),
    ]
    for o in reversed(opts):
        with_overrides = o(with_overrides)
    return with_overrides


def _cli_overrides(
    gpus,
    scenario,
    dtype,
    tp,
    ep,
    pp,
    context,
    concurrency,
    select,
    ignore,
    extend_select,
    fail_on,
    input_format,
    vocab_size,
    kv_dtype=None,
    out_dtype=None,
    kvp=None,
) -> dict:
    def csv(values):
        return [v.strip() for item in values for v in item.split(",") if v.strip()]

    return {
        "gpus": list(gpus),
        "scenario": scenario,
        "dtype": dtype,
        "tp": _parallel(tp, "tp"),
        "ep": ep,
        "pp": pp,
        "context": context,
        "concurrency": concurrency,
        "select": csv(select),
        "ignore": csv(ignore),
        "extend_select": csv(extend_select),
        "fail_on": fail_on,
        "input_format": input_format,
        "vocab_size": vocab_size,
        "kv_dtype": kv_dtype,
        "out_dtype": out_dtype,
        "kvp": kvp,
    }


def _one_path(arg: str) -> str:
    """The config file a one-config command reads: a file, a checkpoint or HF cache folder, or a Hub id."""
    from colint.errors import ColintError
    from colint.sources import resolve_one

    try:
        return resolve_one(arg).path
    except ColintError as exc:
        raise _fail_with(exc)


def _write_atomic(path: str, text: str | bytes, expect: bytes | None = None) -> None:
    from colint.fileio import write_atomic

    write_atomic(path, text, expect=expect)


OUTPUT_FORMATS = FORMATS  # full, concise, text (= full), json, github, sarif, gitlab, markdown


@cli.command()
# readable=False: click's own access check made one unreadable file a usage error that aborted the whole run;
# each file's read error is its own located error instead (issue 19)
@click.argument("paths", nargs=-1, required=True, type=click.Path(allow_dash=True, readable=False))
@_settings_options
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
def check(
    paths,
    overrides,
    isolated,
    fmt,
    output,
    quiet,
    verbose,
    show_fixes,
    color,
    stdin_filename,
    strict,
    statistics,
    exit_zero,
    baseline,
    write_baseline,
    apply_fix,
    unsafe_fixes,
    show_diff,
    include,
    exclude,
) -> None:
    """Lint the architecture in each PATH for the target GPU(s).

    PATH is a config file, a directory (walked; a checkpoint folder means its config.json), a Hugging
    Face cache folder, a Hub id org/name[@revision] (only config.json is downloaded), or '-' (standard input)."""
    import os

    from colint.checking import check_grouped, grouped_exit_code, summary
    from colint.errors import ColintError
    from colint.sources import expand

    if fmt is None:
        fmt = "github" if os.environ.get("GITHUB_ACTIONS") == "true" else "full"
    if statistics and fmt not in ("full", "concise", "text", "json"):
        raise _fail("colint: error: --statistics prints text or json; drop --output-format " + fmt)
    try:
        found = expand(paths, include=include, exclude=exclude)
    except ColintError as exc:
        raise _fail_with(exc)
    for warning in found.warnings:
        click.echo(f"colint: warning: {warning}", err=True)
    if apply_fix and any(s.read_only for s in found.sources):
        src = next(s for s in found.sources if s.read_only)
        raise _fail(
            f"colint: error: {src.origin}: --fix does not rewrite the Hugging Face cache; copy "
            f"{src.path} out of it, or use --diff"
        )
    settings_dirs = found.settings_dirs()
    paths, stdin = _with_stdin(list(found.paths), stdin_filename)
    if stdin is not None and (apply_fix or write_baseline):
        raise _fail("colint: error: --fix and --write-baseline need files, not standard input")
    try:
        results, groups = check_grouped(
            paths,
            overrides,
            isolated=isolated,
            baseline_path=None if write_baseline else baseline,
            settings_dirs=settings_dirs,
            strict=strict,
            stdin=stdin,
            use_baseline=not write_baseline,
            parallel=True,
        )
    except ColintError as exc:
        raise _fail_with(exc)
    if write_baseline:
        from colint.suppression import render_baseline

        if _echo_errors(results):  # a baseline of the files that could be read would drop the others' findings
            click.echo(f"colint: {write_baseline} not written: fix the files above first", err=True)
            raise click.exceptions.Exit(EXIT_ERROR)
        text, n = render_baseline(results, write_baseline)
        try:
            _write_atomic(write_baseline, text)
        except OSError as exc:
            raise _fail(f"{write_baseline}: error: cannot write baseline: {exc.strerror or exc}")
        click.echo(f"colint: recorded {n} finding{'s' if n != 1 else ''} in {write_baseline}", err=True)
        raise click.exceptions.Exit(EXIT_CLEAN)
    if unsafe_fixes and not (apply_fix or show_diff):
        click.echo("colint: --unsafe-fixes does nothing without --fix or --diff; nothing was changed", err=True)
    if apply_fix or show_diff:
        from colint.checking import fix_grouped
        from colint.fix_text import unified_diff

        unfixed = [r.error is None for r in results]
        try:
            changed = fix_grouped(results, groups, unsafe=unsafe_fixes)
        except (ColintError, ValueError) as exc:
            raise _fail(f"colint: error: a fix could not be applied: {getattr(exc, 'message', exc)}")
        fix_failed = {i: r for i, r in enumerate(results) if unfixed[i] and r.error is not None}
        if show_diff:
            text = "".join(unified_diff(p, old, new) for p, old, new in changed)
            if text:
                click.echo(text, nl=False)
            if _echo_errors(results):
                raise click.exceptions.Exit(EXIT_ERROR)
            raise click.exceptions.Exit(EXIT_FINDINGS if changed and not exit_zero else EXIT_CLEAN)
        written, refused, done = 0, False, set()
        for p, old, new in changed:
            if os.path.realpath(p) in done:  # the same file named twice (or through a symlink): fixed once
                continue
            done.add(os.path.realpath(p))
            try:
                _write_atomic(p, new, expect=old.encode("utf-8"))
                written += 1
            except OSError as exc:
                click.echo(
                    f"{_escape(p)}: error: fixed file not written: {_escape(exc.strerror or str(exc))}", err=True
                )
                refused = True
        if written:
            click.echo(f"colint: fixed {written} file{'s' if written != 1 else ''}", err=True)
        if changed:
            results, groups = check_grouped(
                paths,
                overrides,
                isolated=isolated,
                baseline_path=baseline,
                settings_dirs=settings_dirs,
                strict=strict,
                parallel=True,
            )
            for i, r in fix_failed.items():  # a file whose fixing failed keeps that error in the report
                results[i] = r
    from colint.reporters.console import use_colour

    colour = output is None and use_colour(color, sys.stdout.isatty())
    summ = summary(results)
    report = _render_report(
        fmt,
        results,
        summ,
        groups,
        statistics=statistics,
        quiet=quiet,
        verbose=verbose,
        show_fixes=show_fixes,
        colour=colour,
    )
    if statistics:  # the counts name no file: the files that could not be checked are told apart
        _echo_errors(results)
    _emit(report, output, colour)
    if (apply_fix or show_diff) and refused:
        raise click.exceptions.Exit(EXIT_ERROR)
    code = grouped_exit_code(results, groups)
    if exit_zero and code == EXIT_FINDINGS:
        code = EXIT_CLEAN
    raise click.exceptions.Exit(code)


def _emit(report: str, output, colour: bool = False) -> None:
    if output:
        try:
            _write_atomic(output, report + "\n")
        except OSError as exc:
            raise _fail(f"{output}: error: cannot write report: {exc.strerror or exc}")
    elif report:
        click.echo(report, color=colour or None)  # None: click strips escapes off a non-terminal


def _escape(text: str) -> str:
    from colint.reporters.escape import control, workflow_safe

    return workflow_safe(control(text))


def _echo_errors(results) -> int:
    """Print the located error of every file that could not be checked (stderr), as plain `check` reports them;
    return how many. For the modes whose output is not a report (--diff, --write-baseline, --statistics)."""
    failed = [r for r in results if r.error is not None]
    for r in failed:
        click.echo(_escape(r.error.located(r.path)), err=True)
    return len(failed)


def _escape_lines(text: str) -> str:
    """A multi-line text report with what came from files made safe for a terminal or CI log."""
    from colint.reporters.escape import log_lines

    return log_lines(text)


def _with_stdin(paths: list[str], stdin_filename: str | None):
    """Replace PATH '-' by the --stdin-filename (or '-') and read standard input once:
    ``(paths, (name, bytes, syntax) | None)``."""
    if "-" not in paths:
        if stdin_filename is not None:
            raise _fail("colint: error: --stdin-filename names standard input; pass '-' as the PATH")
        return paths, None
    if paths.count("-") > 1:
        raise _fail("colint: error: '-' (standard input) can be given once")
    from colint.loading import MAX_BYTES
    from colint.reporters.console import stdin_syntax

    raw = sys.stdin.buffer.read(MAX_BYTES + 1)
    name = stdin_filename or "-"
    return [name if p == "-" else p for p in paths], (name, raw, stdin_syntax(stdin_filename, raw))


def _render_report(
    fmt: str,
    results,
    summ: dict,
    groups,
    *,
    statistics: bool,
    colour: bool,
    quiet: bool = False,
    verbose: bool = False,
    show_fixes: bool = False,
) -> str:
    if statistics:
        from colint.checking import statistics as stats

        rows = stats(results)
        if fmt == "json":
            import json

            return json.dumps(rows, indent=2)
        return (
            "\n".join(f"{r['count']:>5}  {r['code']}  {r['severity']:<7}  {r['name']}" for r in rows) or "no findings"
        )
    from colint.checking import estimate_labels
    from colint.reporters import ReportInput
    from colint.rules import all_rules

    labels = tuple(estimate_labels(results, groups))
    ri = ReportInput(rules=all_rules, colour=colour, labels=labels, quiet=quiet, show_fixes=show_fixes, verbose=verbose)
    return REPORTERS[fmt](results, summ, ri)


@cli.command("config")
@click.argument("path", default=".", type=click.Path(allow_dash=False))
@_settings_options
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def config_cmd(path, overrides, isolated, fmt) -> None:
    """Show the settings in force for PATH (a file or directory) and where each comes from."""
    from colint.errors import ColintError
    from colint.settings import find_config, render_effective, resolve

    try:
        cfg = None if isolated else find_config(path)
        eff = resolve(cfg, overrides)
        if overrides["select"] or overrides["ignore"] or overrides["extend_select"]:
            from colint.rules import select_rules

            select_rules(eff.values["select"], eff.values["ignore"], eff.values["extend_select"])
    except ColintError as exc:
        raise _fail_with(exc)
    if fmt == "json":
        import json

        click.echo(
            json.dumps(
                {"path": path, "config": eff.config.label if eff.config else None, "settings": eff.as_dict()}, indent=2
            )
        )
    else:
        click.echo(_escape_lines(render_effective(eff, path)))


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
                        "options": {k: v[0] for k, v in r.options.items()},
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
        raise _fail(f"colint: error: unknown rule {code!r}; `colint rules` lists them")
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
    try:  # never a partial file
        _write_atomic(output, text)
    except OSError as exc:
        raise _fail(f"{output}: error: cannot write: {exc.strerror or exc}")


def _file_effective(path: str, overrides: dict, isolated: bool):
    """The settings in force for ``path`` (its nearest [tool.colint] / .colint.toml, then the flags)."""
    import os

    from colint.settings import find_config, resolve

    cfg = None if isolated else find_config(os.path.dirname(os.path.abspath(path)))
    return resolve(cfg, overrides)


def _file_options(path: str, overrides: dict, isolated: bool):
    """CheckOptions in force for ``path``."""
    return _file_effective(path, overrides, isolated).check_options()


@cli.command("suggest")
@click.argument("path", type=click.Path(dir_okay=True, allow_dash=False, readable=False))
@_settings_options
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
def suggest_cmd(path, overrides, isolated, budget_pct, objective, at_interactivity, top, fmt) -> None:
    """Variants of the design within a parameter budget that pass every rule, ranked by estimated speed.

    Exit 0 when at least one variant passes, 1 when none does, 2 on an error."""
    from colint.errors import ColintError
    from colint.suggesting import PREFILL_WEIGHT, suggest

    path = _one_path(path)
    try:
        result = suggest(
            path,
            _file_options(path, overrides, isolated),
            budget_pct=budget_pct,
            objective=objective,
            top=top,
            at_interactivity=at_interactivity,
        )
    except ColintError as exc:
        raise _fail_with(exc)
    if fmt == "json":
        import json

        click.echo(json.dumps(result.public(), indent=2))
    else:
        from colint.reporters.suggest_text import render

        click.echo(_escape_lines(render(result, PREFILL_WEIGHT[result.objective])))
    raise click.exceptions.Exit(EXIT_CLEAN if result.candidates else EXIT_FINDINGS)


@cli.command("pareto")
@click.argument("path", type=click.Path(dir_okay=False, allow_dash=False))
@click.option(
    "--gpu",
    "gpus",
    multiple=True,
    help="GPU profile name or YAML path; repeat for several. [default: the project's gpus, else b200]",
)
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
@click.option(
    "--scenario",
    type=click.Choice(["throughput", "latency", "long-context"]),
    default=None,
    help="Context and prefill tokens per forward (deployments and concurrency are enumerated). [default: throughput]",
)
@click.option(
    "--dtype",
    default=None,
    help="GEMM format: bf16, fp16, fp8, fp8_block, nvfp4, mxfp4, int8, int8_wo, int4_wo. [default: bf16]",
)
@click.option("--kv-cache", default=None, help="KV-cache format: bf16, fp8, nvfp4, ... [default: bf16]")
@click.option("--context", type=click.IntRange(min=1), default=None, help="Context length per sequence, tokens.")
@click.option("--prefill-tokens", type=click.IntRange(min=1), default=None, help="Tokens per prefill forward.")
@click.option("--input-format", default=None, help="Force the input format instead of detecting it.")
@click.option(
    "--vocab-size",
    type=click.IntRange(min=1),
    default=None,
    help="Vocabulary size for formats whose vocab comes from a tokenizer (Megatron/NeMo).",
)
@click.option("--isolated", is_flag=True, help="Ignore pyproject.toml / .colint.toml files.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def pareto_cmd(
    path,
    gpus,
    compare_path,
    variants,
    scenario,
    dtype,
    kv_cache,
    context,
    prefill_tokens,
    input_format,
    vocab_size,
    isolated,
    fmt,
) -> None:
    """The throughput-interactivity frontier of PATH within one scale-up domain (estimates): tok/s/GPU
    against tok/s/user over tp, ep, attention-DP and concurrency; --compare/--variant put a second
    design beside it."""
    from colint.analysis.scenario import make_scenario
    from colint.errors import ColintError
    from colint.pareto import parse_variants, run

    try:
        # the project's [tool.colint] gpus, scenario, dtype, context and input settings apply, as for check
        opts = _file_options(
            path,
            _cli_overrides(
                gpus, scenario, dtype, None, None, None, context, None, (), (), (), None, input_format, vocab_size
            ),
            isolated,
        )
        sc = make_scenario(
            opts.scenario, dtype=opts.dtype, kv_cache=kv_cache, context=opts.context, prefill_tokens=prefill_tokens
        )
        result = run(
            path,
            opts.gpus,
            sc,
            compare_path=compare_path,
            variant=parse_variants(variants),
            input_format=opts.input_format,
            vocab_size=opts.vocab_size,
        )
    except ColintError as exc:
        raise _fail_with(exc)
    if fmt == "json":
        import json

        click.echo(json.dumps(result.public(), indent=2))
    else:
        from colint.reporters.pareto_text import render

        click.echo(_escape_lines(render(result)))


@cli.command("report")
@click.argument("path", type=click.Path(dir_okay=True, allow_dash=False, readable=False))
@_settings_options
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
def report_cmd(path, overrides, isolated, output, chart, compare_path, variants) -> None:
    """Charts of the design on each GPU: roofline of every GEMM, step-time breakdown, pipeline balance,
    throughput-interactivity frontier.

    The HTML report has one section per --gpu; a .png/.svg output with several GPUs is written once per GPU
    (x-b200.png, ...). Exit 1 when a finding is at or above --fail-on (the report is written either way).
    Stacks of up to 1,000 layers (each layer is drawn and split exactly)."""
    import importlib.util
    import os

    ext = os.path.splitext(output)[1].lower()
    if ext not in (".html", ".htm", ".png", ".svg"):
        raise _fail(f"colint: error: -o {output}: write a .html report or a .png/.svg chart")
    if chart is not None and ext in (".html", ".htm"):
        raise _fail("colint: error: --chart picks the chart of a .png/.svg output; the HTML report holds all")
    if importlib.util.find_spec("matplotlib") is None:
        raise _fail("colint: error: `colint report` needs matplotlib: pip install 'colint-llm[report]'")
    from colint.analysis.workload import analyse
    from colint.checking import build_targets, check_file, exit_code
    from colint.errors import ColintError
    from colint.report_data import report_data

    path = _one_path(path)
    try:
        eff = _file_effective(path, overrides, isolated)
        opts = eff.check_options()
        opts.strict = True  # the user asked for charts of this file: never triage it away
        targets = build_targets(opts)
        result = check_file(path, targets, opts)
        if result.error is not None:
            raise result.error
        from colint.report_data import MAX_REPORT_LAYERS

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
        raise _fail_with(exc)
    try:
        from colint.reporters.html_report import render_chart, render_html
    except ImportError as exc:
        raise _fail(f"colint: error: `colint report` needs matplotlib ({exc}): pip install 'colint-llm[report]'")
    from functools import partial

    outputs: list[tuple[str, Callable[[], str | bytes]]]
    if ext in (".png", ".svg"):  # one chart per file: with several GPUs, one file each (x-b200.png, x-h100-sxm.png)
        stem = os.path.splitext(output)[0]
        outputs = [
            (
                output if len(sections) == 1 else f"{stem}-{d['gpu']}{ext}",
                partial(render_chart, d, chart or "roofline", ext[1:]),
            )
            for d in sections
        ]
    else:
        outputs = [(output, partial(render_html, sections))]
    for out_path, render in outputs:
        try:
            _write_atomic(out_path, render())
        except OSError as exc:
            raise _fail(f"{out_path}: error: cannot write: {exc.strerror or exc}")
        click.echo(f"colint: wrote {out_path}", err=True)
    raise click.exceptions.Exit(exit_code([result], eff.values["fail_on"]))


@cli.command("lsp")
@_settings_options
def lsp_cmd(overrides, isolated) -> None:
    """Serve diagnostics to an editor over stdio (Language Server Protocol; needs pip install 'colint-llm[lsp]')."""
    import importlib.util

    if importlib.util.find_spec("pygls") is None:
        raise _fail("colint: error: `colint lsp` needs pygls: pip install 'colint-llm[lsp]'")
    from colint.lsp import create_server

    create_server(overrides, isolated).start_io()


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
            click.echo(_escape(exc.located()), err=True)
        else:
            click.echo(
                _escape(
                    f"colint: internal error: {type(exc).__name__}: {exc} (please report this with the input file)"
                ),
                err=True,
            )
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())

"""colint's command line. Owns the exit codes: 0 clean, 1 findings at/above --fail-on,
2 usage, input or internal error (always one line, never a traceback).

Heavy modules are imported inside the commands that need them.
"""

from __future__ import annotations

import sys

import click

from colint import __version__
from colint.reporters.report_charts import CHARTS

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _fail(message: str) -> "click.exceptions.Exit":
    click.echo(message, err=True)
    return click.exceptions.Exit(EXIT_ERROR)


def _fail_with(exc) -> "click.exceptions.Exit":
    """_fail for a ColintError: located when it names a file, else ``colint: error: message``."""
    return _fail(f"colint: error: {exc.message}" if exc.path is None else exc.located())


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
@click.option("--gpu", default=None, help="Add the per-GEMM roofline table and step estimates for this GPU "
              "profile (name or YAML path).")
@click.option("--scenario", type=click.Choice(["throughput", "latency", "long-context"]), default="throughput",
              show_default=True)
@click.option("--dtype", default=None, help="GEMM format: bf16, fp16, fp8, fp8_block, nvfp4, mxfp4, int8, "
              "int8_wo, int4_wo. [default: bf16]")
@click.option("--tp", type=click.IntRange(min=1), default=None, help="Tensor-parallel size.")
@click.option("--ep", type=click.IntRange(min=1), default=None, help="Expert-parallel size.")
@click.option("--pp", type=click.IntRange(min=1), default=None, help="Pipeline-parallel size.")
@click.option("--context", type=click.IntRange(min=1), default=None, help="Context length, tokens.")
@click.option("--concurrency", type=click.IntRange(min=1), default=None,
              help="Concurrent decode sequences per replica.")
def inspect(path: str, fmt: str, input_format: str | None, vocab_size: int | None, gpu: str | None, scenario: str,
            dtype: str | None, tp: int | None, ep: int | None, pp: int | None, context: int | None,
            concurrency: int | None) -> None:
    """Show the normalized spec, parameter counts and weight GEMMs of PATH (with --gpu: estimates)."""
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
    if gpu is not None:
        from colint.analysis.scenario import make_scenario
        from colint.analysis.workload import analyse, summary
        from colint.hardware_profiles import load_profile

        try:
            profile = load_profile(gpu)
            sc = make_scenario(scenario, dtype=dtype, tp=tp, ep=ep, pp=pp, context=context,
                               concurrency=concurrency, gpu=profile.name)
            info["estimates"] = summary(analyse(spec, profile, sc))
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
        click.echo(text)


GEMM_OUT_COLUMNS = ("sol_s", "estimate_s", "bound", "tile_efficiency", "wave_efficiency", "arithmetic_intensity",
                    "math_s", "memory_s", "ridge")


@cli.command("gemm")
@click.argument("dims", nargs=-1, type=click.IntRange(min=1))
@click.option("--gpu", default="b200", show_default=True, help="GPU profile name or YAML path.")
@click.option("--dtype", default="bf16", show_default=True,
              help="bf16, fp16, fp8, fp8_block, nvfp4, mxfp4, int8, int8_wo, int4_wo.")
@click.option("--out-dtype", default=None, help="Output format (default bf16): bf16, fp16, fp8, fp32, nvfp4, ...")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--from-csv", "from_csv", type=click.Path(dir_okay=False, allow_dash=True), default=None,
              help="Read rows with columns dtype,m,n,k (others passed through); write them back as CSV with "
                   "the estimates added.")
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
        if output:
            try:
                _write_atomic(output, text)
            except OSError as exc:
                raise _fail(f"{output}: error: cannot write: {exc.strerror or exc}")
        else:
            click.echo(text, nl=False)
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

        click.echo(json.dumps({k: (None if isinstance(v, float) and math.isinf(v) else v) for k, v in d.items()},
                              indent=2))
    else:
        from colint.reporters.estimates_text import render_gemm

        click.echo(render_gemm({**d, "m_star": None if g.m_star == float("inf") else g.m_star}, profile.name))


@cli.command("ops")
@click.option("--gpu", default="b200", show_default=True, help="GPU profile name or YAML path.")
@click.option("--from-csv", "from_csv", type=click.Path(dir_okay=False, allow_dash=True), required=True,
              help="Rows with the measured-kernel columns (op_name selects the model: generation_attention, "
                   "context_attention, mla_generation, mla_context, moe, all_reduce, all_gather, reduce_scatter, "
                   "alltoall, moe_a2a); written back with estimate_ms and sol_ms added.")
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


FORMATS = ["text", "json", "github", "sarif", "gitlab"]


_SETTINGS_PARAMS = ("gpus", "scenario", "dtype", "tp", "ep", "pp", "context", "concurrency", "select", "ignore",
                    "extend_select", "fail_on", "input_format", "vocab_size")


def _settings_options(fn):
    """Options that a project's [tool.colint] can also set (CLI flags override the file). The command
    receives them as ``overrides`` (the dict settings.resolve takes) and ``isolated``."""
    import functools

    @functools.wraps(fn)
    def with_overrides(**kw):
        overrides = _cli_overrides(**{name: kw.pop(name) for name in _SETTINGS_PARAMS})
        return fn(overrides=overrides, **kw)

    opts = [
        click.option("--gpu", "gpus", multiple=True, help="Target GPU profile name or YAML path; repeat to lint "
                     "for a fleet. [default: b200]"),
        click.option("--scenario", type=click.Choice(["throughput", "latency", "long-context"]), default=None,
                     help="[default: throughput]"),
        click.option("--dtype", default=None, help="Weight/activation format: bf16, fp16, fp8, fp8_block, nvfp4, "
                     "mxfp4, int8. [default: bf16]"),
        click.option("--tp", default=None, help="Tensor-parallel size, or 'auto' (largest power of two that aligns)."),
        click.option("--ep", type=click.IntRange(min=1), default=None, help="Expert-parallel size."),
        click.option("--pp", type=click.IntRange(min=1), default=None, help="Pipeline-parallel size."),
        click.option("--context", type=click.IntRange(min=1), default=None, help="Context length, tokens."),
        click.option("--concurrency", type=click.IntRange(min=1), default=None,
                     help="Concurrent decode sequences per GPU."),
        click.option("--select", multiple=True, help="Rule codes, prefixes, names or families to run (repeatable; "
                     "replaces the config's select)."),
        click.option("--ignore", multiple=True, help="Rule codes, prefixes, names or families to skip (repeatable; "
                     "adds to the config's ignore)."),
        click.option("--extend-select", multiple=True, help="Rules to run in addition to select (repeatable)."),
        click.option("--fail-on", type=click.Choice(["error", "warning", "info", "never"]), default=None,
                     help="Exit 1 when a finding at or above this severity is reported. [default: warning]"),
        click.option("--input-format", default=None, help="Force the input format instead of detecting it."),
        click.option("--vocab-size", type=click.IntRange(min=1), default=None,
                     help="Vocabulary size for formats whose vocab comes from a tokenizer."),
        click.option("--isolated", is_flag=True, help="Ignore pyproject.toml / .colint.toml files."),
    ]
    for o in reversed(opts):
        with_overrides = o(with_overrides)
    return with_overrides


def _cli_overrides(gpus, scenario, dtype, tp, ep, pp, context, concurrency, select, ignore, extend_select, fail_on,
                   input_format, vocab_size) -> dict:
    def csv(values):
        return [v.strip() for item in values for v in item.split(",") if v.strip()]

    return {"gpus": list(gpus), "scenario": scenario, "dtype": dtype, "tp": _parallel(tp, "tp"), "ep": ep, "pp": pp,
            "context": context, "concurrency": concurrency, "select": csv(select), "ignore": csv(ignore),
            "extend_select": csv(extend_select), "fail_on": fail_on, "input_format": input_format,
            "vocab_size": vocab_size}


def _write_atomic(path: str, text: str | bytes) -> None:
    from colint.fileio import write_atomic

    write_atomic(path, text)


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(allow_dash=False))
@_settings_options
@click.option("--format", "fmt", type=click.Choice(FORMATS), default=None,
              help="Output format. [default: github when GITHUB_ACTIONS=true, else text]")
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False), default=None,
              help="Write the report to this file instead of stdout.")
@click.option("--statistics", is_flag=True, help="Print a count per rule instead of the findings.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings are reported (2 still means an error).")
@click.option("--baseline", type=click.Path(dir_okay=False), default=None,
              help="Report only findings not recorded in this baseline file.")
@click.option("--write-baseline", type=click.Path(dir_okay=False), default=None,
              help="Record every current finding in this baseline file, then exit 0.")
@click.option("--fix", "apply_fix", is_flag=True,
              help="Apply the first safe fix of each finding in place (function-preserving: padding).")
@click.option("--unsafe-fixes", is_flag=True,
              help="With --fix/--diff, also apply architecture-changing fixes (fine for a design, not a checkpoint).")
@click.option("--diff", "show_diff", is_flag=True, help="Print the fixes as a unified diff; write nothing.")
def check(paths, overrides, isolated, fmt, output, statistics, exit_zero, baseline, write_baseline, apply_fix,
          unsafe_fixes, show_diff) -> None:
    """Lint the architecture in each PATH for the target GPU(s)."""
    import os

    from colint.checking import check_grouped, exit_code, summary
    from colint.errors import ColintError

    if fmt is None:
        fmt = "github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text"
    if statistics and fmt not in ("text", "json"):
        raise _fail("colint: error: --statistics prints text or json; drop --format " + fmt)
    try:
        results, groups = check_grouped(list(paths), overrides, isolated=isolated,
                                        baseline_path=None if write_baseline else baseline)
    except ColintError as exc:
        raise _fail_with(exc)
    if write_baseline:
        from colint.suppression import render_baseline

        text, n = render_baseline(results, write_baseline)
        try:
            _write_atomic(write_baseline, text)
        except OSError as exc:
            raise _fail(f"{write_baseline}: error: cannot write baseline: {exc.strerror or exc}")
        click.echo(f"colint: recorded {n} finding{'s' if n != 1 else ''} in {write_baseline}", err=True)
        failed = any(r.error is not None for r in results)
        raise click.exceptions.Exit(EXIT_ERROR if failed else EXIT_CLEAN)
    if apply_fix or show_diff or unsafe_fixes:
        from colint.checking import fix_grouped
        from colint.fixing import unified_diff

        try:
            changed = fix_grouped(results, groups, unsafe=unsafe_fixes)
        except (ColintError, ValueError) as exc:
            raise _fail(f"colint: error: a fix could not be applied: {getattr(exc, 'message', exc)}")
        if show_diff:
            text = "".join(unified_diff(p, old, new) for p, old, new in changed)
            if text:
                click.echo(text, nl=False)
            if any(r.error is not None for r in results):
                raise click.exceptions.Exit(EXIT_ERROR)
            raise click.exceptions.Exit(EXIT_FINDINGS if changed and not exit_zero else EXIT_CLEAN)
        for p, _old, new in changed:
            try:
                _write_atomic(p, new)
            except OSError as exc:
                raise _fail(f"{p}: error: cannot write fixed file: {exc.strerror or exc}")
        if changed:
            click.echo(f"colint: fixed {len(changed)} file{'s' if len(changed) != 1 else ''}", err=True)
            results, groups = check_grouped(list(paths), overrides, isolated=isolated, baseline_path=baseline)
    summ = summary(results)
    report = _render_report(fmt, results, summ, groups, statistics=statistics,
                            colour=output is None and sys.stdout.isatty())
    if output:
        try:
            _write_atomic(output, report + "\n")
        except OSError as exc:
            raise _fail(f"{output}: error: cannot write report: {exc.strerror or exc}")
    else:
        click.echo(report)
    code = max((exit_code([r for r, g in zip(results, groups) if g is eff], eff.values["fail_on"])
                for eff in {id(g): g for g in groups}.values()), default=EXIT_CLEAN)
    if exit_zero and code == EXIT_FINDINGS:
        code = EXIT_CLEAN
    raise click.exceptions.Exit(code)


def _render_report(fmt: str, results, summ: dict, groups, *, statistics: bool, colour: bool) -> str:
    if statistics:
        from colint.checking import statistics as stats

        rows = stats(results)
        if fmt == "json":
            import json

            return json.dumps(rows, indent=2)
        return "\n".join(f"{r['count']:>5}  {r['code']}  {r['severity']:<7}  {r['name']}" for r in rows) \
            or "no findings"
    if fmt == "json":
        from colint.reporters.json_report import render as render_json

        return render_json(results, summ)
    if fmt == "github":
        from colint.reporters.github import render as render_github

        return render_github(results, summ)
    if fmt == "sarif":
        from colint.reporters.sarif import render as render_sarif
        from colint.rules import all_rules

        return render_sarif(results, all_rules())
    if fmt == "gitlab":
        from colint.reporters.gitlab import render as render_gitlab

        return render_gitlab(results)
    from colint.reporters.text import render as render_text

    contexts = []
    for eff in {id(g): g for g in groups}.values():
        v = eff.values
        c = "estimates: " + ", ".join(v["gpus"]) + f", {v['dtype'] or 'bf16'}, scenario {v['scenario']}"
        if c not in contexts:
            contexts.append(c)
    return render_text(results, summ, colour=colour, context_line="; ".join(contexts) or None)


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

        click.echo(json.dumps({"path": path, "config": eff.config.label if eff.config else None,
                               "settings": eff.as_dict()}, indent=2))
    else:
        click.echo(render_effective(eff, path))


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

    from colint.spec.colint_schema import json_schema

    text = json.dumps(json_schema(), indent=2) + "\n"
    if output is None:
        click.echo(text, nl=False)
        return
    try:  # never a partial file
        _write_atomic(output, text)
    except OSError as exc:
        raise _fail(f"{output}: error: cannot write: {exc.strerror or exc}")


def _file_options(path: str, overrides: dict, isolated: bool):
    """CheckOptions in force for ``path`` (its nearest [tool.colint] / .colint.toml, then the flags)."""
    import os

    from colint.settings import find_config, resolve

    cfg = None if isolated else find_config(os.path.dirname(os.path.abspath(path)))
    return resolve(cfg, overrides).check_options()


@cli.command("suggest")
@click.argument("path", type=click.Path(dir_okay=False, allow_dash=False))
@_settings_options
@click.option("--budget-pct", type=click.FloatRange(min=0), default=2.0, show_default=True,
              help="Largest change of the total parameter count, in % of the original.")
@click.option("--objective", type=click.Choice(["throughput", "latency"]), default="throughput", show_default=True,
              help="throughput: prefill and decode step time weigh the same; latency: decode weighs 3x.")
@click.option("--top", type=click.IntRange(min=1, max=50), default=5, show_default=True,
              help="How many verified variants to print.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def suggest_cmd(path, overrides, isolated, budget_pct, objective, top, fmt) -> None:
    """Variants of the design within a parameter budget that pass every rule, ranked by estimated speed.

    Exit 0 when at least one variant passes, 1 when none does, 2 on an error."""
    from colint.errors import ColintError
    from colint.suggest import render_text, suggest

    try:
        result = suggest(path, _file_options(path, overrides, isolated), budget_pct=budget_pct,
                         objective=objective, top=top)
    except ColintError as exc:
        raise _fail_with(exc)
    if fmt == "json":
        import json

        click.echo(json.dumps(result.public(), indent=2))
    else:
        click.echo(render_text(result))
    raise click.exceptions.Exit(EXIT_CLEAN if result.candidates else EXIT_FINDINGS)


@cli.command("report")
@click.argument("path", type=click.Path(dir_okay=False, allow_dash=False))
@_settings_options
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="report.html (every chart and the findings), or x.png / x.svg (one chart).")
@click.option("--chart", type=click.Choice(list(CHARTS)), default=None,
              help="The chart a .png/.svg output holds. [default: roofline]")
def report_cmd(path, overrides, isolated, output, chart) -> None:
    """Charts of the design on a GPU: roofline of every GEMM, step-time breakdown, pipeline balance."""
    import importlib.util
    import os

    ext = os.path.splitext(output)[1].lower()
    if ext not in (".html", ".htm", ".png", ".svg"):
        raise _fail(f"colint: error: -o {output}: write a .html report or a .png/.svg chart")
    if chart is not None and ext in (".html", ".htm"):
        raise _fail("colint: error: --chart picks the chart of a .png/.svg output; the HTML report holds all")
    if importlib.util.find_spec("matplotlib") is None:
        raise _fail("colint: error: `colint report` needs matplotlib: pip install 'colint[report]'")
    from colint.analysis.workload import analyse
    from colint.checking import build_targets, check_file
    from colint.errors import ColintError
    from colint.report import report_data

    try:
        opts = _file_options(path, overrides, isolated)
        targets = build_targets(opts)[:1]
        result = check_file(path, targets, opts)
        if result.error is not None:
            raise result.error
        workload = analyse(result.spec, targets[0].profile, targets[0].scenario)
    except ColintError as exc:
        raise _fail_with(exc)
    data = report_data(path, result.spec, workload, result.findings)
    try:
        from colint.reporters.report_html import render_chart, render_html
    except ImportError as exc:
        raise _fail(f"colint: error: `colint report` needs matplotlib ({exc}): pip install 'colint[report]'")
    try:
        if ext in (".png", ".svg"):
            _write_atomic(output, render_chart(data, chart or "roofline", ext[1:]))
        else:
            _write_atomic(output, render_html(data))
    except OSError as exc:
        raise _fail(f"{output}: error: cannot write: {exc.strerror or exc}")
    click.echo(f"colint: wrote {output}", err=True)


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

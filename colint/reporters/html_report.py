"""Draw `colint report` charts with matplotlib (Agg) and wrap them in one self-contained HTML file.

Draws only: the numbers come from colint.design.reporting. matplotlib is imported inside these
functions (the `report` command's path only), never at colint's start-up.
"""

from __future__ import annotations

import base64
import html
import io
import math

from colint.reporters.pareto_chart import draw
from colint.reporters.report_charts import CHARTS

FIG_SIZE_IN = (8.0, 5.0)
FIG_SIZES_IN = {"roofline": (10.5, 5.5)}  # its legend (roofs, regimes, the numbered GEMMs) sits right of the axes
DPI = 110
LABELLED_PER_REGIME = 4  # roofline: the costliest GEMMs of each regime get a number and a legend entry
REGIME_STYLE = {"prefill": ("o", "#1f77b4"), "decode": ("^", "#d62728")}
COMPONENT_COLOURS = {
    "attention projections": "#4c72b0",
    "attention core": "#8172b3",
    "FFN": "#55a868",
    "experts": "#c44e52",
    "LM head": "#ccb974",
    "collectives": "#64b5cd",
    "overheads": "#8c8c8c",
}


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _roofline(ax, d: dict) -> None:
    bw = d["memory_bytes_per_s"]
    pts = d["points"]
    ais = [p["arithmetic_intensity"] for p in pts] or [1.0]
    x_lo = min(min(ais) / 2, 0.5)
    x_hi = max(max(ais) * 2, max(r["ridge"] for r in d["roofs"]) * 4)
    top = max(r["peak_flops_per_s"] for r in d["roofs"])
    ax.plot([x_lo, top / bw], [x_lo * bw / 1e12, top / 1e12], color="black", lw=1.4, label=f"HBM {bw / 1e12:.1f} TB/s")
    _roofs(ax, d, x_lo, x_hi)
    numbered = _gemm_points(ax, pts)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x_lo, x_hi)
    ax.set_xlabel("arithmetic intensity (FLOP/B)")
    ax.set_ylabel("attained TFLOP/s (estimate)")
    ax.set_title(
        f"{d.get('model', '')} on {d['gpu']}, {d.get('deployment', d['gemm_format'])}\n"
        "Roofline: every weight GEMM of a prefill and a decode step (estimate)",
        fontsize=9,
    )
    handles, _ = ax.get_legend_handles_labels()
    ax.legend(
        handles=handles + numbered,
        fontsize=6.5,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        borderaxespad=0.0,
        title="numbers: costliest GEMMs",
        title_fontsize=6.5,
    )
    ax.grid(True, which="both", alpha=0.2)


def _roofs(ax, d: dict, x_lo: float, x_hi: float) -> None:
    """One compute roof per peak (formats with the same peak share one; the GEMMs' format drawn solid), each
    labelled at the left edge with its formats, peak and ridge point."""
    by_peak: dict[float, list[dict]] = {}
    for r in d["roofs"]:  # formats with the same peak share one roof (bf16/fp16, fp8/fp8_block/mxfp8)
        by_peak.setdefault(r["peak_flops_per_s"], []).append(r)
    for peak_flops, group in by_peak.items():
        peak = peak_flops / 1e12
        main = any(r["format"] == d["gemm_format"] for r in group)
        ridge = group[0]["ridge"]
        ax.plot(
            [ridge, x_hi],
            [peak, peak],
            lw=1.6 if main else 0.8,
            ls="-" if main else "--",
            color="black" if main else "grey",
        )
        ax.plot([x_lo, ridge], [peak, peak], lw=0.6, ls=":", color="lightgrey")  # guide to the label
        names = "/".join(r["format"] for r in group)
        ax.annotate(
            f"{names} {peak:,.0f} TF/s, ridge {ridge:.0f} FLOP/B",
            (x_lo * 1.15, peak),
            ha="left",
            va="bottom",
            fontsize=7,
            color="black" if main else "dimgrey",
        )


def _gemm_points(ax, pts: list[dict]) -> list:
    """The GEMMs of each regime as dots sized by their share of the step; the costliest numbered. Returns the
    legend handles of the numbered ones."""
    numbered: list = []
    placed: list = []
    for regime, (marker, colour) in REGIME_STYLE.items():
        sel = [p for p in pts if p["regime"] == regime]
        if not sel:
            continue
        ax.scatter(
            [p["arithmetic_intensity"] for p in sel],
            [p["attained_flops_per_s"] / 1e12 for p in sel],
            s=[18 + 260 * p["step_share"] for p in sel],
            marker=marker,
            color=colour,
            alpha=0.65,
            edgecolors="white",
            linewidths=0.5,
            label=f"{regime} GEMMs (size = share of step)",
            zorder=3,
        )
        # the GEMMs that cost most get a number beside their dot, spelled out in the legend
        for p in sorted(sel, key=lambda p: -p["step_share"])[:LABELLED_PER_REGIME]:
            numbered.append(_number(ax, p, len(numbered) + 1, regime, colour, placed))
    return numbered


def _number(ax, p: dict, n: int, regime: str, colour: str, placed: list):
    """Write number ``n`` beside GEMM ``p``'s dot (beside, not over, the numbers already ``placed`` there) and
    return its legend handle."""
    from matplotlib.lines import Line2D

    xy = (p["arithmetic_intensity"], p["attained_flops_per_s"] / 1e12)
    # numbers of GEMMs at (nearly) the same point go side by side, not on top of each other
    same = sum(abs(math.log10(xy[0] / q[0])) < 0.04 and abs(math.log10(xy[1] / q[1])) < 0.04 for q in placed)
    placed.append(xy)
    ax.annotate(
        str(n),
        xy,
        fontsize=7,
        fontweight="bold",
        color=colour,
        xytext=(4 + 7 * same, 3),
        textcoords="offset points",
        zorder=4,
    )
    return Line2D(
        [],
        [],
        ls="none",
        marker=f"${n}$",
        color=colour,
        ms=6,
        label=f"{p['name'].split('.', 1)[-1]} ({regime}, {p['step_share'] * 100:.0f}% of the step)",
    )


def _time(ax, d: dict) -> None:
    regimes = list(d["regimes"])
    left = [0.0] * len(regimes)
    for comp in d["components"]:
        shares = [d["regimes"][r]["shares"][comp] * 100 for r in regimes]
        bars = ax.barh(regimes, shares, left=left, color=COMPONENT_COLOURS.get(comp), label=comp, height=0.55)
        for bar, s in zip(bars, shares):
            if s >= 6:
                ax.text(
                    bar.get_x() + bar.get_width() / 2,
                    bar.get_y() + bar.get_height() / 2,
                    f"{s:.0f}%",
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="white",
                )
        left = [a + b for a, b in zip(left, shares)]
    ax.set_yticks(range(len(regimes)))
    ax.set_yticklabels([f"{r}\n{d['regimes'][r]['step_s'] * 1e3:,.2f} ms/step" for r in regimes], fontsize=8)
    ax.set_xlim(0, 100)
    ax.set_xlabel("share of the estimated step time (%)")
    ax.set_title(
        f"{d.get('model', '')} on {d.get('gpu', '')}, {d.get('deployment', '')}\nWhere the step time goes (estimate)",
        fontsize=9,
    )
    ax.legend(fontsize=7, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.14))


def _pipeline(ax, d: dict) -> None:
    rows = d["rows"]
    series = [
        ("prefill_best_imbalance", "best split, prefill", "-", "o", "#1f77b4"),
        ("prefill_even_imbalance", "even split (L/pp), prefill", "none", "s", "#1f77b4"),
        ("decode_best_imbalance", "best split, decode", "-", "^", "#d62728"),
        ("decode_even_imbalance", "even split (L/pp), decode", "none", "D", "#d62728"),
    ]
    drawn = set()
    for key, label, ls, marker, colour in series:
        xs = [r["pp"] for r in rows if r[key] is not None]
        ys = [r[key] * 100 for r in rows if r[key] is not None]
        if xs:
            drawn.add(key.split("_")[1])
            ax.plot(
                xs, ys, ls=ls, marker=marker, color=colour, label=label, ms=5, mfc="none" if ls == "none" else colour
            )
    ax.set_xlabel("pipeline stages (pp)")
    ax.set_ylabel("slowest stage vs mean (%)")
    ax.set_xticks([r["pp"] for r in rows])
    what = "best contiguous split" + (
        " and even split (L/pp, where pp divides L)"
        if "even" in drawn
        else f"; no pp in {rows[0]['pp']}-{rows[-1]['pp']} divides {d['layers']}, so no even split"
        if rows
        else ""
    )
    ax.set_title(
        f"{d.get('model', '')} on {d.get('gpu', '')}, {d.get('deployment', '')}\n"
        f"Pipeline-stage imbalance of {d['layers']} layers: {what} (estimate)",
        fontsize=9,
    )
    ax.legend(fontsize=7)
    ax.grid(True, alpha=0.2)


# chart name -> (its key in report_data, the drawing); the names are CHARTS' (a chart without a drawing fails here)
def _frontier(ax, d: dict) -> None:

    draw(ax, d)


_DRAWINGS = {"roofline": _roofline, "time": _time, "pipeline": _pipeline, "frontier": _frontier}
DRAW = {name: (name, _DRAWINGS[name]) for name in CHARTS}


def render_chart(data: dict, chart: str, fmt: str = "png") -> bytes:
    """One chart as PNG or SVG bytes."""
    plt = _pyplot()
    key, draw = DRAW[chart]
    fig, ax = plt.subplots(figsize=FIG_SIZES_IN.get(chart, FIG_SIZE_IN), dpi=DPI)
    try:
        draw(ax, data[key])
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, dpi=DPI, metadata={"Software": None} if fmt == "png" else {"Date": None})
        return buf.getvalue()
    finally:
        plt.close(fig)


def _ms(s: float | None) -> str:
    return "—" if s is None else f"{s * 1e3:,.2f} ms"


def _section(data: dict) -> str:
    """One GPU's part of the report: summary, the charts as embedded PNGs, the findings."""
    e = html.escape
    imgs = []
    for chart, title in CHARTS.items():
        b64 = base64.b64encode(render_chart(data, chart, "png")).decode("ascii")
        caption = f"{title}: {data.get('model', '')} on {data['gpu']}, {data.get('deployment', '')}"
        imgs.append(
            f'<figure><img alt="{e(caption)}" src="data:image/png;base64,{b64}">'
            f"<figcaption>{e(caption)}</figcaption></figure>"
        )
    steps = data["steps"]
    rows = []
    for f in data["findings"]:
        loc = f"{f['key'] or ''}" + (f":{f['line']}" if f.get("line") else "")
        fixes = "<br>".join(f"{e(x['safety'])}: {e(x['title'])}" for x in f.get("fixes", []))
        rows.append(
            f'<tr class="{e(f["severity"])}"><td>{e(f["severity"])}</td><td>{e(f["code"])}</td>'
            f"<td><code>{e(loc)}</code></td><td>{e(f['message'])}</td><td>{fixes}</td></tr>"
        )
    findings = (
        (
            "<table><tr><th>severity</th><th>code</th><th>key</th><th>message</th><th>fixes</th></tr>"
            + "".join(rows)
            + "</table>"
        )
        if rows
        else "<p>No findings.</p>"
    )
    notes = "".join(f"<li>{e(n)}</li>" for n in data["notes"])
    summary = (
        f"<p>{e(data['model_type'] or data['format'])} · {data['params_total']:,} parameters "
        f"({data['params_active']:,} active per token) · {data['layers']} layers · H={data['hidden_size']}</p>"
        f"<p>Prefill: {_ms(steps['prefill']['estimate_s'])} per step of {steps['prefill']['tokens']:,} "
        f"tokens ({steps['prefill']['tokens_per_s'] or 0:,.0f} tok/s) · Decode: "
        f"{_ms(steps['decode']['estimate_s'])} per step of {steps['decode']['tokens']:,} sequences "
        f"({steps['decode']['tokens_per_s'] or 0:,.0f} tok/s)</p>"
        f'<p class="label">{e(data["label"])}. Every time is an estimate of colint\'s GEMM time model, '
        "not a measurement.</p>"
    )
    return f"""<section id="gpu-{e(data["gpu"])}">
<h2>On {e(data["gpu"])} ({e(data.get("deployment", ""))})</h2>
{summary}
{("<ul>" + notes + "</ul>") if notes else ""}
{"".join(imgs)}
<h3>Findings on {e(data["gpu"])} ({len(data["findings"])})</h3>
{findings}
</section>"""


def render_html(sections) -> str:
    """The whole report: one section per GPU (``sections``: report_data dicts, or one of them)."""
    if isinstance(sections, dict):
        sections = [sections]
    e = html.escape
    first = sections[0]
    gpus = ", ".join(d["gpu"] for d in sections)
    toc = (
        "<p>GPUs: " + " · ".join(f'<a href="#gpu-{e(d["gpu"])}">{e(d["gpu"])}</a>' for d in sections) + "</p>"
        if len(sections) > 1
        else ""
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>colint report: {e(first.get("model", first["path"]))}</title>
<style>
body{{font-family:system-ui,sans-serif;max-width:1180px;margin:2em auto;color:#222}}
figure{{margin:1.5em 0}} img{{max-width:100%}} figcaption{{font-size:.85em;color:#555}}
table{{border-collapse:collapse;font-size:.85em}} td,th{{border:1px solid #ddd;padding:4px 6px;text-align:left;
vertical-align:top}} tr.error td:first-child{{color:#b00}} tr.warning td:first-child{{color:#a60}}
.label{{color:#555;font-size:.85em}}
</style></head><body>
<h1>colint report: {e(first.get("model", ""))} (<code>{e(first["path"])}</code>) on {e(gpus)}</h1>
{toc}
{"".join(_section(d) for d in sections)}
</body></html>
"""

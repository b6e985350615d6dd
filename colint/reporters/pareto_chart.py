"""Draw the throughput–interactivity frontier (`colint report --chart frontier`) on a matplotlib Axes.

Draws only: the numbers come from colint.design.reporting.frontier_chart (colint.analysis.frontier).
"""

from __future__ import annotations

COLOURS = ("#1f77b4", "#d95f02")  # design A, design B
LABELS_PER_DESIGN = 8  # deployment labels drawn per design (the frontier's segments, widest first)


def draw(ax, d: dict) -> None:
    serving = d.get("serving")  # which serving mode, how many GPUs, what was charged
    xs_all, ys_all = [], []
    for i, design in enumerate(d["designs"]):
        x, y = _design(ax, design, i, len(d["designs"]))
        xs_all += x
        ys_all += y
    for u in d["levels"]:
        ax.axvline(u, color="grey", lw=0.6, ls=":", zorder=1)
    _axes(ax, d, xs_all, ys_all)
    ax.set_xlabel(
        "interactivity: tokens/s per user (1 / decode ITL"
        + ("" if not serving or serving.startswith("decode") else " + the prefill charged to it")
        + "; estimate)"
    )
    ax.set_ylabel("throughput: tokens/s per GPU (estimate)")
    ax.set_title(
        f"Throughput-interactivity frontier on {d['gpu']} (one domain of {d['domain_size']} GPUs; "
        "labels: deployment ×concurrency)"
        + (f"\n{serving if len(serving) <= 110 else serving[:109] + '…'}" if serving else ""),
        fontsize=9,
    )
    if xs_all:
        ax.legend(fontsize=7, loc="lower left")
    else:
        ax.text(
            0.5,
            0.5,
            f"no deployment of up to {d['total_gpus']} GPUs holds the weights and one "
            "sequence\n(a narrower format, --dtype fp8 or nvfp4, or more --total-gpus may)",
            ha="center",
            va="center",
            transform=ax.transAxes,
            fontsize=9,
        )
    ax.grid(True, which="both", alpha=0.2)


def _design(ax, design: dict, i: int, designs: int) -> tuple[list, list]:
    """Design ``i``'s deployments as faint dots, its frontier as a line, the frontier's widest segments labelled.
    Returns the frontier's (x, y) values."""
    colour = COLOURS[i % len(COLOURS)]
    tag = "AB"[i] if designs > 1 else ""
    pts = design["points"]
    if pts:
        ax.scatter(
            [p[0] for p in pts],
            [p[1] for p in pts],
            s=6,
            color=colour,
            alpha=0.18,
            linewidths=0,
            label=f"{tag + ': ' if tag else ''}every deployment x concurrency that fits",
            zorder=2,
        )
    front = design["frontier"]
    if not front:
        return [], []
    x = [p["tokens_per_s_per_user"] for p in front]
    y = [p["tokens_per_s_per_gpu"] for p in front]
    ax.plot(
        x,
        y,
        "-o",
        color=colour,
        ms=3.5,
        lw=1.6,
        zorder=3,
        label=f"{tag + ': ' if tag else ''}frontier of {_short(design['name'])}",
    )
    for p in _declutter(design["labelled"]):
        xy = (p["tokens_per_s_per_user"], p["tokens_per_s_per_gpu"])
        ax.annotate(
            f"{p['deployment']} ×{p['concurrency']}",
            xy,
            xytext=(4, 5 if i == 0 else -10),
            textcoords="offset points",
            fontsize=6.5,
            color=colour,
            zorder=4,
        )
    return x, y


def _axes(ax, d: dict, xs_all: list, ys_all: list) -> None:
    """Log axes with plain tick labels (the interactivity levels among the ticks), fitted to the frontiers."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    ax.set_xscale("log")
    ax.set_yscale("log")
    plain = FuncFormatter(lambda v, _pos: f"{v:,.0f}" if v >= 1 else f"{v:g}")
    ax.set_xticks([u for u in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000) if u not in d["levels"]] + d["levels"])
    ax.xaxis.set_major_formatter(plain)
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.yaxis.set_major_formatter(plain)
    if xs_all:
        ax.set_xlim(min(xs_all) / 1.6, max(xs_all) * 1.6)
        ax.set_ylim(min(ys_all) / 2.5, max(ys_all) * 2.5)


def _declutter(rows: list[dict], dx: float = 0.12, dy: float = 0.18) -> list[dict]:
    """At most LABELS_PER_DESIGN labels, highest throughput first, none within (dx, dy) decades of one
    already kept (neighbouring deployments on the frontier would print over each other)."""
    import math

    kept: list[dict] = []
    for p in sorted(rows, key=lambda p: -p["tokens_per_s_per_gpu"]):
        x, y = math.log10(p["tokens_per_s_per_user"]), math.log10(p["tokens_per_s_per_gpu"])
        if all(
            abs(x - math.log10(q["tokens_per_s_per_user"])) > dx or abs(y - math.log10(q["tokens_per_s_per_gpu"])) > dy
            for q in kept
        ):
            kept.append(p)
        if len(kept) == LABELS_PER_DESIGN:
            break
    return kept


def _short(name: str, width: int = 48) -> str:
    import os

    base, _, rest = name.partition(" [")
    s = os.path.basename(base) + (" [" + rest if rest else "")
    return s if len(s) <= width else s[: width - 1] + "…"

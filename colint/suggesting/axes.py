"""The neighbourhood `colint suggest` searches: which of a file's keys vary, on which aligned grids, and how
a point of the grid becomes an edited, normalized variant.

The dimensions a designer owns — hidden size H, FFN width H′, layers L, query heads, KV heads,
routed experts E and expert width H′ₑ — vary on aligned grids around the original (H and H′ by the
tile width times the tensor-parallel size, heads keeping head_dim, KV heads dividing the heads,
experts on EP-friendly counts, layers by whole periods of the layer pattern). A point's edits are
spliced into the original text (colint.fixing.fix_text), the result loaded and normalized; :func:`feasible`
drops grid points that a rule family would reject outright before anything is estimated.
"""

from __future__ import annotations

import math
from typing import Optional

from colint.analysis.padding import TILE
from colint.fixing.edited_document import edited_document
from colint.findings import Edit
from colint.fixing.fix_text import apply_edits, parse_key
from colint.loading import load_text
from colint.normalize import normalize
from colint.util.records import dataclass

H_STEPS = 3  # grid points on each side of the original
FFN_STEPS = 3
LAYER_STEPS = 3
HEAD_STEPS = 2
EXPERT_STEPS = 2


@dataclass
class Axis:
    field: str  # ModelSpec field ("hidden_size", ...)
    key: str  # the file's own key for it
    original: int
    values: list[int]  # candidate values, the original among them
    degree: int = 1  # polynomial degree of the searched quantities in this dimension
    step: int = 1  # the grid: probe nodes are multiples of it (an off-grid original is never a node)


def _is_prime(n: int) -> bool:
    return n > 1 and all(n % d for d in range(2, int(n**0.5) + 1))


def _lcm(a: int, b: int) -> int:
    return a * b // math.gcd(a, b)


def _grid(original: int, step: int, steps: int, lo: int = 1) -> list[int]:
    """Multiples of ``step`` nearest the original (``steps`` each side), plus the original."""
    base = round(original / step) * step
    vals = {original}
    for i in range(-steps, steps + 1):
        v = base + i * step
        if v >= lo:
            vals.add(v)
    return sorted(vals)


def _file_key(spec, doc, field_name: str) -> Optional[str]:
    """The key of ``field_name`` in this file, when the file holds the spec's value there."""
    src = spec.sources.get(field_name)
    if src is None or src.default:
        return None
    value = doc.get(parse_key(src.key))
    expected = getattr(spec, field_name, None) if field_name != "num_experts" else None
    if not isinstance(value, int) or isinstance(value, bool):
        return None
    if expected is not None and value != expected:
        return None
    return src.key


def _main_kinds(spec):
    return [k for k, n in zip(spec.layer_kinds, spec.layer_counts()) if n]


def design_axes(
    spec, doc, scenario, pad_vocab: bool = False
) -> tuple[list[Axis], Optional[tuple[str, str, int]], list[str]]:
    """The dimensions to vary, and the heads tie (heads key, H key, head_dim) when the file derives
    head_dim as H / heads (heads then follow H so that head_dim stays)."""
    notes: list[str] = []
    kinds = _main_kinds(spec)
    axes, tie = _attention_axes(spec, doc, scenario.tp, {k.mixer.kind for k in kinds}, notes)
    axes += _ffn_axes(spec, doc, scenario, kinds)
    v_key = _file_key(spec, doc, "vocab_size")
    v_step = TILE * scenario.tp
    if pad_vocab and v_key and spec.vocab_size and spec.vocab_size % v_step:
        # not a searched dimension: when the original's vocabulary draws a CL202 warning or error, the
        # zero-padding it asks for goes into every variant (safe on a trained checkpoint), so that an
        # unaligned vocabulary does not reject them all
        padded = -(-spec.vocab_size // v_step) * v_step
        axes.append(Axis("vocab_size", v_key, spec.vocab_size, [spec.vocab_size, padded]))  # both are nodes
    axes += _layer_axes(spec, doc, scenario.pp, notes)
    axes = [a for a in axes if len(a.values) > 1]
    return axes, tie, notes


def _attention_axes(spec, doc, tp: int, mixers: set, notes: list[str]):
    """The hidden size, query-head and KV-head axes, and the heads tie when head_dim is derived from H."""
    axes: list[Axis] = []
    tie = None
    h_key = _file_key(spec, doc, "hidden_size")
    heads_key = _file_key(spec, doc, "num_heads") if mixers & {"attention", "mla"} else None
    hd_src = spec.sources.get("head_dim")
    head_dim_in_file = hd_src is not None and not hd_src.default
    tied = (
        "attention" in mixers
        and not head_dim_in_file
        and spec.head_dim
        and spec.num_heads
        and spec.num_heads * spec.head_dim == spec.hidden_size
    )
    if h_key:
        h = spec.hidden_size
        if tied:
            if heads_key is None:
                notes.append("hidden_size kept: head_dim is derived from it and the head count has no key")
            else:
                step = _lcm(TILE, spec.head_dim * tp)
                vals = [v for v in _grid(h, step, H_STEPS, lo=step) if v % spec.head_dim == 0]
                axes.append(Axis("hidden_size", h_key, h, vals, degree=2, step=step))
                tie = (heads_key, h_key, spec.head_dim)
        else:
            axes.append(
                Axis("hidden_size", h_key, h, _grid(h, 2 * TILE, H_STEPS, lo=2 * TILE), degree=2, step=2 * TILE)
            )
    if heads_key and not tie:
        nh = spec.num_heads
        base = 8 if nh >= 32 else (4 if nh >= 8 else 1)
        step = _lcm(base, tp)
        vals = [v for v in _grid(nh, step, HEAD_STEPS, lo=step) if v % tp == 0]
        axes.append(Axis("num_heads", heads_key, nh, vals, step=step))
    kv_key = _file_key(spec, doc, "num_kv_heads") if "attention" in mixers else None
    if kv_key:
        nkv = spec.num_kv_heads
        top = max(spec.num_heads * 2, nkv)
        # at least tp KV heads (fewer replicate the KV cache: CL701), so KV bytes per GPU stay linear
        kv_vals = ({nkv} if nkv >= tp else set()) | {
            1 << i for i in range(0, 12) if max(tp, nkv // 4) <= (1 << i) <= min(top, max(nkv * 4, tp))
        }
        axes.append(Axis("num_kv_heads", kv_key, nkv, sorted(kv_vals), step=tp))
    return axes, tie


def _ffn_axes(spec, doc, scenario, kinds) -> list[Axis]:
    """The dense FFN width, and the routed experts' count and width (the first MoE kind's)."""
    tp, ep = scenario.tp, scenario.ep
    axes: list[Axis] = []
    moe = [k.ffn for k in kinds if k.ffn.kind == "moe"]
    i_key = _file_key(spec, doc, "intermediate_size") if any(k.ffn.kind == "dense" for k in kinds) else None
    if i_key and spec.intermediate_size:
        step = TILE * tp
        grid = _grid(spec.intermediate_size, step, FFN_STEPS, lo=step)
        axes.append(Axis("intermediate_size", i_key, spec.intermediate_size, grid, step=step))
    if not moe:
        return axes
    f = moe[0]
    e_key = _file_key(spec, doc, "num_experts")
    if e_key and doc.get(_parse(e_key)) == f.num_experts:
        e = f.num_experts
        step = max(8, ep, 1 << max(0, (e // 4).bit_length() - 1))
        step = _lcm(step, ep)
        vals = [v for v in _grid(e, step, EXPERT_STEPS, lo=step) if v > f.top_k and v % ep == 0]
        axes.append(Axis("num_experts", e_key, e, vals, step=step))
    ie_key = _file_key(spec, doc, "moe_intermediate_size")
    if ie_key and doc.get(_parse(ie_key)) == f.expert_intermediate_size and f.expert_intermediate_size:
        step = TILE * (tp if ep == 1 else 1)
        grid = _grid(f.expert_intermediate_size, step, FFN_STEPS, lo=step)
        axes.append(Axis("moe_intermediate_size", ie_key, f.expert_intermediate_size, grid, step=step))
    return axes


def _layer_axes(spec, doc, pp: int, notes: list[str]) -> list[Axis]:
    """The layer count, in whole periods of the layer pattern on counts that split over pp (none, with a note,
    where the pattern does not repeat or the file lists per-layer values)."""
    l_key = _file_key(spec, doc, "num_layers")
    prefix, period = pattern_period(spec.layer_pattern)
    if l_key and not spec.per_layer_lists and period > max(4, spec.num_layers // 4):
        notes.append("num_layers kept: the layer pattern does not repeat")
    elif l_key and not spec.per_layer_lists:
        n = spec.num_layers
        # whole periods of the layer pattern (interleaved MoE / global-attention layers), on pp
        # layer counts that split over pipeline stages: never a prime (issue 17: 80 -> 79 layers for -0.04%)
        # unless --pp asks for multiples of it; the ranking prefers counts that split over more common pp sizes
        vals = sorted(
            {n}
            | {
                v
                for v in (n + i * period for i in range(-2 * LAYER_STEPS * pp, 2 * LAYER_STEPS * pp + 1))
                if v > prefix + period and v % pp == 0 and (pp > 1 or not _is_prime(v))
            }
        )
        near = sorted(vals, key=lambda v: (abs(v - n), v))[: 2 * LAYER_STEPS + 1]
        return [Axis("num_layers", l_key, n, sorted(near), step=pp)]
    elif l_key:
        notes.append("num_layers kept: the file lists per-layer values")
    return []


def _parse(key: str):

    return parse_key(key)


def edits_for(axes: list[Axis], tie, values: tuple[int, ...]) -> dict[str, int]:
    """File edits (key -> value) of one point of the grid; unchanged keys are left out."""
    out: dict[str, int] = {}
    for a, v in zip(axes, values):
        if v != a.original:
            out[a.key] = int(v)
        if tie and a.key == tie[1]:
            heads_orig = a.original // tie[2]
            if v // tie[2] != heads_orig:
                out[tie[0]] = int(v // tie[2])
    return out


def variant(doc, edits: dict[str, int], input_format, vocab_size):
    """Load + normalize the original text with ``edits`` applied: (text, doc, spec). A YAML variant is
    built in memory from the loaded original (colint.fixing.edited_document: no second ruamel parse,
    which took ~0.3 s per variant of a 185 kB file); a JSON one, or one the splice cannot express,
    is parsed from the edited text."""
    edit_list = [Edit(key=k, old=doc.get(_parse(k)), new=v) for k, v in edits.items()]
    vdoc = edited_document(doc, edit_list)
    if vdoc is None:
        vdoc = load_text(apply_edits(doc, edit_list), doc.path, syntax=doc.syntax)
    return vdoc.text, vdoc, normalize(vdoc, input_format=input_format, vocab_size=vocab_size)


def pattern_period(pattern: list[int]) -> tuple[int, int]:
    """(prefix, period): the layer pattern repeats with ``period`` after ``prefix`` leading layers
    (DeepSeek's first dense layers: (3, 1); Llama-4's MoE every 2nd and global attention every 4th
    layer: (0, 4)). Layer counts per kind are linear in L only along L ≡ L₀ (mod period)."""
    n = len(pattern)
    for period in range(1, min(n, 16) + 1):
        for prefix in range(0, min(n - period, 8) + 1):
            if all(pattern[i] == pattern[i - period] for i in range(prefix + period, n)):
                return prefix, period
    return 0, n


def feasible(points, axes, tie, spec, scenario):
    """Cheap constraints every rule family enforces (the real check verifies the finalists)."""
    import numpy as np

    ok = np.ones(points.shape[0], dtype=bool)
    col = {a.field: i for i, a in enumerate(axes)}
    tp = scenario.tp
    if tie and "hidden_size" in col:
        heads = points[:, col["hidden_size"]] // tie[2]
    elif "num_heads" in col:
        heads = points[:, col["num_heads"]]
    else:
        heads = np.full(points.shape[0], spec.num_heads)
    if "vocab_size" in col:  # the padded vocabulary only (see design_axes)
        ok &= points[:, col["vocab_size"]] == max(axes[col["vocab_size"]].values)
    if "num_kv_heads" in col:
        kv = points[:, col["num_kv_heads"]]
        ok &= (kv <= heads) & (heads % np.maximum(kv, 1) == 0)
    if tp > 1 and ("num_heads" in col or tie):
        ok &= heads % tp == 0
    if "num_heads" in col and not tie:
        hd_src = spec.sources.get("head_dim")
        if hd_src is None or hd_src.default:  # CL001: H must split into the heads when head_dim is derived
            h = points[:, col["hidden_size"]] if "hidden_size" in col else np.full(points.shape[0], spec.hidden_size)
            ok &= h % heads == 0
    return ok

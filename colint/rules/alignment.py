"""CL2xx alignment (guideline 2): GEMM dimensions per shard vs the tiles the kernels use.

Every dimension is judged where the kernel sees it: per shard (column-parallel N/tp,
row-parallel K/tp, routed experts whole under EP or split by tp under expert TP), in the
scenario's format. Three levels (issue 4, docs/design.md §6):

* below the format's hard element multiple (16-byte rows: 16 FP8/INT8, 32 FP4) in a format whose
  kernels refuse it → error (a hard constraint); in BF16/FP16 an unaligned path that runs: graded;
* not a multiple of 128 → graded by the estimated step loss (the severity policy of
  colint.rules.base: options ``warning_loss_pct`` / ``error_loss_pct``);
* a multiple of 128 but not of the cooperative tile (256 on Blackwell's 2-SM UMMA) → reported only
  where the time model finds a cost (``coop_min_loss_pct``), graded the same way.

One finding per spec field, listing the affected GEMMs in ``details``/``evidence``. Waste is an
estimate of the GEMM time model: each affected GEMM is re-estimated with the dimension padded
to the aligned value and charged for the part of its time that the padding does not buy
(``colint.analysis.padding``); the sum over the step is the step-time effect.

Where the dimensions come from: colint.rules.gemm_dims; how CL201 judges a field's widths and which
fixes it offers: colint.rules.alignment_widths. This module declares the four rules.
"""

from __future__ import annotations

import math

from colint.analysis.deployments import aligned_tp
from colint.analysis.padding import Dim
from colint.findings import Severity
from colint.rules.alignment_widths import attention_widths, judge_width, mla_latent
from colint.rules.base import Context, Family, Option, RuleDoc, edit, fix, rule
from colint.rules.fix_builders import edit_key, param_delta, round_up
from colint.rules.gemm_dims import (
    TILE,
    collect_dims,
    field_value,
    hard_multiple,
    location_field,
    pad_waste,
    refuses_unaligned,
    step_effect_pct,
    tp_shard,
    unique_dims,
)

FAMILY = Family(name="alignment", number=2)
SOURCES = (
    "NVIDIA co-design blog, guideline 2 and Fig. 5 (multiples of 128; 256/512 on clusterMMA/CGA)",
    "NVIDIA Matrix Multiplication Background guide: tile and wave quantization, Tensor Core multiples",
    "cuBLAS Tensor Core usage: 16-byte aligned leading dimensions (8 BF16, 16 FP8, 32 FP4 elements)",
)


# --------------------------------------------------------------------------- CL201
@rule(
    code="CL201",
    name="dim-not-tile-aligned",
    severity="error",
    summary="A weight-GEMM dimension per shard is not a multiple of the tile width (128) or of the format's hard "
    "element multiple.",
    doc=RuleDoc(
        what="Checks hidden_size, the dense FFN width, the routed and shared expert widths, the attention "
        "projection widths (heads x head_dim) and MLA's latent width as the GEMM kernels see them on one GPU: "
        "column-parallel N/tp, row-parallel K/tp, experts whole under EP or split by tp under expert TP. "
        "Error below the format's hard multiple (16-byte rows: 8 BF16/FP16, 16 FP8/INT8, 32 FP4); warning "
        "when not a multiple of 128 and the time model finds a measurable cost; info when a multiple of 128 "
        "but not of the GPU's cooperative 256-wide tile and that costs time.",
        why="GEMMs are computed in output tiles; a partial edge tile runs a full tile's work, so a width of "
        "1376 runs as 1408 on 128-wide tiles and 1536 on 2-SM 256-wide tiles. Below the 16-byte multiple "
        "cuBLAS/CUTLASS cannot use the aligned Tensor Core path at all (FP8 and FP4 kernels refuse it).",
        example="intermediate_size 11008 at tp=8: 1376 per shard, not a multiple of 128 "
        "(fix: 10240 or 11264, multiples of 128 x 8)",
        fix="Choose widths whose per-shard value is a multiple of 128 (256 on Blackwell) at the tp you deploy; "
        "the fix offers the nearest such values on both sides with their parameter delta.",
        sources=SOURCES,
    ),
    options=(
        Option(
            name="coop_min_loss_pct",
            type=float,
            default=0.25,
            doc=(
                "report a multiple of 128 that is not a multiple of the cooperative "
                "tile only when its estimated step-time effect reaches this percent"
            ),
        ),
    ),
    graded=True,
    hard="a shard width that is not a multiple of the format's 16-byte row (FP8/INT8: 16, FP4: 32 "
    "elements): those kernels refuse it; a width that tp does not divide (unequal shards)",
)
def dim_not_tile_aligned(ctx: Context):
    groups = collect_dims(ctx)
    for (f, full), dims in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] or 0)):
        dims = unique_dims(dims)
        if f == "num_heads":
            yield from attention_widths(ctx, dims)
            continue
        if f == "kv_lora_rank":
            yield from mla_latent(ctx, dims)
            continue
        value = full if full is not None else field_value(ctx, f)
        if value is None:
            continue
        tp = tp_shard(ctx, f)
        per_shard = -(-value // tp)
        yield from judge_width(ctx, f, value, tp, per_shard, dims)


# --------------------------------------------------------------------------- CL202
@rule(
    code="CL202",
    name="vocab-not-padded",
    severity="error",
    summary="The LM head's N (vocab per shard) is not a multiple of 128 (or of the format's hard multiple).",
    doc=RuleDoc(
        what="The LM head is a column-parallel GEMM of N = vocab_size / tp per GPU. Error below the format's hard "
        "multiple (8 BF16, 16 FP8, 32 FP4); warning when not a multiple of 128 and the time model finds a "
        "measurable cost, info otherwise.",
        why="An odd vocabulary puts the largest single GEMM of small models on a misaligned kernel path: "
        "nanoGPT got ~25% end-to-end from padding GPT-2's 50257 to 50304. Megatron pads to a multiple of "
        "128 x tp by default for this reason.",
        example="vocab_size 50257 (GPT-2): not a multiple of 8 → pad to 50304",
        fix="Pad the vocabulary to a multiple of 128 x tp (Megatron's make-vocab-size-divisible-by; 64 also "
        "common). Safe on a trained checkpoint: append zero rows to the embedding and the LM head; the "
        "serving engine must mask the padded logits (vLLM/TRT-LLM keep the tokenizer's vocabulary as the "
        "original size and drop them) so that sampling never picks a padded id.",
        sources=(
            "nanoGPT (A. Karpathy): 50257 → 50304, ~25% speedup",
            "Megatron-LM --make-vocab-size-divisible-by (default 128, times tp)",
        )
        + SOURCES,
    ),
    options=(Option(name="multiple", type=int, default=128, doc="pad the vocabulary to a multiple of this times tp"),),
    graded=True,
    hard="an LM-head shard that is not a multiple of the format's 16-byte row in FP8/INT8/FP4 "
    "(those kernels refuse it)",
)
def vocab_not_padded(ctx: Context):
    spec, w, sc = ctx.spec, ctx.analysis, ctx.target_scenario
    v = spec.vocab_size
    rows = [r for reg in ("decode", "prefill") for r in w.gemms[reg] if r.name == "lm_head"]
    if not v or not rows:
        return
    tp = sc.tp
    per_shard = rows[0].n
    hard = hard_multiple(ctx, rows[0].dtype)
    mult = int(ctx.option("multiple")) * tp
    target = round_up(v, mult)
    key = edit_key(spec, "vocab_size")
    dims = [Dim("lm_head", "n", per_shard, rows)]
    eff = step_effect_pct(ctx, dims, TILE)
    loss: float | None = max(eff.values())
    shard = f" is {per_shard} per shard at tp={tp}" if tp > 1 else ""
    ev = {
        "vocab_size": v,
        "tp": tp,
        "per_shard": per_shard,
        "padded": target,
        "gpu": ctx.gpu,
        "est_decode_step_pct": round(eff["decode"], 2),
        "est_prefill_step_pct": round(eff["prefill"], 2),
    }
    refused = bool(per_shard % hard) and refuses_unaligned(rows[0].dtype)
    sev: Severity
    if refused:
        sev, what = "error", f"not a multiple of {hard} ({rows[0].dtype}'s 16-byte row alignment)"
    elif per_shard % hard:
        # off the 16-byte path the GEMM runs unvectorized kernels, a cost the time model does not price (nanoGPT
        # measured ~25% end to end from 50257 to 50304): a warning at least, whatever the priced padding says
        sev, what = ctx.graded(loss, floor="warning"), f"not a multiple of {hard} (off the 16-byte aligned path)"
    elif per_shard % TILE:
        sev, what = ctx.graded(loss), "not a multiple of 128"
    else:
        return
    padded, waste = pad_waste(per_shard, TILE)
    if spec.vocab_padding:
        yield from _megatron_vocab(ctx, v, tp, per_shard, sev, what, loss, ev, eff, waste, padded, refused)
        return
    delta = param_delta(spec, "vocab_size", target)
    if refused:
        loss = None  # a hard constraint: the format's kernels refuse the width
    details = [
        _lm_head_line(ctx, per_shard, rows[0].dtype, refused, eff),
        f"padding to {target} (a multiple of {int(ctx.option('multiple'))} x tp={tp}) adds "
        f"{delta.total:,} zero-initialised parameters; serve with the padded logits masked "
        f"(tokenizer vocabulary {v})",
        "vLLM pads its LM head to a multiple of 64 itself and Megatron to 128 x tp; Hugging Face transformers "
        "and training code that read vocab_size run the GEMM at this width",
    ]
    yield ctx.finding(
        sev,
        f"vocab_size {v}{shard}, {what}",
        field="vocab_size",
        key=key,
        evidence=ev,
        loss_pct=loss,
        details=details,
        # unsafe: the edit changes the embedding and LM-head shapes, so a released checkpoint no longer loads
        # until its weights are padded too (function-preserving only with those zero rows and masked logits)
        fixes=[
            fix(
                f"{key} {v} → {target} (pad the checkpoint's embedding and LM-head weights with {target - v} "
                f"zero rows to match; mask ids ≥ {v} when sampling)",
                "unsafe",
                edit(key, v, target),
            )
        ],
    )


def _lm_head_line(ctx: Context, per_shard: int, dtype: str, refused: bool, eff: dict) -> str:
    """CL202's first detail: the LM head's width refused, off the 16-byte path, or padded on 128-wide tiles, with
    the step time its padding costs (estimates)."""
    hard, label = hard_multiple(ctx, dtype), ctx.analysis.label()
    if refused:
        return f"LM head N={per_shard} is not a multiple of {hard} {dtype} elements: those kernels refuse it"
    if per_shard % hard:
        return (
            f"LM head N={per_shard} is off the 16-byte aligned path: est. +{eff['decode']:.2f}% decode step, "
            f"+{eff['prefill']:.2f}% prefill step from tile padding ({label}); the unaligned kernel's own "
            f"extra cost is not priced (nanoGPT measured ~25% end-to-end from 50257 → 50304 in training)"
        )
    padded, waste = pad_waste(per_shard, TILE)
    return (
        f"LM head N={per_shard} runs {padded} wide on 128-wide tiles ({waste:.1f}% of its work wasted); "
        f"est. +{eff['decode']:.2f}% decode step, +{eff['prefill']:.2f}% prefill step ({label})"
    )


def _megatron_vocab(
    ctx: Context,
    v: int,
    tp: int,
    per_shard: int,
    sev: Severity,
    what: str,
    loss,
    ev: dict,
    eff: dict,
    waste: float,
    padded: int,
    refused: bool = False,
):
    """Megatron/NeMo/NeoX: the vocab comes from the tokenizer (--vocab-size) and the file pads it to a multiple of
    make_vocab_size_divisible_by x the file's tp. The fix edits that divisor (the key the format reads): the
    smallest multiple of the old one whose padding keeps every shard at this tp a multiple of ``multiple``."""
    spec, w = ctx.spec, ctx.analysis
    assert spec.vocab_padding is not None  # the caller's condition for this path
    div, file_tp = spec.vocab_padding
    need = int(ctx.option("multiple")) * tp
    new_div = math.lcm(div, need // math.gcd(need, file_tp))
    new_vocab = round_up(v, new_div * file_tp)
    key = edit_key(spec, "vocab_divisible_by", "make_vocab_size_divisible_by")
    src = spec.sources.get("vocab_divisible_by")
    src_present = src is not None and not src.default
    delta = param_delta(spec, "vocab_size", new_vocab)
    if refused:
        loss = None
        first = f"LM head N={per_shard} is off the 16-byte aligned Tensor Core path ({w.label()})"
    else:
        first = (
            f"LM head N={per_shard} runs {padded} wide on 128-wide tiles ({waste:.1f}% of its work wasted); "
            f"est. +{eff['decode']:.2f}% decode step, +{eff['prefill']:.2f}% prefill step ({w.label()})"
        )
    details = [
        first,
        f"the vocab is padded as the file says: a multiple of {key} {div} x tp {file_tp} = {div * file_tp}; "
        f"{key} {new_div} pads it to {new_vocab} ({new_vocab // tp} per shard at tp={tp}, "
        f"{delta.total:+,} parameters)",
    ]
    ev.update(vocab_divisible_by=div, padding_tp=file_tp, new_vocab_divisible_by=new_div, padded=new_vocab)
    yield ctx.finding(
        sev,
        f"padded vocab {v} ({key} {div} x tp {file_tp}) is {per_shard} per shard at tp={tp}, {what}",
        field="vocab_divisible_by",
        key=key,
        evidence=ev,
        loss_pct=loss,
        details=details,
        # an absent key (the format's default) is shown, not inserted: adding a key would rewrite a commented YAML
        # unsafe: the padded vocab changes the embedding/LM-head shapes of any checkpoint trained with the old one
        fixes=[
            fix(
                f"{key} {div} → {new_div} (vocab pads to {new_vocab}; a trained checkpoint's embedding and "
                "LM head must be zero-padded to match, logits masked)"
                + ("" if src_present else f"; {key} is not in the file (default {div}): add it"),
                "unsafe" if src_present else "display",
                edit(key, div, new_div),
            )
        ],
    )


# --------------------------------------------------------------------------- CL203
@rule(
    code="CL203",
    name="head-dim-tile",
    severity="info",
    summary="head_dim is not a multiple of 128: attention kernels pad the head dimension.",
    doc=RuleDoc(
        what="head_dim is the K of QKᵀ and the N of PV inside the attention kernel. Kernels on Hopper and "
        "Blackwell tile it 128 (or 64) wide; 64 still pays for a 128-wide tile in the kernels that only "
        "have 128-wide head tiles; 96 pads to 128; 192 pads to 256 on 128-wide tiles (FlashAttention-3 and "
        "FlashMLA ship dedicated 192/576 paths). Info: it depends on the kernels you deploy.",
        why="The NVIDIA attention co-design post: 'Hsz = 64 still pays for a 128-wide tile, while Hsz >= 512 "
        "pushes close to the TMEM capacity limit' → prefer 128 or 256. The cost is bounded by the attention "
        "core's share of the step, which the estimate gives.",
        example="head_dim 64 (GPT-2, Falcon-7B, Pythia): up to half of the attention core's tensor-core work is "
        "padding on 128-wide head tiles",
        fix="Fewer, wider heads (head_dim 128) at the same q width; for a trained model, nothing to do but "
        "choose kernels with a native 64/96/192 path.",
        sources=(
            "NVIDIA blog: Co-designing AI model attention for fast interactive long-context inference",
            "FlashAttention-3 supported head dims 64/96/128/192/256",
        ),
    ),
    options=(Option(name="tile", type=int, default=128, doc="head-dimension tile width of the attention kernels"),),
)
def head_dim_tile(ctx: Context):
    spec, w = ctx.spec, ctx.analysis
    tile = int(ctx.option("tile"))
    seen = set()
    for k in spec.layer_kinds:
        m = k.mixer
        if m.kind != "attention" or not m.head_dim or m.head_dim in seen:
            continue
        seen.add(m.head_dim)
        hd = m.head_dim
        if hd % tile == 0:
            continue
        padded = round_up(hd, tile)
        waste = 100.0 * (1 - hd / padded)
        shares = {}
        for regime in ("decode", "prefill"):
            core = sum(a.estimate_s * a.layers for a in w.attention[regime] if a.mixer == "attention")
            step = w.steps[regime].estimate_s
            shares[regime] = 100.0 * core / step if step else 0.0
        # a derived head_dim (hidden_size / heads: no key, no line) points at the head count that sets it
        hd_src, heads_src = spec.sources.get("head_dim"), spec.sources.get("num_heads")
        derived = (hd_src is None or hd_src.line is None) and heads_src is not None and heads_src.line is not None
        yield ctx.finding(
            "info",
            f"head_dim {hd} is not a multiple of {tile}: attention kernels with {tile}-wide head tiles run "
            f"it as {padded} ({waste:.0f}% of their QKᵀ/PV tensor-core work is padding)",
            field="num_heads" if derived else "head_dim",
            loss_pct=None,
            evidence={
                "head_dim": hd,
                "padded": padded,
                "waste_pct": round(waste, 1),
                "gpu": ctx.gpu,
                "head_dim_derived": derived,
                "est_attention_core_decode_share_pct": round(shares["decode"], 1),
                "est_attention_core_prefill_share_pct": round(shares["prefill"], 1),
            },
            details=[
                f"the attention core is est. {shares['prefill']:.0f}% of the prefill step and "
                f"{shares['decode']:.0f}% of the decode step ({w.label()}); the padding matters where the core "
                f"is compute-bound (prefill); decode attention reads the KV cache and is memory-bound"
            ]
            + ([f"head_dim is not in the file: {spec.hidden_size} / {spec.num_heads} heads"] if derived else []),
        )


# --------------------------------------------------------------------------- CL204
@rule(
    code="CL204",
    name="largest-aligned-tp",
    severity="info",
    summary="With --tp auto: the largest power-of-two tp at which every tensor-parallel dimension stays a multiple of 128.",
    doc=RuleDoc(
        what="For each width tensor parallelism splits (the dense FFN, expert widths under expert TP, shared "
        "experts, query heads' projection width), the largest power of two tp that keeps width/tp a "
        "multiple of 128; the model's value is the minimum over those widths. Under --kvp the FFN widths are "
        "split over tp x kvp GPUs and the attention group must fit the NVLink domain. The vocabulary is reported "
        "apart: engines pad it (CL202 pads it; the checkpoint weights must be padded with it).",
        why="Alignment must hold per shard (H'/tp, n_q·d_h/tp, V/tp): a model aligned at tp=1 can fall off "
        "the tile grid at tp=8.",
        example="intermediate_size 11008 = 86 x 128: tp=2 keeps 5504 = 43 x 128; tp=4 gives 2752 (21.5 x 128)",
        fix="Choose widths with enough factors of two (a multiple of 128 x the tp you plan to deploy).",
        sources=SOURCES,
    ),
    options=(Option(name="max_tp", type=int, default=64, doc="largest tp considered"),),
)
def largest_aligned_tp(ctx: Context):
    if not ctx.tp_auto:
        return
    spec = ctx.spec
    # under KV (Helix) parallelism the FFN widths are split over tp x kvp GPUs, the heads over tp alone
    kvp = ctx.scenario.kvp if ctx.scenario is not None else 1
    dom = getattr(ctx.profile, "domain_size", None) if ctx.profile is not None else None
    a = aligned_tp(spec, domain=dom, kvp=kvp, max_tp=int(ctx.option("max_tp")), tile=TILE)
    if a is None:
        return
    tp, limit_field, widths, vocab_tp, kv_cap = a.tp, a.limit_field, a.widths, a.vocab_tp, a.kv_cap
    what = {"num_heads": "q projection width (heads x head_dim)"}.get(limit_field, limit_field)
    at_kvp = f" with kvp={kvp}" if kvp > 1 else ""
    at_tp1 = f"per shard at tp=1 x kvp={kvp}" if kvp > 1 and limit_field != "num_heads" else "at tp=1"
    group_fits = f": tp x kvp={kvp} <= {dom}" if kvp > 1 else ""
    # the GPUs that share the fast link: an NVLink domain, or a PCIe host (hardware_profiles.schema.Profile)
    noun = ctx.profile.domain_noun if ctx.profile is not None else "NVLink domain"
    capped_by = {
        "kv_heads": f"{kv_cap} KV head{'s' if kv_cap != 1 else ''} (CL701: more tp replicates the KV cache)",
        "domain": f"the {dom}-GPU {noun} of {ctx.gpu}{group_fits} (CL704)",
    }.get(a.capped_by or "")
    msg = (
        f"largest power-of-two tp keeping every sharded width a multiple of 128{at_kvp}: tp={tp} (limited by "
        f"{what} {widths[limit_field]})"
        if tp
        else f"no tp keeps every sharded width a multiple of 128{at_kvp}: {what} {widths[limit_field]} is not one "
        + at_tp1
    )
    if capped_by and tp:
        msg = (
            f"largest power-of-two tp keeping every sharded width a multiple of 128{at_kvp} without replicating "
            f"the KV cache or leaving the {noun}: tp={tp} (limited by {capped_by})"
        )
    yield ctx.finding(
        "info",
        msg,
        field=location_field(ctx, limit_field) if limit_field != "num_heads" else "num_heads",
        evidence={
            "largest_aligned_tp": tp,
            "per_width": a.per_width,
            "vocab_largest_aligned_tp": vocab_tp,
            "kv_heads_cap_tp": kv_cap,
            "domain_gpus": dom,
            "gpu": ctx.gpu,
            **({"kvp": kvp} if kvp > 1 else {}),
        },
        details=[
            f"vocab_size {spec.vocab_size} stays a multiple of 128 per shard up to tp={vocab_tp}; pad it "
            f"(CL202) rather than limit tp"
        ]
        if vocab_tp is not None and vocab_tp < tp
        else [],
    )

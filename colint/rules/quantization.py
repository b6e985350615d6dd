"""CL4xx quantization (guideline 4): is the model ready for the low-precision format it targets?

* CL401: the requested GEMM format is native on the GPU (NVFP4/MX need Blackwell; FP8 needs Hopper+).
  Runs even when the analysis cannot (``without_workload``): the engine turns the analysis'
  ProfileError into this finding, located at the file.
* CL402: the format's scale blocks fit the dims per shard: K per shard divisible by the block
  (16 NVFP4, 32 MX/FP6, 128 for 1x128 / 128x128 FP8 blocks) and, for 128x128 weight blocks, N per
  shard too (a tensor-parallel shard cannot hold a partial block).
* CL403: ``quantization_config`` consistent with the dims: ``weight_block_size`` and
  ``group_size`` against the per-shard dims, ``modules_to_not_convert`` entries naming layers the
  model does not have.
* CL404: the parameters that usually stay in high precision (embeddings, LM head, routers, and
  what ``modules_to_not_convert`` excludes) and the cap that puts on the gain (Amdahl on the
  bytes each decode step reads).
"""

from __future__ import annotations

import re

from colint.analysis.gemm_model import FORMATS, SCALE_BLOCK
from colint.analysis.inventory import gemms, is_gate, param_counts
from colint.findings import Severity
from colint.rules.base import Context, Family, Option, RuleDoc, fix, rule
from colint.rules.gemm_dims import attention_shard, layer_kind, owning_field
from colint.rules.gemm_shapes import thin_by_design

FAMILY = Family(name="quantization", number=4)
SOURCES = (
    "NVIDIA co-design blog, guideline 4 and Fig. 6 (GB300 FP4 = 3x FP8 = 6x BF16 dense)",
    "CUTLASS Blackwell functionality: block-scaled types scale every 16 (NVFP4) or 32 (MX) elements of K",
    "cuBLASLt block-scaling modes VEC16_UE4M3, VEC32_UE8M0, VEC128_32F, BLK128x128_32F",
)
# quantization_config -> colint GEMM format (the checkpoint's own format)
_CHECKPOINT_FORMATS = {"mxfp4": "mxfp4", "nvfp4": "nvfp4", "modelopt_fp4": "nvfp4", "fp8": "fp8", "fbgemm_fp8": "fp8"}


def _hw(fmt: str) -> str:
    return FORMATS.get(fmt, (fmt,))[0]


def _checkpoint_format(spec) -> str | None:
    q = spec.quantization
    if q is None:
        return None
    m = (q.quant_method or "").lower()
    if m == "fp8" and q.weight_block_size:
        return "fp8_block"
    if m in _CHECKPOINT_FORMATS:
        return _CHECKPOINT_FORMATS[m]
    algo = str(q.raw.get("quant_algo", "")).lower()
    return "nvfp4" if "nvfp4" in algo else None


# --------------------------------------------------------------------------- CL401
@rule(
    code="CL401",
    name="format-not-native",
    severity="error",
    summary="The requested GEMM format has no native Tensor Core support on the target GPU.",
    doc=RuleDoc(
        what="--dtype (the scenario's weight/activation format) against the GPU profile's native formats: NVFP4 "
        "and MX formats need Blackwell (or CDNA4 for MXFP4), FP8 needs Hopper/Ada or newer. Also notes "
        "(info) a checkpoint whose quantization_config format is not native on the target.",
        why="Without native support the format cannot run as a low-precision GEMM: engines either refuse or "
        "dequantize weights to BF16 (weight-only), which keeps the memory saving but none of the math "
        "speed-up the design assumed.",
        example="--dtype nvfp4 --gpu h100-sxm: Hopper has FP8 but no FP4",
        fix="Target a GPU with the format (b200, gb300 for NVFP4) or use a format the GPU has (fp8 on Hopper).",
        sources=SOURCES + ("hardware profiles: peak_tflops lists only native formats",),
    ),
    needs_workload=True,
    without_workload=True,
)  # the engine runs it when analyse() rejects the format
def format_not_native(ctx: Context):
    p, sc = ctx.target_profile, ctx.target_scenario
    fmt = sc.gemm_format
    if fmt in FORMATS and not p.has(_hw(fmt)):
        native = ", ".join(p.peak_tflops)
        yield ctx.finding(
            "error",
            f"--dtype {fmt} is not native on {p.name} ({p.architecture}): no {_hw(fmt)} Tensor Core path",
            field="quantization_config" if _checkpoint_format(ctx.spec) == fmt else None,
            evidence={"dtype": fmt, "gpu": p.name, "architecture": p.architecture, "native": list(p.peak_tflops)},
            details=[
                f"native formats on {p.name}: {native}; the other rules did not run for this GPU "
                f"(no estimate without a native format)"
            ],
            fixes=[fix(f"use --dtype {alt}", "display", settings={"dtype": alt}) for alt in _alternatives(p, fmt)],
        )
        return
    ck = _checkpoint_format(ctx.spec)
    # block-scaled FP8 runs on the FP8 Tensor Cores with the scales applied around them (DeepGEMM, AITER, CUTLASS)
    if ck and not p.has(_hw(ck)) and not (ck == "fp8_block" and p.has("fp8")):
        src = ctx.spec.sources.get("quantization_config")
        yield ctx.finding(
            "info",
            f"the checkpoint's quantization_config is {ck}, not native on {p.name} ({p.architecture}): "
            f"engines dequantize it (weight-only) and run the GEMMs in BF16",
            field="quantization_config",
            key=src.key if src else ctx.spec.key_prefix + "quantization_config",
            evidence={"checkpoint_format": ck, "gpu": p.name, "native": list(p.peak_tflops)},
        )


def _alternatives(p, fmt: str) -> list[str]:
    order = {
        "nvfp4": ["mxfp4", "fp8", "bf16"],
        "mxfp4": ["nvfp4", "fp8", "bf16"],
        "mxfp8": ["fp8", "bf16"],
        "fp6": ["fp8", "bf16"],
        "fp8": ["int8", "bf16"],
        "fp8_block": ["fp8", "bf16"],
        "int8": ["bf16"],
    }
    return [a for a in order.get(fmt, ["bf16"]) if p.has(_hw(a))][:2]


# --------------------------------------------------------------------------- shared: dims per shard
def _quantized_rows(ctx: Context):
    """Prefill rows of GEMMs that run in the scenario's format (routers stay BF16; the LM head is
    usually kept in high precision but quantized LM heads exist, so it is included)."""
    fmt = ctx.target_scenario.gemm_format
    return [r for r in ctx.analysis.gemms["prefill"] if r.dtype == fmt]


def _split_label(sc, rows) -> str:
    """How a finding names the split of ``rows``: ``tp=8``, or ``tp=4 x kvp=2`` when an FFN GEMM is among them."""
    return sc.tp_label("ffn" if any(r.component == "ffn" for r in rows) else "attention")


def _n_partitions(ctx: Context, row) -> list[int]:
    """The output partitions a serving engine checks separately for this fused GEMM's shard:
    gate and up halves; q, k and v (KV heads replicated when tp exceeds them)."""
    if row.name.endswith("gate_up") and row.gemm.group == "gate_up" or row.name.endswith("experts.gate_up"):
        return [row.n // 2, row.n // 2]
    if row.name == "attn.qkv_proj":
        k = layer_kind(ctx, row.kind)
        m = k.mixer if k is not None else None
        if m is not None and m.kind == "attention" and attention_shard(m, ctx.target_scenario.tp) is not None:
            tp = ctx.target_scenario.tp
            kv = m.num_kv_heads or m.num_heads
            kv_rank = kv // tp if kv >= tp else 1
            return [
                m.num_heads // tp * m.head_dim * (2 if m.gated_q else 1),
                kv_rank * m.head_dim,
                kv_rank * (m.v_head_dim or m.head_dim),
            ]
        return []  # heads do not split evenly at this tp: CL7xx reports it
    return [row.n]


def _field(row, axis: str) -> str | None:
    if row.name == "lm_head":
        return "hidden_size" if axis == "k" else "vocab_size"
    return owning_field(row, axis)


# --------------------------------------------------------------------------- CL402
@rule(
    code="CL402",
    name="scale-block-divisibility",
    severity="error",
    summary="K per shard must be a whole number of the format's scale blocks (and N too for 128x128 FP8 blocks).",
    doc=RuleDoc(
        what="Block-scaled formats carry one scale per block of K elements: 16 (NVFP4), 32 (MXFP4/MXFP8/FP6), "
        "128 (FP8 with 1x128 activation / 128x128 weight blocks). Every GEMM's K per shard (row-parallel "
        "K/tp) must be a multiple of it; with 128x128 weight blocks a column-parallel shard's N must be too.",
        why="Quantizers and GEMM kernels reject a K with a partial scale block (FlashInfer/TransformerEngine: "
        "'K must be divisible by 16 for NVFP4'); a tensor-parallel shard that cuts a 128x128 block in two "
        "cannot be loaded (vLLM checks N and K per partition against weight_block_size).",
        example="hidden_size 2888 in NVFP4: 2888 = 180.5 x 16",
        fix="Choose widths that are multiples of the block per shard (128 per shard satisfies every format).",
        sources=SOURCES + ("domain research §9: NVFP4 K % 16 (hard), 32 (TMA), 64 (scale swizzle)",),
    ),
)
def scale_block_divisibility(ctx: Context):
    spec, sc = ctx.spec, ctx.target_scenario
    fmt = sc.gemm_format
    block = SCALE_BLOCK.get(fmt)
    if not block:
        return
    q = spec.quantization
    if fmt == "fp8_block" and q is not None and q.weight_block_size:
        return  # the checkpoint declares its blocks: CL403 checks them against the shards
    bad: dict[tuple, list] = {}
    for r in _quantized_rows(ctx):
        if r.name == "lm_head" or thin_by_design(r):
            continue  # the LM head is kept in high precision by default (CL404 counts it there)
        split_k = r.parallel == "row" or (r.parallel == "expert" and sc.ep == 1 and "down" in r.name)
        split = sc.tp_of(r.component)  # the FFN's GEMMs over tp x kvp (Helix), the others over tp
        checks = [("k", r.k, split > 1 and split_k)]
        if (
            fmt == "fp8_block"
            and split > 1
            and (r.parallel == "column" or r.parallel == "expert" and sc.ep == 1 and "down" not in r.name)
        ):
            # 128x128 weight blocks: every column shard (gate, up; q, k, v) must hold whole blocks
            bad_part = next((p for p in _n_partitions(ctx, r) if p % block), None)
            if bad_part is not None:
                checks.append(("n", bad_part, True))
        for axis, v, sharded in checks:
            if v % block:
                items = bad.setdefault((_field(r, axis), axis), [])
                if not any(x.name == r.name and xv == v for x, xv, _ in items):  # one entry per shape
                    items.append((r, v, sharded))
    for (f, axis), items in sorted(bad.items(), key=lambda kv: (kv[0][0] or "", kv[0][1])):
        gemms = sorted({f"{r.name} {axis.upper()}={v}" for r, v, _ in items})
        v0 = items[0][1]
        sharded = any(s for *_, s in items)
        shard = f" per shard at {_split_label(sc, [r for r, _, s in items if s])}" if sharded else ""
        # NVFP4/MX quantizers refuse a partial K block outright; FP8 128-blocks: a tensor-parallel shard cannot
        # hold a partial block (vLLM refuses), an unsharded tail block is padded by most kernels (not DeepGEMM)
        sev: Severity = "error" if fmt != "fp8_block" or sharded else "warning"
        why = (
            f"{fmt} scales every {block} elements of K; a partial block cannot be quantized"
            if fmt != "fp8_block"
            else (
                "a tensor-parallel shard would hold a partial 128-element scale block: vLLM refuses to load it"
                if sharded
                else "the last 128-element K block is partial: kernels that need whole blocks "
                "(DeepGEMM) refuse it, others pad it"
            )
        )
        yield ctx.finding(
            sev,
            f"{', '.join(gemms)}{shard} not a multiple of {fmt}'s {block}-element scale block "
            f"({v0} = {v0 / block:g} x {block})",
            field=f,
            evidence={
                "dtype": fmt,
                "block": block,
                "gpu": ctx.gpu,
                "tp": sc.tp,
                "gemms": [{"gemm": r.name, "dim": axis, "per_shard": v} for r, v, _ in items],
            },
            details=[f"{why} ({ctx.analysis.label()})"],
        )


# --------------------------------------------------------------------------- CL403
_LAYER_INDEX = re.compile(r"layers\.(\d+)\.")


@rule(
    code="CL403",
    name="quantization-config-mismatch",
    severity="error",
    summary="quantization_config does not fit the model's dims per shard, or names layers that do not exist.",
    doc=RuleDoc(
        what="Checks the checkpoint's quantization_config against the model: weight_block_size [bn, bk] against "
        "N and K per tensor-parallel shard, group_size against K per shard (row-parallel layers split "
        "groups), and modules_to_not_convert / ignore entries whose layer index is beyond the model.",
        why="A shard that cuts a scale block or a quantization group cannot be loaded (vLLM raises on "
        "'output_size ... is not divisible by weight quantization block_n'); an ignore entry for a layer "
        "that does not exist leaves the layer that was meant quantized (or not) in the wrong precision.",
        example="MiniMax-M2.5 FP8 (weight_block_size [128, 128]) at tp=8: moe_intermediate_size 1536 is 192 per "
        "shard, 1.5 blocks → deploy experts with EP, not TP",
        fix="Deploy at a tp that keeps every shard block-aligned (or experts under EP), or re-quantize with a "
        "block/group that divides the shards; fix the ignore list.",
        sources=SOURCES + ("vLLM Fp8LinearMethod weight_block_size partition checks",),
    ),
)
def quantization_config_mismatch(ctx: Context):
    spec, sc = ctx.spec, ctx.target_scenario
    q = spec.quantization
    if q is None:
        return
    qkey = spec.key_prefix + "quantization_config"
    if q.weight_block_size and len(q.weight_block_size) == 2 and sc.group_gpus > 1:
        bn, bk = q.weight_block_size
        bad: dict[str, list] = {}
        for r in ctx.analysis.gemms["prefill"]:
            if r.name == "lm_head" or is_gate(r.name):
                continue
            if r.parallel == "column" or (r.parallel == "expert" and sc.ep == 1 and "down" not in r.name):
                part = next((p for p in _n_partitions(ctx, r) if p % bn), None)
                if part is not None:
                    bad.setdefault(_field(r, "n") or r.name, []).append((r, "n", part, bn))
            if r.parallel == "row" or (r.parallel == "expert" and sc.ep == 1 and "down" in r.name):
                if r.k % bk:
                    bad.setdefault(_field(r, "k") or r.name, []).append((r, "k", r.k, bk))
        for f, items in sorted(bad.items()):
            gemms = ", ".join(sorted({f"{r.name} {a.upper()}={v}" for r, a, v, _ in items}))
            experts = any(r.parallel == "expert" for r, *_ in items)
            yield ctx.finding(
                "error",
                f"weight_block_size {q.weight_block_size} does not divide the shards at "
                f"{_split_label(sc, [r for r, *_ in items])}: {gemms}",
                field=f if f in spec.sources else None,
                key=None if f in spec.sources else f"{qkey}.weight_block_size",
                gpu_specific=False,  # blocks vs shards depend on the spec and tp alone: reported once
                evidence={
                    "weight_block_size": list(q.weight_block_size),
                    "tp": sc.tp,
                    "gemms": [{"gemm": r.name, "dim": a, "per_shard": v, "block": b} for r, a, v, b in items],
                },
                details=[f"each shard would hold a partial {bn}x{bk} scale block; vLLM refuses to load it"]
                + (
                    ["deploy the experts with expert parallelism (--ep), which keeps each expert whole"]
                    if experts
                    else []
                ),
                fixes=[
                    fix(
                        "deploy with EP for the experts"
                        if experts
                        else "use a tp that keeps every shard a multiple of the block",
                        "display",
                    )
                ],
            )
    if q.group_size and q.group_size > 0:
        g = q.group_size
        bad_g = [r for r in ctx.analysis.gemms["prefill"] if r.name != "lm_head" and not is_gate(r.name) and r.k % g]
        if bad_g:
            gemms = ", ".join(sorted({f"{r.name} K={r.k}" for r in bad_g}))
            yield ctx.finding(
                "error",
                f"group_size {g} does not divide K per shard"
                f"{f' at {_split_label(sc, bad_g)}' if sc.group_gpus > 1 else ''}: {gemms}",
                key=f"{qkey}.group_size",
                gpu_specific=False,
                evidence={"group_size": g, "tp": sc.tp, "gemms": [{"gemm": r.name, "k": r.k} for r in bad_g]},
                details=["a quantization group must not straddle two shards (row-parallel layers split K)"],
            )
    total_layers = spec.num_layers + spec.mtp_layers
    for i, entry in enumerate(q.modules_to_not_convert):
        m = _LAYER_INDEX.search(str(entry) + ".")
        if m and int(m.group(1)) >= total_layers:
            yield ctx.finding(
                "warning",
                f"modules_to_not_convert entry {entry!r} names layer {m.group(1)}, but the model has "
                f"{total_layers} layers (0..{total_layers - 1})",
                key=f"{qkey}.modules_to_not_convert[{i}]",
                evidence={"entry": entry, "layer": int(m.group(1)), "num_layers": total_layers},
                gpu_specific=False,
            )


# --------------------------------------------------------------------------- CL404
@rule(
    code="CL404",
    name="high-precision-share",
    severity="info",
    summary="Parameters that stay in high precision (embeddings, LM head, routers, excluded modules) cap the gain.",
    doc=RuleDoc(
        what="With a low-precision --dtype, the share of parameters that deployments usually keep in BF16: the "
        "embedding table, the LM head, MoE routers (ModelOpt's default exclusions), plus the modules the "
        "checkpoint's modules_to_not_convert names (attention, shared experts, ...). Reported against the "
        "weight bytes a decode step reads (the LM head and routers count; the embedding is a row lookup) "
        "and against the memory footprint (everything counts).",
        why="Decode is weight-bandwidth bound: its gain from quantization is at most the ratio of weight bytes "
        "read per step before and after (Amdahl). Parameters left in BF16 cap it, most for small models "
        "with large vocabularies.",
        example="Qwen3-0.6B in NVFP4: the tied 151936 x 1024 embedding/LM head is 26% of the parameters",
        fix="Consider quantizing the LM head (FP8 is usually safe), or accept the cap; for small models, "
        "a smaller vocabulary or tied embeddings reduce it.",
        sources=(
            "ModelOpt _default_disabled_quantizer_cfg (lm_head, routers, output layers)",
            "NVIDIA NVFP4 model cards: only linear layers in transformer blocks are quantized",
        )
        + SOURCES[:1],
    ),
    options=(
        Option(
            name="min_cap_loss_pct",
            type=float,
            default=10.0,
            doc="report when the high-precision part costs at least this percent of the ideal decode weight-read reduction",
        ),
    ),
)
def high_precision_share(ctx: Context):

    spec, sc = ctx.spec, ctx.target_scenario
    fmt = sc.gemm_format
    b_q = FORMATS[fmt][2]
    b_hp = 2.0
    if b_q >= b_hp:
        return
    pc = param_counts(spec)
    excluded = _excluded_prefixes(spec)
    read_hp = read_q = 0.0  # parameters read per decode step (active), by precision
    foot_hp = foot_q = 0.0
    parts: dict[str, float] = {}
    for g in gemms(spec):
        p = g.weight_params * g.layers
        active: float = p
        if g.parallel == "expert" and g.count:
            # experts touched by one decode step of the scenario's batch (uniform routing)
            tokens = sc.decode_concurrency * sc.attention_dp_groups  # tokens meeting in one EP domain
            active = p * (1.0 - (1.0 - g.m_per_token) ** tokens)
        hp_reason = None
        if g.name == "lm_head":
            hp_reason = "LM head"
        elif is_gate(g.name):
            hp_reason = "routers"
        elif any(g.name.startswith(x) for x in excluded):
            hp_reason = "modules_to_not_convert"
        if hp_reason:
            read_hp += active
            foot_hp += p
            parts[hp_reason] = parts.get(hp_reason, 0.0) + p
        else:
            read_q += active
            foot_q += p
    emb = pc.embedding
    foot_hp += emb
    parts["embedding"] = float(emb)
    if spec.tie_word_embeddings and spec.vocab_size:
        # the tied table is the LM head too: read once per step in BF16
        read_hp += spec.vocab_size * spec.hidden_size
        parts["LM head"] = 0.0
    total_read = read_hp + read_q
    if total_read <= 0:
        return
    ideal = b_hp / b_q  # every byte quantized
    actual = (total_read * b_hp) / (read_hp * b_hp + read_q * b_q)
    cap_loss = 100.0 * (1.0 - (actual - 1.0) / (ideal - 1.0)) if ideal > 1 else 0.0
    if cap_loss < ctx.option("min_cap_loss_pct"):
        return
    share_read = 100.0 * read_hp / total_read
    share_foot = 100.0 * foot_hp / (foot_hp + foot_q) if foot_hp + foot_q else 0.0
    foot_ratio = (foot_hp + foot_q) * b_hp / (foot_hp * b_hp + foot_q * b_q)
    what = ", ".join(f"{k} {v / 1e6:,.0f}M" for k, v in parts.items() if v)
    yield ctx.finding(
        "info",
        f"{share_read:.0f}% of the weights a decode step reads stay in BF16 under {fmt}: decode weight "
        f"reads shrink {actual:.2f}x instead of {ideal:.2f}x",
        field="vocab_size" if parts.get("embedding", 0) + parts.get("LM head", 0) >= max(parts.values()) else None,
        loss_pct=None,
        evidence={
            "dtype": fmt,
            "high_precision_read_share_pct": round(share_read, 1),
            "high_precision_param_share_pct": round(share_foot, 1),
            "decode_read_reduction": round(actual, 3),
            "ideal_reduction": round(ideal, 3),
            "footprint_reduction": round(foot_ratio, 3),
            "gpu": ctx.gpu,
            "high_precision_params": {k: int(v) for k, v in parts.items() if v},
        },
        details=[
            f"kept in BF16 (usual deployment choice): {what}; {share_foot:.0f}% of all parameters "
            f"(memory shrinks {foot_ratio:.2f}x instead of {ideal:.2f}x)",
            f"Amdahl cap on the memory-bound decode gain from {fmt}: {actual:.2f}x "
            f"(estimate from parameter counts; {ctx.analysis.label()})",
        ],
    )


def _excluded_prefixes(spec) -> list[str]:
    """Inventory name prefixes that the checkpoint's modules_to_not_convert keeps in high precision."""
    q = spec.quantization
    if q is None:
        return []
    out = []
    for e in q.modules_to_not_convert:
        s = str(e)
        if "self_attn" in s or s.endswith(".attn") or "attention" in s:
            out += ["attn.", "mla."]
        if "shared_expert" in s:
            out.append("moe.shared_experts")
    return out

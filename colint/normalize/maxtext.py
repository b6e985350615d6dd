"""MaxText model YAML (``src/maxtext/configs/models/*.yml``) → ModelSpec.

A model file overrides MaxText's ``base.yml``; keys it omits take base.yml's defaults (copied
below with their values at AI-Hypercomputer/maxtext 75264ef). Shapes by ``decoder_block``:

- ``llama2`` / ``mistral`` / ``mixtral`` / ``default``: q/k/v/o, gated MLP (two ``mlp_activations``
  = gated), two RMSNorms; ``num_experts > 1`` → MoE layers of ``base_moe_mlp_dim`` (or base_mlp_dim).
- ``gemma`` / ``gemma2`` / ``gemma3``: tied embeddings, gated GELU; gemma2's
  ``base_num_decoder_layers`` counts local+global **pairs** (gemma2.py scans one block holding a
  sliding-window layer then a global layer; the model file says so in its comment), so the model
  has twice as many layers, each with four norms; gemma3 repeats 5 local + 1 global with q/k norms.
- ``gpt3``: LayerNorms with bias, biased fused QKV / out / MLP projections, a learned position
  table of ``trainable_position_size`` rows.
- ``deepseek``: MLA (``q_lora_rank`` 0 = plain q projection), ``first_num_dense_layers`` dense
  layers, then MoE with ``shared_experts`` × ``base_moe_mlp_dim`` shared width, router bias when
  ``routed_bias``.
- ``qwen3_next``: every ``inhomogeneous_layer_cycle_interval``-th layer is gated full attention
  (q/k norms), the others Gated DeltaNet (``gdn_*``); all MoE with one gated shared expert.

Underscored numeric literals (``10_000``) are YAML 1.1 integers; ruamel reads them as such.
"""

from __future__ import annotations

from colint.loading.document import Document
from colint.normalize.format_reader import (
    FormatReader,
    attention,
    gated_deltanet,
    heads_attention,
    layer,
    mla,
    mla_norm_params,
    raise_at,
    routed_experts,
)
from colint.normalize.model_spec import FFN, Mixer, ModelSpec

ACCEPTS_VOCAB_SIZE = False

# base.yml defaults (AI-Hypercomputer/maxtext src/maxtext/configs/base.yml).
BASE_DEFAULTS = {
    "decoder_block": "llama2",
    "base_emb_dim": 2048,
    "base_num_query_heads": 16,
    "base_num_kv_heads": 16,
    "base_mlp_dim": 7168,
    "base_num_decoder_layers": 16,
    "head_dim": 128,
    "vocab_size": 32000,
    "num_experts": 1,
    "num_experts_per_tok": 1,
    "base_moe_mlp_dim": -1,
    "first_num_dense_layers": 0,
    "shared_experts": 0,
    "q_lora_rank": 0,
    "kv_lora_rank": 512,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "inhomogeneous_layer_cycle_interval": 1,
    "sliding_window_size": 0,
}
_MARKERS = ("base_emb_dim", "base_num_decoder_layers", "base_num_query_heads", "base_mlp_dim")
KNOWN_BLOCKS = (
    "default",
    "llama2",
    "mistral",
    "mixtral",
    "gemma",
    "gemma2",
    "gemma3",
    "gpt3",
    "deepseek",
    "qwen3",
    "qwen3_moe",
    "qwen3_next",
    "simple",
    "simple_mlp",
)


def detect(doc: Document) -> bool:
    data = doc.data
    return isinstance(data, dict) and sum(k in data for k in _MARKERS) >= 2 and "model_type" not in data


def normalize(doc: Document) -> ModelSpec:
    if not isinstance(doc.data, dict) or not any(k in doc.data for k in _MARKERS):
        raise raise_at(doc, (), "not a MaxText model file: expected base_emb_dim, base_num_decoder_layers, ...")
    r = FormatReader(doc, "maxtext", (), defaults=dict(BASE_DEFAULTS))
    block = r.name("decoder_block", default="llama2")
    if block not in KNOWN_BLOCKS:
        raise r.error("decoder_block", f"decoder_block {block!r} is not one colint knows ({', '.join(KNOWN_BLOCKS)})")
    h = r.req("hidden_size", "base_emb_dim")
    base_layers = r.req("num_layers", "base_num_decoder_layers")
    heads = r.req("num_heads", "base_num_query_heads")
    kv = r.req("num_kv_heads", "base_num_kv_heads")
    head_dim = r.req("head_dim", "head_dim")
    mlp = r.req("intermediate_size", "base_mlp_dim")
    vocab = r.req("vocab_size", "vocab_size")
    acts = r.list(None, "mlp_activations") or ["silu", "linear"]  # base.yml default
    gated = len(acts) >= 2
    tie = bool(r.bool("tie_word_embeddings", "logits_via_embedding", default=False))  # base.yml default
    attn_bias = bool(r.bool(None, "attention_bias", default=False))
    mlp_bias = bool(r.bool(None, "mlp_bias", default=False))
    common = dict(
        vocab_size=vocab,
        tie_word_embeddings=tie,
        num_heads=heads,
        num_kv_heads=kv,
        head_dim=head_dim,
        intermediate_size=mlp,
        hidden_act=str(acts[0]),
        model_type=block,
        max_position_embeddings=r.opt("max_position_embeddings", "max_position_embeddings", "max_target_length"),
    )

    if block == "gemma2":
        return _gemma2(r, h, base_layers, heads, kv, head_dim, mlp, gated, common)
    if block == "gpt3":
        return _gpt3(r, h, base_layers, heads, kv, head_dim, mlp, gated, common)
    if block == "qwen3_next":
        return _qwen3_next(r, h, base_layers, heads, kv, head_dim, mlp, gated, common)

    dense = FFN(kind="dense", intermediate_size=mlp, gated=gated, bias=mlp_bias)
    moe, first_dense = _moe(r, mlp, gated)
    mixers = _mixers(r, block, h, base_layers, heads, kv, head_dim, attn_bias, common)
    layers = [layer(mx, moe if (moe and i >= first_dense) else dense, other) for i, (mx, other) in enumerate(mixers)]
    return r.spec(hidden_size=h, num_layers=base_layers, layers=layers, extra_params=h, **common)


def _moe(r: FormatReader, mlp: int, gated: bool) -> tuple[FFN | None, int]:
    """(the MoE FFN, the dense layers before it) where ``num_experts`` > 1, else (None, 0)."""
    experts = r.req("num_experts", "num_experts")
    if experts <= 1:
        return None, 0
    moe_dim, shared = _expert_widths(r, mlp)
    if shared:
        r.record("shared_expert_intermediate_size", "base_moe_mlp_dim")
    moe = routed_experts(
        experts,
        r.req("top_k", "num_experts_per_tok"),
        moe_dim,
        gated=gated,
        expert_gated=gated,
        num_shared_experts=shared,
        shared_intermediate_size=moe_dim if shared else 0,
        shared_gated=gated,
        router_bias=bool(r.bool(None, "routed_bias", default=False)),
    )
    return moe, r.req("first_k_dense", "first_num_dense_layers", minimum=0)


def _expert_widths(r: FormatReader, mlp: int) -> tuple[int, int]:
    """(each routed expert's width, the shared experts): ``base_moe_mlp_dim``, or the dense ``base_mlp_dim`` where
    it is absent or not positive (the expert width then located at base_mlp_dim)."""
    moe_dim = r.req("moe_intermediate_size", "base_moe_mlp_dim", minimum=-1)
    if moe_dim <= 0:
        moe_dim = mlp
        r.record("moe_intermediate_size", "base_mlp_dim")
    return moe_dim, r.req(None, "shared_experts", minimum=0)


def _mixers(
    r: FormatReader, block: str, h: int, n_layers: int, heads: int, kv: int, head_dim: int, bias: bool, common: dict
) -> list[tuple[Mixer, int]]:
    """(token mixer, parameters outside GEMMs) per layer: MLA (deepseek, ``attention_type: mla``), gemma3's five
    local layers to one global, or one attention for all (qwen3's q/k norms); ``common`` takes what differs."""
    norm = 4 * h if block == "gemma3" else 2 * h
    if block == "deepseek" or r.name("attention_type") == "mla":
        q_lora = r.req("q_lora_rank", "q_lora_rank", minimum=0)
        m = mla(
            heads,
            q_lora_rank=q_lora or None,
            kv_lora_rank=r.req("kv_lora_rank", "kv_lora_rank"),
            nope=r.req("qk_nope_head_dim", "qk_nope_head_dim"),
            rope=r.req("qk_rope_head_dim", "qk_rope_head_dim"),
            v_head_dim=r.req("v_head_dim", "v_head_dim"),
        )
        common.update(num_kv_heads=heads, head_dim=m.head_dim)
        return [(m, norm + mla_norm_params(m))] * n_layers
    if block == "gemma3":
        window = r.opt("sliding_window", "sliding_window_size") or None
        local = attention(heads, kv, head_dim, window=window, qkv_bias=bias, o_bias=bias)
        glob = attention(heads, kv, head_dim, qkv_bias=bias, o_bias=bias)
        common["sliding_window"] = window
        return [(glob if i % 6 == 5 else local, norm + 2 * head_dim) for i in range(n_layers)]
    qk = 2 * head_dim if block in ("qwen3", "qwen3_moe") else 0
    a = attention(heads, kv, head_dim, qkv_bias=bias, o_bias=bias)
    return [(a, norm + qk)] * n_layers


def _gemma2(r: FormatReader, h, pairs, heads, kv, head_dim, mlp, gated, common) -> ModelSpec:
    window = r.opt("sliding_window", "sliding_window_size") or None
    ffn = FFN(kind="dense", intermediate_size=mlp, gated=gated)
    norms = 4 * h  # pre/post attention and pre/post FFW RMSNorms
    local = layer(attention(heads, kv, head_dim, window=window), ffn, norms)
    glob = layer(attention(heads, kv, head_dim), ffn, norms)
    r.notes.append(
        f"decoder_block gemma2: base_num_decoder_layers {pairs} counts (local, global) pairs -> {2 * pairs} layers"
    )
    common["sliding_window"] = window
    r.record_derived("num_layers", "base_num_decoder_layers")  # it holds the pair count, not the layer count
    return r.spec(hidden_size=h, num_layers=2 * pairs, layers=[local, glob] * pairs, extra_params=h, **common)


def _gpt3(r: FormatReader, h, n_layers, heads, kv, head_dim, mlp, gated, common) -> ModelSpec:
    ffn = FFN(kind="dense", intermediate_size=mlp, gated=gated, bias=True)
    mixer = attention(
        heads, kv, head_dim, qkv_bias=True, o_bias=True, fused_qkv=bool(r.bool(None, "fused_qkv", default=False))
    )
    positions = r.opt("position_embeddings", "trainable_position_size") or 0
    if positions:
        r.notes.append(f"learned positions: a {positions}-row table (trainable_position_size)")
    return r.spec(
        hidden_size=h,
        num_layers=n_layers,
        layers=[layer(mixer, ffn, 4 * h)] * n_layers,
        position_embeddings=positions,
        extra_params=2 * h,
        **common,
    )


def _qwen3_next(r: FormatReader, h, n_layers, heads, kv, head_dim, mlp, gated, common) -> ModelSpec:
    cycle = r.req(None, "inhomogeneous_layer_cycle_interval")
    nk = r.req(None, "gdn_num_key_heads")
    nv = r.req(None, "gdn_num_value_heads")
    dk = r.req(None, "gdn_key_head_dim")
    dv = r.req(None, "gdn_value_head_dim")
    conv = r.req(None, "gdn_conv_kernel_dim", default=4)
    full = heads_attention(heads, kv, head_dim, gated_q=True)
    lin, lin_other = gated_deltanet(nk, nv, dk, dv, conv)
    experts = r.req("num_experts", "num_experts")
    moe_dim, shared = _expert_widths(r, mlp)
    ffn = routed_experts(
        experts,
        r.req("top_k", "num_experts_per_tok"),
        moe_dim,
        gated=gated,
        num_shared_experts=shared,
        shared_intermediate_size=moe_dim if shared else 0,
        shared_expert_gate=bool(shared),
    )
    layers = [
        layer(full, ffn, 2 * head_dim + 2 * h) if (i + 1) % cycle == 0 else layer(lin, ffn, lin_other + 2 * h)
        for i in range(n_layers)
    ]
    r.notes.append(f"every {cycle}th layer is full attention, the others Gated DeltaNet")
    return r.spec(hidden_size=h, num_layers=n_layers, layers=layers, extra_params=h, **common)

"""Mamba-2 / attention hybrids: Bamba (``bamba``) and Granite-4.0-H (``granitemoehybrid``); plain
Mamba-2 (``mamba2``) with the same Mamba-2 block under its own key names.

transformers 5.24 ``modeling_bamba.py`` / ``modeling_granitemoehybrid.py``: a layer's mixer is a
Mamba-2 block where its type is ``linear_attention`` (Bamba: every layer not in
``attn_layer_indices``; Granite: ``layer_types``, default all Mamba), else q/k/v/o attention with
``attention_bias``. The Mamba-2 block: d_inner = ``mamba_expand`` x H, ``in_proj`` H -> 2 d_inner +
2 ``mamba_n_groups`` ``mamba_d_state`` + ``mamba_n_heads`` (bias ``mamba_proj_bias``), a depthwise
``conv1d`` over d_inner + 2 groups d_state channels (``mamba_d_conv`` taps, bias
``mamba_conv_bias``), ``dt_bias``/``A_log``/``D`` (one per head), a gated RMSNorm (d_inner) and
``out_proj`` d_inner -> H (bias ``mamba_proj_bias``). Two RMSNorms (H) per layer, one at the end.
Bamba's FFN: a gated MLP (``mlp_bias``). Granite's: a router ``[E, H]`` and fused experts of
``intermediate_size`` when ``num_local_experts`` > 0, always beside a gated ``shared_mlp`` of
``shared_intermediate_size`` without bias (with no experts that MLP is the layer's FFN).
"""

from __future__ import annotations

from typing import Any

from colint.normalize.format_reader import heads_attention, mamba2_mixer, routed_experts
from colint.normalize.hf.base import HFReader, read_common
from colint.normalize.hf.moe_common import KindTable, int_list, layer, str_list
from colint.normalize.hf.tie import tie_embeddings
from colint.normalize.model_spec import FFN, Mixer, ModelSpec

_DEFAULTS: dict[str, dict[str, Any]] = {
    "bamba": dict(hidden=4096, layers=32, heads=32, kv=8, inter=14336, vocab=128000),
    "granitemoehybrid": dict(hidden=4096, layers=32, heads=32, kv=None, inter=11008, vocab=32000),
}


# Mamba-2 block keys and their class defaults: the hybrids' mamba_* keys, and Mamba2Config's own.
HYBRID_MAMBA_KEYS = dict(
    heads=("mamba_n_heads", 128),
    groups=("mamba_n_groups", 1),
    d_state=("mamba_d_state", 256),
    taps=("mamba_d_conv", 4),
    expand=("mamba_expand", 2),
    proj_bias=("mamba_proj_bias", False),
    conv_bias=("mamba_conv_bias", True),
)
MAMBA2_KEYS = dict(
    heads=("num_heads", 128),
    groups=("n_groups", 8),
    d_state=("state_size", 128),
    taps=("conv_kernel", 4),
    expand=("expand", 2),
    proj_bias=("use_bias", False),
    conv_bias=("use_conv_bias", True),
)


def mamba2(r: HFReader, h: int, keys: dict = HYBRID_MAMBA_KEYS) -> tuple[Mixer, int]:
    """(the Mamba-2 mixer, its parameters outside the GEMMs)."""
    heads, groups, d_state, taps, expand = (
        r.int(None, keys[f][0], default=keys[f][1]) for f in ("heads", "groups", "d_state", "taps", "expand")
    )
    d_inner = expand * h
    proj_bias = r.bool(None, keys["proj_bias"][0], default=keys["proj_bias"][1])
    conv_bias = r.bool(None, keys["conv_bias"][0], default=keys["conv_bias"][1])
    conv_dim = d_inner + 2 * groups * d_state
    mixer = mamba2_mixer(heads, d_inner, d_state, groups, taps, in_bias=proj_bias, out_bias=proj_bias)
    return mixer, conv_dim * taps + (conv_dim if conv_bias else 0) + 3 * heads + d_inner


def _mamba_layers(r: HFReader, n_layers: int) -> list[bool]:
    if r.model_type == "bamba":
        attn = set(int_list(r, "attn_layer_indices") or [])
        return [i not in attn for i in range(n_layers)]
    key = next((k for k in ("layer_types", "layers_block_type") if r.has(k)), None)
    if key is None:
        return [True] * n_layers
    types = str_list(r, key) or []
    r.per_layer_lists["layer_types"] = len(types)
    # published Granite-4.0-H files spell it "mamba"/"attention"; transformers reads them as the new names
    return [i >= len(types) or types[i] in ("linear_attention", "mamba") for i in range(n_layers)]


def build_mamba2(r: HFReader) -> ModelSpec:
    """Mamba-2 (``mamba2``, Codestral Mamba): every layer one RMSNorm (H) and a Mamba-2 block, no FFN;
    ``norm_f`` (H) at the end; LM head untied by default."""
    h = r.int("hidden_size", "hidden_size", default=4096)
    n_layers = r.int("num_layers", "num_hidden_layers", default=64)
    mixer, params = mamba2(r, h, MAMBA2_KEYS)
    t = KindTable()
    for _ in range(n_layers):
        t.add(layer(mixer, FFN(kind="none"), h + params))
    return r.spec(
        hidden_size=h,
        num_layers=n_layers,
        kinds=t.kinds,
        pattern=t.pattern,
        vocab_size=r.int("vocab_size", "vocab_size", default=32768),
        tie_word_embeddings=tie_embeddings(r, False),
        hidden_act=r.str(None, "hidden_act", default="silu"),
        extra_params=h,
    )


def build(r: HFReader) -> ModelSpec:
    if r.model_type == "mamba2":
        return build_mamba2(r)
    d = _DEFAULTS[r.model_type]
    c = read_common(r, {**d, "tie": False})
    h, n_layers, heads, kv, hd = c.hidden_size, c.num_layers, c.num_heads, c.num_kv_heads, c.head_dim
    inter = c.ffn_width
    bias = r.bool(None, "attention_bias", default=False)
    if r.model_type == "bamba":
        ffn = FFN(kind="dense", intermediate_size=inter, bias=r.bool(None, "mlp_bias", default=False))
    else:
        shared = r.int("shared_expert_intermediate_size", "shared_intermediate_size", default=1024)
        e = r.int("num_experts", "num_local_experts", default=8, minimum=0)
        if e:
            ffn = routed_experts(
                e,
                r.int("top_k", "num_experts_per_tok", default=2),
                inter,
                num_shared_experts=1,
                shared_intermediate_size=shared,
            )
            r.sources.setdefault("moe_intermediate_size", r.sources["intermediate_size"])
        else:
            ffn = FFN(kind="dense", intermediate_size=shared)
    mamba, mamba_params = mamba2(r, h)
    attn = heads_attention(heads, kv, hd, qkv_bias=bias, o_bias=bias)
    t = KindTable()
    for is_mamba in _mamba_layers(r, n_layers):
        t.add(layer(mamba, ffn, 2 * h + mamba_params) if is_mamba else layer(attn, ffn, 2 * h))
    return r.header_spec(
        c,
        t,
        act_default="silu",
        extra_params=h,
    )

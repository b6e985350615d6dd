"""Nemotron-H (``nemotron_h``): Mamba-2 / attention / MLP / MoE blocks, one mixer per layer.

transformers 5.24 (``configuration_nemotron_h.py``, ``modeling_nemotron_h.py``): the layer list is
``layers_block_type`` (alias ``layer_types``; legacy ``mamba`` / ``attention`` names remapped) or
``hybrid_override_pattern`` (``M`` Mamba-2, ``*`` attention, ``-`` MLP, ``E`` MoE); its length
is the layer count (``num_hidden_layers`` is ignored). Each block = RMSNorm(H) + one mixer:

- ``M``: d_inner = ``mamba_num_heads · mamba_head_dim``; ``in_proj`` H -> 2·d_inner +
  2·``n_groups``·``ssm_state_size`` + heads (bias = ``use_bias``), depthwise ``conv1d`` over
  d_inner + 2·n_groups·d_state channels (``conv_kernel`` taps, bias = ``use_conv_bias``),
  ``dt_bias`` / ``A_log`` / ``D`` (one per head), gated RMSNorm(d_inner), ``out_proj``
  (bias = ``use_bias``). ``mamba_*`` aliases (``mamba_n_groups``, ``mamba_d_conv``,
  ``mamba_conv_bias``) win over the plain keys, as in transformers.
- ``*``: q/k/v/o without bias, head_dim default 128.
- ``-``: non-gated ``up_proj`` / ``down_proj`` (relu2) of ``intermediate_size``, bias ``mlp_bias``.
- ``E``: router ``[E, H]`` fp32 (correction bias is a buffer); non-gated experts ``up_proj
  [E, I, W]`` / ``down_proj [E, W, I]`` where W = ``moe_latent_size`` (latent MoE:
  ``fc1_latent_proj`` H -> W and ``fc2_latent_proj`` W -> H, bias ``mlp_bias``) or H; one non-gated
  shared expert of ``moe_shared_expert_intermediate_size`` (whatever ``n_shared_experts`` says).

MTP (``num_nextn_predict_layers`` with ``mtp_hybrid_override_pattern`` / ``mtp_layers_block_type``,
default ``*E``) is not built by transformers; each MTP layer is sized as its blocks + enorm +
hnorm + eh_proj (2H -> H) + final norm (an estimate after DeepSeek-V3's MTP module).
``time_step_limit`` (often ``[0.0, Infinity]``) shapes nothing and is not read.
"""

from __future__ import annotations

from colint.normalize.format_reader import heads_attention, mamba2_mixer, routed_experts
from colint.normalize.hf.base import HFReader, Header
from colint.normalize.hf.moe_common import (
    KindTable,
    ignored_key,
    layer,
    mtp_module_params,
    router_groups,
    str_list,
)
from colint.normalize.hf.tie import tie_embeddings
from colint.normalize.model_spec import FFN, LayerKind, Mixer, ModelSpec
from colint.normalize.weights import kind_params

_CHARS = {"M": "linear_attention", "E": "moe", "*": "full_attention", "-": "mlp"}
_LEGACY = {"mamba": "linear_attention", "attention": "full_attention"}
_DEFAULT_TYPES = ["linear_attention", "moe", "full_attention", "mlp"]


def _types(r: HFReader, list_keys: tuple[str, ...], pattern_key: str, default: list[str]) -> tuple[list[str], str]:
    for key in list_keys:
        lst = str_list(r, key)
        if lst is not None:
            out = [_LEGACY.get(x, x) for x in lst]
            for i, x in enumerate(out):
                if x not in _CHARS.values():
                    raise r.error(
                        (key, i),
                        f"'{r.key_name(key)}[{i}]' is {x!r}; expected one of " + ", ".join(sorted(_CHARS.values())),
                    )
            return out, key
    pat = r.raw(pattern_key)
    if pat is None:
        return list(default), pattern_key
    if not isinstance(pat, str):
        raise r.error(pattern_key, f"'{r.key_name(pattern_key)}' must be a string of M, *, - and E")
    for i, c in enumerate(pat):
        if c not in _CHARS:
            raise r.error(
                pattern_key,
                f"'{r.key_name(pattern_key)}' has {c!r} at position {i}; "
                "expected M (Mamba-2), * (attention), - (MLP) or E (MoE)",
            )
    return [_CHARS[c] for c in pat], pattern_key


def build(r: HFReader) -> ModelSpec:
    h = r.int("hidden_size", "hidden_size", default=4096)
    types, notes = _layer_types(r)
    n_layers = len(types)
    heads = r.int("num_heads", "num_attention_heads", default=32)
    kv = r.int("num_kv_heads", "num_key_value_heads", default=8)
    hd = r.int("head_dim", "head_dim", default=128)
    inter = r.int("intermediate_size", "intermediate_size", default=21504)
    mlp_bias = r.bool(None, "mlp_bias", default=False)
    mamba = _mamba_block(r, h)
    moe = _moe_ffn(r, mlp_bias)
    issues = []
    if r.opt_int(None, "n_shared_experts") not in (None, 1):
        issues.append(
            ignored_key(
                r,
                "n_shared_experts",
                "transformers builds exactly one shared expert of moe_shared_expert_intermediate_size",
            )
        )
    vocab = r.int("vocab_size", "vocab_size", default=131072)
    tie = tie_embeddings(r, False)

    none_mixer, none_ffn = Mixer(kind="none"), FFN(kind="none")
    blocks = {
        "linear_attention": mamba,
        "full_attention": layer(heads_attention(heads, kv, hd), none_ffn, h),
        "mlp": layer(none_mixer, FFN(kind="dense", intermediate_size=inter, gated=False, bias=mlp_bias), h),
        "moe": layer(none_mixer, moe, h),
    }
    t = KindTable()
    for x in types:
        t.add(blocks[x])

    mtp = r.int("mtp_layers", "num_nextn_predict_layers", default=0, minimum=0)
    mtp_params = _mtp_params(r, mtp, blocks, h, notes) if mtp else 0
    return r.header_spec(
        Header(h, n_layers, heads, kv, hd, inter, vocab, tie),
        t,
        act=("mlp_hidden_act",),
        act_default="relu2",
        extra_params=h,
        mtp_layers=mtp,
        mtp_params=mtp_params,
        notes=notes,
        key_issues=issues,
    )


def _layer_types(r: HFReader) -> tuple[list[str], list[str]]:
    """(each layer's block type, notes): the block list or pattern is the layer count, not num_hidden_layers."""
    types, types_key = _types(r, ("layers_block_type", "layer_types"), "hybrid_override_pattern", _DEFAULT_TYPES)
    n_layers = len(types)
    if n_layers == 0:
        raise r.error(types_key, f"'{r.key_name(types_key)}' lists no layers")
    r.record("num_layers", types_key)
    notes = []
    declared = r.opt_int(None, "num_hidden_layers")
    if declared is not None and declared != n_layers:
        notes.append(
            f"num_hidden_layers {declared} differs from the {n_layers} layers of {types_key}; "
            f"transformers uses {types_key}"
        )
    return types, notes


def _mamba_block(r: HFReader, h: int) -> LayerKind:
    """The ``M`` block: RMSNorm + Mamba-2 (the ``mamba_*`` aliases win over the plain keys)."""
    m_heads = r.int(None, "mamba_num_heads", default=128)
    m_hd = r.int(None, "mamba_head_dim", default=64)
    d_state = r.int(None, "ssm_state_size", default=128)
    groups = r.int(None, "mamba_n_groups", "n_groups", default=8)
    conv = r.int(None, "mamba_d_conv", "conv_kernel", default=4)
    conv_bias = r.bool(None, "mamba_conv_bias", "use_conv_bias", default=True)
    use_bias = r.bool(None, "use_bias", default=False)
    d_inner = m_heads * m_hd
    conv_dim = d_inner + 2 * groups * d_state
    return layer(
        mamba2_mixer(m_heads, d_inner, d_state, groups, conv, in_bias=use_bias, out_bias=use_bias),
        FFN(kind="none"),
        h + conv_dim * conv + (conv_dim if conv_bias else 0) + 3 * m_heads + d_inner,
    )


def _moe_ffn(r: HFReader, mlp_bias: bool) -> FFN:
    """The ``E`` block's FFN: non-gated routed experts (latent where ``moe_latent_size`` is given), one shared."""
    e = r.int("num_experts", "n_routed_experts", "num_local_experts", default=8)
    k = r.int("top_k", "num_experts_per_tok", default=2)
    moe_inter = r.int("moe_intermediate_size", "moe_intermediate_size", default=7688)
    shared = r.int("shared_expert_intermediate_size", "moe_shared_expert_intermediate_size", default=7688)
    latent = r.opt_int("moe_latent_size", "moe_latent_size", minimum=1)
    return routed_experts(
        e,
        k,
        moe_inter,
        expert_gated=False,
        num_shared_experts=1,
        shared_intermediate_size=shared,
        shared_gated=False,
        shared_bias=mlp_bias,
        latent_size=latent,
        latent_bias=mlp_bias,
        **router_groups(r, e, k, r.defaults),
    )


def _mtp_params(r: HFReader, mtp: int, blocks: dict[str, LayerKind], h: int, notes: list[str]) -> int:
    """The parameters of ``mtp`` MTP layers, each of its pattern's blocks (an estimate: transformers does not
    build them)."""
    mtp_types, _ = _types(r, ("mtp_layers_block_type",), "mtp_hybrid_override_pattern", ["full_attention", "moe"])
    per_layer = mtp_module_params(sum(kind_params(blocks[x], h)[0] for x in mtp_types), h)
    notes.append(
        f"MTP: {mtp} layer(s) of pattern "
        + "".join({v: c for c, v in _CHARS.items()}[x] for x in mtp_types)
        + ", not built by transformers; mtp_params is an estimate"
    )
    return mtp * per_layer

"""Gemma-4 text (``gemma4_text``; the ``gemma4`` wrapper is linted through its ``text_config``).

transformers' Gemma4ForCausalLM, per layer i (``layer_types`` default: 5 sliding : 1 full, the
last layer forced full):
- attention: q_proj (heads x head_dim_i), k_proj/v_proj (kv_i x head_dim_i), o_proj, all with
  ``attention_bias``; full layers use ``global_head_dim`` (default 512) and, when
  ``attention_k_eq_v``, ``num_global_key_value_heads`` KV heads and **no v_proj** (values are
  the keys). A serialised ``per_layer_config`` ({"5": {"head_dim": 512, ...}}) overrides both.
  The last ``num_kv_shared_layers`` layers reuse an earlier layer's KV cache: no k/v
  projections and no k_norm. Norms: q_norm/k_norm (head_dim_i; v_norm has no weight), four
  RMSNorms of width H.
- MLP: gated, ``intermediate_size`` (doubled on KV-sharing layers with ``use_double_wide_mlp``).
  With ``enable_moe_block`` a routed MoE (``num_experts``, ``top_k_experts``,
  ``moe_intermediate_size``; router Linear H -> E plus ``scale`` [H] and ``per_expert_scale``
  [E]; three more RMSNorms) runs *beside* that MLP, so the MLP is modelled as one shared expert.
- per-layer embeddings (``hidden_size_per_layer_input`` P, default 256): per layer
  ``per_layer_input_gate`` (H -> P), ``per_layer_projection`` (P -> H) and a norm; per model a
  ``vocab_size_per_layer_input`` x (L x P) table, a ``per_layer_model_projection`` (H -> L x P)
  and a norm (P). These projections are counted, not listed as GEMMs.
Final RMSNorm; LM head tied by default.
"""

from __future__ import annotations

from colint.normalize.format_reader import routed_experts
from colint.normalize.hf.base import HFReader, layer_types_of, read_common
from colint.normalize.model_spec import FFN, LayerKind, Mixer, ModelSpec

DEFAULT_GLOBAL_HEAD_DIM = 512  # Gemma4TextConfig.__post_init__: kwargs.pop("global_head_dim", 512)
DEFAULT_PATTERN = 6  # Gemma4TextConfig: "sliding_window_pattern = 6  # by default 5:1"


def _overrides(r: HFReader, n_layers: int, types: list[str], k_eq_v: bool) -> dict[int, dict]:
    plc = r.raw("per_layer_config")
    if isinstance(plc, dict):
        out = {}
        for k, v in plc.items():
            try:
                idx = int(k)
            except (TypeError, ValueError):
                raise r.error(("per_layer_config", k), f"per_layer_config key {k!r} is not a layer index") from None
            if not isinstance(v, dict):
                raise r.error(("per_layer_config", k), f"per_layer_config[{k!r}] must be a mapping")
            out[idx] = {
                "head_dim": r.int(None, f"per_layer_config.{k}.head_dim", default=None),
                "num_key_value_heads": r.int(None, f"per_layer_config.{k}.num_key_value_heads", default=None),
            }
        return out
    global_hd = r.int(None, "global_head_dim", default=DEFAULT_GLOBAL_HEAD_DIM)
    global_kv = r.opt_int("num_global_kv_heads", "num_global_key_value_heads", minimum=1) if k_eq_v else None
    return {
        i: {"head_dim": global_hd, "num_key_value_heads": global_kv}
        for i in range(n_layers)
        if types[i] == "full_attention"
    }


def build(r: HFReader) -> ModelSpec:
    # KV heads absent: the class default (16 Gemma, 4 Gemma-2/3/4), not heads; head_dim absent: the class default (256 Gemma)
    c = read_common(r, head_dim="stated")
    h, n_layers, heads, kv, hd = c.hidden_size, c.num_layers, c.num_heads, c.num_kv_heads, c.head_dim
    inter, vocab = c.intermediate_size, c.vocab_size
    assert inter is not None  # read_common read intermediate_size
    bias = r.bool(None, "attention_bias", default=False)
    window = r.opt_int("sliding_window", "sliding_window")
    k_eq_v = r.bool(None, "attention_k_eq_v", default=False)
    shared = r.int(None, "num_kv_shared_layers", default=0, minimum=0)
    double_wide = r.bool(None, "use_double_wide_mlp", default=False)
    ple = (
        r.int(None, "hidden_size_per_layer_input", default=r.defaults.get("hidden_size_per_layer_input", 0), minimum=0)
        or 0
    )
    ple_vocab = (
        r.int(None, "vocab_size_per_layer_input", default=r.defaults.get("vocab_size_per_layer_input", vocab))
        if ple
        else 0
    )
    moe = r.bool(None, "enable_moe_block", default=False)
    if moe:
        n_exp = r.int("num_experts", "num_experts")
        top_k = r.int("top_k", "top_k_experts")
        moe_inter = r.int("moe_intermediate_size", "moe_intermediate_size")

    types = r.layer_types(n_layers)
    if types is None:
        types = ["sliding_attention" if (i + 1) % DEFAULT_PATTERN else "full_attention" for i in range(n_layers)]
    types = layer_types_of(types, n_layers)
    types[-1] = "full_attention"  # transformers forces the last layer to full attention
    over = _overrides(r, n_layers, types, k_eq_v)
    first_shared = n_layers - shared

    kinds: list[LayerKind] = []
    index: dict[tuple, int] = {}
    pattern = []
    for i in range(n_layers):
        sliding = types[i] == "sliding_attention"
        o = over.get(i, {})
        hd_i = o.get("head_dim") or hd
        kv_i = o.get("num_key_value_heads") or kv
        reuse = i >= first_shared
        v_from_k = k_eq_v and not sliding
        attn = "sliding" if sliding and window else "full"
        mixer = Mixer(
            kind="attention",
            attention=attn,
            window=window if attn == "sliding" else None,
            num_heads=heads,
            num_kv_heads=kv_i,
            head_dim=hd_i,
            qkv_bias=bias,
            o_bias=bias,
            kv_shared=reuse,
            v_from_k=v_from_k and not reuse,
        )
        width = inter * (2 if double_wide and reuse else 1)
        other = 4 * h + hd_i + (0 if reuse else hd_i)
        if ple:
            other += 2 * h * ple + h  # per_layer_input_gate, per_layer_projection, post_per_layer_input_norm
        if moe:
            ffn = routed_experts(n_exp, top_k, moe_inter, num_shared_experts=1, shared_intermediate_size=width)
            other += h + n_exp + 3 * h  # router scale, per_expert_scale, three extra norms
        else:
            ffn = FFN(kind="dense", intermediate_size=width, gated=True)
        key = (mixer, ffn, other)
        if key not in index:
            index[key] = len(kinds)
            name = f"attention/{attn}{'(kv-shared)' if reuse else ''}+{ffn.kind}"
            kinds.append(LayerKind(name=name, mixer=mixer, ffn=ffn, other_params=other))
        pattern.append(index[key])
    notes = []
    if ple:
        notes.append(
            f"per-layer embeddings ({ple} per layer): their projections are counted in the parameters "
            "but not listed as GEMMs"
        )
    return r.header_spec(
        c,
        (kinds, pattern),
        act=("hidden_activation", "hidden_act"),
        sliding_window=window,
        embedding_params_extra=ple_vocab * n_layers * ple,
        extra_params=h + (h * n_layers * ple + ple if ple else 0),
        notes=notes,
    )

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


from colint.normalize.format_reader import heads_attention, routed_experts
from colint.normalize.hf.base import HFReader, Header, layer_types_of, read_common
from colint.normalize.model_spec import FFN, LayerKind, Mixer, ModelSpec
from colint.util.records import dataclass

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


@dataclass(frozen=True)
class _Options:
    """What a Gemma-4 layer's shapes depend on beyond the header."""

    bias: bool  # attention_bias
    window: int | None
    k_eq_v: bool  # full layers' values are their keys
    shared: int  # the last layers that reuse an earlier layer's KV cache
    double_wide: bool  # a KV-sharing layer's MLP twice as wide
    ple: int  # per-layer embedding width (0: none)
    moe: tuple[int, int, int] | None  # (experts, top-k, expert width) of the MoE block beside the MLP


def build(r: HFReader) -> ModelSpec:
    # KV heads absent: the class default (16 Gemma, 4 Gemma-2/3/4), not heads; head_dim absent: the class default (256 Gemma)
    c = read_common(r, head_dim="stated")
    h, n_layers, vocab = c.hidden_size, c.num_layers, c.vocab_size
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
    o = _Options(bias, window, k_eq_v, shared, double_wide, ple, _moe_keys(r))
    types = _layer_types(r, n_layers)
    over = _overrides(r, n_layers, types, k_eq_v)
    layers = _layer_table(c, o, types, over)
    notes = []
    if ple:
        notes.append(
            f"per-layer embeddings ({ple} per layer): their projections are counted in the parameters "
            "but not listed as GEMMs"
        )
    return r.header_spec(
        c,
        layers,
        act=("hidden_activation", "hidden_act"),
        sliding_window=window,
        embedding_params_extra=ple_vocab * n_layers * ple,
        extra_params=h + (h * n_layers * ple + ple if ple else 0),
        notes=notes,
    )


def _moe_keys(r: HFReader) -> tuple[int, int, int] | None:
    """(experts, top-k, expert width) with ``enable_moe_block``, else None."""
    if not r.bool(None, "enable_moe_block", default=False):
        return None
    n_exp = r.int("num_experts", "num_experts")
    top_k = r.int("top_k", "top_k_experts")
    return n_exp, top_k, r.int("moe_intermediate_size", "moe_intermediate_size")


def _layer_types(r: HFReader, n_layers: int) -> list[str]:
    """``layer_types`` (default 5 sliding : 1 full) fitted to the layers, the last one forced full."""
    types = r.layer_types(n_layers)
    if types is None:
        types = ["sliding_attention" if (i + 1) % DEFAULT_PATTERN else "full_attention" for i in range(n_layers)]
    types = layer_types_of(types, n_layers)
    types[-1] = "full_attention"  # transformers forces the last layer to full attention
    return types


def _layer_table(c: Header, o: _Options, types: list[str], over: dict[int, dict]) -> tuple[list[LayerKind], list[int]]:
    """One LayerKind per distinct (mixer, FFN, other parameters) and each layer's index into them."""
    kinds: list[LayerKind] = []
    index: dict[tuple, int] = {}
    pattern = []
    first_shared = c.num_layers - o.shared
    for i in range(c.num_layers):
        reuse = i >= first_shared
        mixer, ffn, other = _layer(c, o, types[i] == "sliding_attention", over.get(i, {}), reuse)
        key = (mixer, ffn, other)
        if key not in index:
            index[key] = len(kinds)
            name = f"attention/{mixer.attention}{'(kv-shared)' if reuse else ''}+{ffn.kind}"
            kinds.append(LayerKind(name=name, mixer=mixer, ffn=ffn, other_params=other))
        pattern.append(index[key])
    return kinds, pattern


def _layer(c: Header, o: _Options, sliding: bool, over: dict, reuse: bool) -> tuple[Mixer, FFN, int]:
    """(mixer, FFN, parameters outside GEMMs) of one layer: its head_dim and KV heads (the overrides of a full
    layer), KV sharing (no k/v projections, no k_norm), the MLP (with the MoE block beside it)."""
    h = c.hidden_size
    hd_i = over.get("head_dim") or c.head_dim
    kv_i = over.get("num_key_value_heads") or c.num_kv_heads
    v_from_k = o.k_eq_v and not sliding
    attn = "sliding" if sliding and o.window else "full"
    mixer = heads_attention(
        c.num_heads,
        kv_i,
        hd_i,
        attention=attn,
        window=o.window if attn == "sliding" else None,
        qkv_bias=o.bias,
        o_bias=o.bias,
        kv_shared=reuse,
        v_from_k=v_from_k and not reuse,
    )
    width = c.ffn_width * (2 if o.double_wide and reuse else 1)
    other = 4 * h + hd_i + (0 if reuse else hd_i)
    if o.ple:
        other += 2 * h * o.ple + h  # per_layer_input_gate, per_layer_projection, post_per_layer_input_norm
    if o.moe:
        n_exp, top_k, moe_inter = o.moe
        ffn = routed_experts(n_exp, top_k, moe_inter, num_shared_experts=1, shared_intermediate_size=width)
        other += h + n_exp + 3 * h  # router scale, per_expert_scale, three extra norms
    else:
        ffn = FFN(kind="dense", intermediate_size=width, gated=True)
    return mixer, ffn, other

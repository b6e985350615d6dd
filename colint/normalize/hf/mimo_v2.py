"""MiMo-V2-Flash (``mimo_v2_flash``): a MoE decoder whose sliding-window and full-attention layers have
their own attention geometry.

transformers 5.24 ``modeling_mimo_v2_flash.py`` / ``MiMoV2FlashConfig``:

- ``layer_types``: full attention on layer 0 and every 6th layer (``(i + 1) % 6 == 0``), sliding on the
  rest, unless the file gives ``layer_types``. The published checkpoint says the same with
  ``hybrid_layer_pattern`` (0 full, 1 sliding; SGLang's and vLLM's reading), which transformers' config
  class does not read: colint reads the file's pattern and says so when transformers would build another.
- attention: q ``H -> heads·head_dim``, k ``H -> kv·head_dim``, v ``H -> kv·v_head_dim`` (bias =
  ``attention_bias``), o ``heads·v_head_dim -> H`` without bias; head_dim 192, v_head_dim 128.
  A sliding layer has ``num_key_value_heads * 2`` KV heads in transformers; the checkpoint states its
  sliding geometry as ``swa_num_attention_heads``, ``swa_num_key_value_heads``, ``swa_head_dim``,
  ``swa_v_head_dim`` (read here, each defaulting to transformers' value), and its window as
  ``sliding_window_size`` (keys before the query; transformers' window is that + 1, or ``sliding_window``).
- attention sinks: one learned logit per head on sliding layers (``add_swa_attention_sink_bias``,
  transformers: always), none on full layers (``add_full_attention_sink_bias``).
- FFN: ``mlp_layer_types`` (transformers' default: layer 0 dense, the rest sparse); the checkpoint's
  ``moe_layer_freq`` list (0 dense, 1 MoE) says the same and is read when ``mlp_layer_types`` is absent.
  MoE: router ``[E, H]`` FP32 (``e_score_correction_bias`` is a buffer), fused gated experts of
  ``moe_intermediate_size``, no shared expert. Two RMSNorms per layer and a final one.
- MTP layers (``num_nextn_predict_layers``) are not built by transformers and not counted.
"""

from __future__ import annotations

from colint.normalize.format_reader import heads_attention, routed_experts
from colint.normalize.hf.base import HFReader, Header
from colint.normalize.hf.moe_common import KindTable, ignored_key, int_list, layer, router_groups, str_list
from colint.normalize.hf.tie import tie_embeddings
from colint.normalize.model_spec import FFN, ModelSpec


def _transformers_types(n: int) -> list[str]:
    return ["full_attention" if (i == 0 or not (i + 1) % 6) else "sliding_attention" for i in range(n)]


def _layer_types(r: HFReader, n: int, notes: list[str]) -> list[str]:
    stated = r.layer_types(n)
    if stated is not None:
        for i, t in enumerate(stated):
            if t not in ("full_attention", "sliding_attention"):
                raise r.error(
                    ("layer_types", i), f"'{r.key_name('layer_types')}[{i}]' must be full or sliding attention"
                )
        return list(stated)
    pattern = int_list(r, "hybrid_layer_pattern")
    if pattern is None:
        return _transformers_types(n)
    r.per_layer_lists["hybrid_layer_pattern"] = len(pattern)
    r.record("layer_types", "hybrid_layer_pattern")
    types = ["sliding_attention" if i < len(pattern) and pattern[i] else "full_attention" for i in range(n)]
    if types != _transformers_types(n):
        notes.append(
            "hybrid_layer_pattern differs from the pattern transformers' MiMoV2FlashConfig builds (full attention on "
            "layer 0 and every 6th layer; it does not read hybrid_layer_pattern): counted as the file says"
        )
    return types


def _sparse(r: HFReader, n: int) -> list[bool]:
    types = str_list(r, "mlp_layer_types")
    if types is not None:
        r.per_layer_lists["mlp_layer_types"] = len(types)
        return [i < len(types) and types[i] == "sparse" for i in range(n)]
    freq = r.raw("moe_layer_freq")
    if isinstance(freq, list):
        ints = int_list(r, "moe_layer_freq") or []
        r.per_layer_lists["moe_layer_freq"] = len(ints)
        return [i < len(ints) and bool(ints[i]) for i in range(n)]
    return [i > 0 for i in range(n)]


def build(r: HFReader) -> ModelSpec:
    h = r.int("hidden_size", "hidden_size", default=r.defaults["hidden_size"])
    n = r.int("num_layers", "num_hidden_layers", default=r.defaults["num_hidden_layers"])
    heads = r.int("num_heads", "num_attention_heads", default=r.defaults["num_attention_heads"])
    kv = r.int("num_kv_heads", "num_key_value_heads", default=r.defaults["num_key_value_heads"])
    hd = r.int("head_dim", "head_dim", default=r.defaults["head_dim"])
    vd = r.int("v_head_dim", "v_head_dim", default=r.defaults["v_head_dim"])
    inter = r.int("intermediate_size", "intermediate_size", default=r.defaults["intermediate_size"])
    vocab = r.int("vocab_size", "vocab_size", default=r.defaults["vocab_size"])
    bias = r.bool(None, "attention_bias", default=False)
    tie = tie_embeddings(r, False)
    r.float(None, "layernorm_epsilon", "rms_norm_eps", default=1e-5)  # the checkpoint's name for the RMSNorm eps
    notes: list[str] = []
    rejects: list[str] = []
    issues: list = []
    types = _layer_types(r, n, notes)

    # the sliding layers' own geometry (transformers: the full layers' with twice the KV heads)
    swa_heads = r.int(None, "swa_num_attention_heads", default=heads)
    swa_kv = r.int(None, "swa_num_key_value_heads", default=2 * kv)
    swa_hd = r.int(None, "swa_head_dim", default=hd)
    swa_vd = r.int(None, "swa_v_head_dim", default=vd)
    if r.has("sliding_window_size"):
        window = r.int("sliding_window", "sliding_window_size") + 1  # the query attends itself too
    else:
        window = r.int("sliding_window", "sliding_window", default=r.defaults["sliding_window"])
    built = (heads, 2 * kv, hd, vd)
    if "sliding_attention" in types and (swa_heads, swa_kv, swa_hd, swa_vd) != built:
        rejects.append(
            f"transformers' MiMoV2Flash builds sliding layers with {heads} heads, {2 * kv} KV heads "
            f"(num_key_value_heads x 2), head_dim {hd} and v_head_dim {vd}; the file's swa_* keys say "
            f"{swa_heads}, {swa_kv}, {swa_hd}, {swa_vd} (counted as the file says)"
        )
    sinks_swa = r.bool(None, "add_swa_attention_sink_bias", default=True)
    sinks_full = r.bool(None, "add_full_attention_sink_bias", default=False)

    full = heads_attention(heads, kv, hd, v_head_dim=vd if vd != hd else None, qkv_bias=bias)
    sliding = heads_attention(
        swa_heads,
        swa_kv,
        swa_hd,
        attention="sliding",
        window=window,
        v_head_dim=swa_vd if swa_vd != swa_hd else None,
        qkv_bias=bias,
    )
    sparse = _sparse(r, n)
    moe = None
    if any(sparse):
        shared = r.raw("n_shared_experts")
        if isinstance(shared, int) and not isinstance(shared, bool) and shared > 0:
            issues.append(ignored_key(r, "n_shared_experts", "transformers' mimo_v2_flash builds no shared expert"))
        e = r.int("num_experts", "n_routed_experts", "num_local_experts", default=r.defaults["n_routed_experts"])
        k = r.int("top_k", "num_experts_per_tok", default=r.defaults["num_experts_per_tok"])
        moe = routed_experts(
            e,
            k,
            r.int("moe_intermediate_size", "moe_intermediate_size", default=r.defaults["moe_intermediate_size"]),
            **router_groups(r, e, k, r.defaults),
        )
    dense = FFN(kind="dense", intermediate_size=inter)
    t = KindTable()
    for i in range(n):
        swa = types[i] == "sliding_attention"
        mixer = sliding if swa else full
        sinks = mixer.num_heads if (sinks_swa if swa else sinks_full) else 0
        t.add(layer(mixer, moe if sparse[i] and moe is not None else dense, 2 * h + sinks))
    if r.has("num_nextn_predict_layers"):
        notes.append("MTP layers (num_nextn_predict_layers) are not built by transformers and not counted")
    return r.header_spec(
        Header(h, n, heads, kv, hd, inter, vocab, tie),
        t,
        act_default="silu",
        sliding_window=window,
        extra_params=h,
        notes=notes,
        loader_rejects=rejects,
        key_issues=issues,
    )

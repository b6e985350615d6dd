"""DeepSeek MLA + MoE decoders: ``deepseek_v2``, ``deepseek_v3``, ``deepseek_v32``, GLM-5 (``glm_moe_dsa``:
DeepSeek-V3.2's DSA attention on a GLM body), and Kimi K2 (``kimi_k2``: DeepSeek-V3 architecture;
transformers 5.24 has no ``kimi_k2`` config of its own and its ``kimi_k25`` wrapper maps ``kimi_k2``
text configs to ``deepseek_v3``).

transformers 5.24 (``modeling_deepseek_v2.py`` / ``_v3.py`` / ``_v32.py``):

- MLA: ``q_proj`` H -> heads·(nope+rope) when ``q_lora_rank`` is null, else ``q_a_proj``
  (H -> q_lora, bias = ``attention_bias``) + RMSNorm(q_lora) + ``q_b_proj``; ``kv_a_proj_with_mqa``
  H -> kv_lora + rope (bias = ``attention_bias``) + RMSNorm(kv_lora); ``kv_b_proj``
  kv_lora -> heads·(nope + v); ``o_proj`` heads·v -> H (bias = ``attention_bias``).
- V3.2 adds the sparse-attention indexer to every layer: ``wq_b`` q_lora -> index_heads·index_dim,
  ``wk`` H -> index_dim, ``k_norm`` LayerNorm(index_dim, with bias), ``weights_proj`` H -> index_heads;
  each query then attends the indexer's ``index_topk`` tokens (``Mixer.index_topk``).
- GLM-5 (``modeling_glm_moe_dsa.py``) builds the same layer with its own defaults (64 heads, q_lora 2048,
  nope 192, v 256, 32 index heads) and ``indexer_types``: a ``"shared"`` layer has no indexer (it reuses
  the previous full layer's top-k); the list comes from ``indexer_types``, else ``index_topk_pattern``
  (``F``/``S`` string or list), else ``index_topk_freq`` / ``index_skip_topk_offset`` (defaults 1 and 2:
  every layer runs its indexer), as ``GlmMoeDsaConfig.__post_init__`` derives it.
- FFN: layer *i* is MoE iff ``i >= first_k_dense_replace`` (V3.2: ``mlp_layer_types`` when given).
  MoE = router ``[E, H]`` fp32 (``e_score_correction_bias`` is a buffer, not a parameter), fused
  experts of ``moe_intermediate_size``, shared experts as one gated MLP of
  ``n_shared_experts · moe_intermediate_size``. V2's ``mlp_bias`` puts biases on the dense and
  shared MLPs. V2's ``moe_layer_freq`` is ignored by transformers (noted when it is not 1).
- MTP (``num_nextn_predict_layers``) is not built by transformers: reported in ``mtp_layers`` /
  ``mtp_params`` (one MoE decoder layer + enorm + hnorm + eh_proj 2H -> H + shared-head norm).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from colint.normalize.format_reader import mla_attention, mla_norm_params, routed_experts
from colint.normalize.hf.base import HFReader, Header, family_defaults
from colint.normalize.hf.moe_common import (
    GROUP_LIMITED_ROUTERS,
    KindTable,
    deepseek_style_mtp_params,
    ignored_key,
    layer,
    nullable_int,
    router_groups,
    str_list,
)
from colint.normalize.hf.tie import tie_embeddings
from colint.normalize.model_spec import FFN, KeyIssue, Mixer, ModelSpec

# the families whose config class hf_defaults.json holds (transformers' DeepseekV2/V3/V32Config and GlmMoeDsaConfig);
# Kimi-K2 and other DeepSeek-V3 copies take DeepseekV3Config's defaults
_CLASSES = ("deepseek_v2", "deepseek_v3", "deepseek_v32", "glm_moe_dsa")
_DSA = ("deepseek_v32", "glm_moe_dsa")


def build(r: HFReader) -> ModelSpec:
    mt = r.model_type if r.model_type in _CLASSES else "deepseek_v3"
    d = family_defaults(mt)[0]  # the config class's defaults (hf_defaults.json, generated from transformers)
    h = r.int("hidden_size", "hidden_size", default=d["hidden_size"])
    n_layers = r.int("num_layers", "num_hidden_layers", default=d["num_hidden_layers"])
    heads = r.int("num_heads", "num_attention_heads", default=d["num_attention_heads"])
    kv_heads = r.int("num_kv_heads", "num_key_value_heads", default=heads)  # nominal under MLA
    mla = _mla_keys(r, d)
    dense_ffn, moe_ffn, first_k = _ffns(r, d, mt)
    vocab = r.int("vocab_size", "vocab_size", default=d["vocab_size"])
    tie = tie_embeddings(r, False)
    issues = _moe_layer_freq_issues(r) if mt == "deepseek_v2" else []
    rejects = []
    if mt == "deepseek_v2" and h % heads:
        rejects.append(f"DeepseekV2Config rejects hidden_size {h} not divisible by num_attention_heads {heads}")
    mixer = mla_attention(heads, kv_heads, **mla, **_indexer(r, mt, d, mla["q_lora"]))
    t = _layer_table(r, mt, n_layers, first_k, mixer, (dense_ffn, moe_ffn), h)

    # transformers builds no MTP layer; DeepseekV3Config alone states one (the others: None, none)
    mtp_d = d.get("num_nextn_predict_layers") or 0
    mtp = r.int("mtp_layers", "num_nextn_predict_layers", "num_mtp_layers", default=mtp_d, minimum=0)
    mtp_params = mtp * deepseek_style_mtp_params(layer(mixer, moe_ffn, 2 * h + mla_norm_params(mixer)), h) if mtp else 0
    return r.header_spec(
        Header(h, n_layers, heads, kv_heads, mla["nope"] + mla["rope"], dense_ffn.intermediate_size, vocab, tie),
        t,
        act_default="silu",
        extra_params=h,
        mtp_layers=mtp,
        mtp_params=mtp_params,
        notes=[],
        loader_rejects=rejects,
        key_issues=issues,
    )


def _mla_keys(r: HFReader, d: dict[str, Any]) -> dict[str, Any]:
    """The MLA geometry (:func:`mla_attention`'s keywords), with the config class's defaults ``d``."""
    return dict(
        # an explicit null (V2-Lite): a plain q projection
        q_lora=nullable_int(r, "q_lora_rank", "q_lora_rank", d["q_lora_rank"]),
        kv_lora=r.int("kv_lora_rank", "kv_lora_rank", default=d["kv_lora_rank"]),
        nope=r.int("qk_nope_head_dim", "qk_nope_head_dim", default=d["qk_nope_head_dim"]),
        rope=r.int("qk_rope_head_dim", "qk_rope_head_dim", default=d["qk_rope_head_dim"]),
        v_dim=r.int("v_head_dim", "v_head_dim", default=d["v_head_dim"]),
        bias=r.bool(None, "attention_bias", default=False),
    )


def _ffns(r: HFReader, d: dict[str, Any], mt: str) -> tuple[FFN, FFN, int]:
    """(the dense FFN, the MoE FFN, first_k_dense_replace) of family ``mt``: V2's ``mlp_bias`` on the dense and shared
    MLPs."""
    mlp_bias = r.bool(None, "mlp_bias", default=False) if mt == "deepseek_v2" else False
    inter = r.int("intermediate_size", "intermediate_size", default=d["intermediate_size"])
    moe_inter = r.int("moe_intermediate_size", "moe_intermediate_size", default=d["moe_intermediate_size"])
    e = r.int("num_experts", "n_routed_experts", "num_local_experts", "num_experts", default=d["n_routed_experts"])
    k_d = d["num_experts_per_tok"]  # None in DeepseekV2Config: the file must state it
    k = r.int("top_k", "num_experts_per_tok", **({} if k_d is None else {"default": k_d}))
    n_shared = r.int("num_shared_experts", "n_shared_experts", default=d["n_shared_experts"], minimum=0)
    first_k = r.int("first_k_dense_replace", "first_k_dense_replace", default=d["first_k_dense_replace"], minimum=0)
    dense_ffn = FFN(kind="dense", intermediate_size=inter, bias=mlp_bias)
    # V3's router always limits its groups; V2's only with topk_method "group_limited_greedy" (its default: greedy)
    limited = mt in GROUP_LIMITED_ROUTERS or r.str(None, "topk_method", default=d.get("topk_method")) == (
        "group_limited_greedy"
    )
    moe_ffn = routed_experts(
        e,
        k,
        moe_inter,
        num_shared_experts=n_shared,
        shared_intermediate_size=moe_inter if n_shared else 0,
        shared_bias=mlp_bias,
        **(router_groups(r, e, k, d) if limited else {}),
    )
    return dense_ffn, moe_ffn, first_k


def _moe_layer_freq_issues(r: HFReader) -> list[KeyIssue]:
    """V2's ``moe_layer_freq``, which transformers ignores: a CL007 issue where it is not 1."""
    freq = r.int(None, "moe_layer_freq", default=1)
    if freq == 1:
        return []
    return [
        ignored_key(
            r,
            "moe_layer_freq",
            f"transformers' deepseek_v2 makes every layer from "
            f"first_k_dense_replace on MoE; DeepSeek's remote code only every {freq}th",
        )
    ]


def _indexer(r: HFReader, mt: str, d: dict[str, Any], q_lora: int | None) -> dict[str, Any]:
    """The DSA indexer's keywords of :func:`mla_attention` (V3.2, GLM-5); none elsewhere."""
    if mt not in _DSA:
        return dict(index_num_heads=None, index_head_dim=None, index_topk=None)
    if q_lora is None:
        raise r.error("q_lora_rank", f"{mt} needs 'q_lora_rank' (its indexer reads the q latent)")
    return dict(
        index_num_heads=r.int(None, "index_n_heads", default=d["index_n_heads"]),
        index_head_dim=r.int(None, "index_head_dim", default=d["index_head_dim"]),
        index_topk=r.int(None, "index_topk", default=d["index_topk"]),
    )


def _layer_table(
    r: HFReader, mt: str, n_layers: int, first_k: int, mixer: Mixer, ffns: tuple[FFN, FFN], h: int
) -> KindTable:
    """Each layer dense or sparse (``first_k_dense_replace``; V3.2: ``mlp_layer_types``), and on GLM-5 running
    its own indexer or reusing the previous full layer's top-k (``_indexer_types``)."""
    other = 2 * h + mla_norm_params(mixer)
    # GLM-5's "shared" indexer layers: no indexer weights, norm or key cache; the same top-k sparse attention
    shared_mixer = replace(mixer, index_num_heads=None, index_head_dim=None)
    shared_other = 2 * h + mla_norm_params(shared_mixer)
    indexer = _indexer_types(r, n_layers) if mt == "glm_moe_dsa" else None
    mlp_types = str_list(r, "mlp_layer_types") if mt in _DSA else None
    if mlp_types is not None:
        r.per_layer_lists["mlp_layer_types"] = len(mlp_types)
        r.record("mlp_layer_types", "mlp_layer_types")
    t = KindTable()
    kinds = tuple(layer(mixer, f, other) for f in ffns)  # [dense, sparse]
    shared = tuple(layer(shared_mixer, f, shared_other) for f in ffns)
    for i in range(n_layers):
        if mlp_types is not None:
            sparse = i < len(mlp_types) and mlp_types[i] == "sparse"
        else:
            sparse = i >= first_k
        runs_indexer = indexer is None or (i < len(indexer) and indexer[i] == "full")
        t.add((kinds if runs_indexer else shared)[sparse])
    return t


def _indexer_types(r: HFReader, n_layers: int) -> list[str]:
    """GLM-5's per-layer indexer mode ("full" runs the indexer, "shared" reuses the previous full layer's top-k), as
    ``GlmMoeDsaConfig.__post_init__`` derives it: ``indexer_types``, else ``index_topk_pattern``, else every
    ``index_topk_freq``-th layer from ``index_skip_topk_offset`` on."""
    types = str_list(r, "indexer_types")
    if types is not None:
        r.per_layer_lists["indexer_types"] = len(types)
        r.record("indexer_types", "indexer_types")
        for i, t in enumerate(types):
            if t not in ("full", "shared"):
                raise r.error(("indexer_types", i), f"'{r.key_name('indexer_types')}[{i}]' must be 'full' or 'shared'")
        return types
    if r.has("index_topk_pattern"):
        pattern = r.raw("index_topk_pattern")
        names = {"F": "full", "S": "shared", "full": "full", "shared": "shared"}
        items = list(pattern) if isinstance(pattern, (str, list)) else None
        if items is None or any(not isinstance(c, str) or c not in names for c in items):
            raise r.error("index_topk_pattern", f"'{r.key_name('index_topk_pattern')}' must be a string of F and S")
        r.per_layer_lists["index_topk_pattern"] = len(items)
        return [names[c] for c in items]
    freq = max(r.int(None, "index_topk_freq", default=1), 1)
    offset = r.int(None, "index_skip_topk_offset", default=2)
    return ["full" if max(i - offset + 1, 0) % freq == 0 else "shared" for i in range(n_layers)]

"""Decoder families that differ from Llama only in a few traits, described by one table.

Each row of ``TRAITS`` says, for one ``model_type`` of transformers 5.24, what its decoder layer
builds beyond q/k/v/o and an MLP (read from ``modeling_<family>.py``): which config key puts a
bias on q/k/v, on o, on the MLP and on the LM head (or a fixed value), how many norms of width
H a layer has and whether they carry a bias (LayerNorm) or not (RMSNorm, Cohere's LayerNorm),
which q/k norms exist, whether the MLP is gated, whether q/k/v is one fused weight, and for the
MoE families where the experts sit and how wide they and the shared experts are. Defaults come
from the generated table (``hf_defaults.json``), as transformers fills them.

Dense: granite, cohere, cohere2, starcoder2, gpt_neox, gptj, stablelm, smollm3, glm, glm4,
exaone4, ernie4_5, hunyuan_v1_dense, seed_oss, arcee, apertus, helium, phi3 (Phi-3/Phi-4); olmo (LayerNorms without parameters),
olmo2 / olmo3 (two post-norms of H, q/k RMSNorms over all heads; olmo3 ``layer_types`` windows).
MoE (router ``[E, H]`` without bias, fused experts ``gate_up [E, 2I, H]``, ``down [E, H, I]``):
mixtral (no shared expert, ``sliding_window`` on every layer), olmoe, phimoe, granitemoe,
granitemoeshared (plus a gated shared MLP), ernie4_5_moe (dense and sparse layers by
``moe_layer_start_index``/``end_index``/``interval``; shared experts ``moe_num_shared_experts x moe_intermediate_size``; an ``e_score_correction_bias`` parameter of
E per sparse layer), hunyuan_v1_moe (every layer sparse; one shared MLP of ``intermediate_size``),
dots1 (first ``first_k_dense_replace`` layers dense, then ``n_shared_experts`` shared experts;
its score-correction bias is a buffer), glm4_moe and GLM-4.5V's glm4v_moe_text (the same layout; o never
biased; glm4_moe's per-head q/k norms by ``use_qk_norm``; ``num_nextn_predict_layers`` MTP layers, not built
by transformers, reported apart and sized like DeepSeek-V3's MTP module).
"""

from __future__ import annotations

from dataclasses import replace

from colint.normalize.format_reader import heads_attention, routed_experts
from colint.normalize.hf.base import HFReader, full_and_windowed, layer_types_of, read_common
from colint.normalize.hf.moe_common import (
    GROUP_LIMITED_ROUTERS,
    KindTable,
    deepseek_style_mtp_params,
    layer,
    nullable_int,
    router_groups,
    str_list,
)
from colint.normalize.model_spec import FFN, ModelSpec
from colint.util.records import dataclass

Flag = bool | str  # a fixed value, or the config key that holds it


@dataclass(frozen=True)
class Traits:
    qkv_bias: Flag = "attention_bias"
    o_bias: Flag = "attention_bias"
    mlp_bias: Flag = False
    lm_head_bias: Flag = False
    gated: bool = True
    fused_qkv: bool = False
    norms: int = 2  # per-layer norms of width H
    norm_bias: bool = False  # LayerNorm weight + bias
    norm_weights: bool = True  # False: LayerNorms without learnable parameters (OLMo), per layer and final
    parallel_norms_key: str | None = None  # stablelm: use_parallel_residual drops post_attention_layernorm
    qk_norm: str | None = None  # "head": head_dim each; "all": heads*hd + kv*hd; "olmoe": H + kv*(H/heads)
    qk_norm_key: str | None = None  # the flag that switches the q/k norms on (cohere use_qk_norm)
    head_dim_key: bool = True  # head_dim read from the file; False: always H / heads
    kv_default: int | None = None  # the config class's num_key_value_heads default (None: = heads)
    head_dim_default: int | None = None  # the config class's head_dim default (None: H / heads)
    inter_default_mult: int | None = None  # gptj: n_inner null -> 4H
    windows: str = "none"  # none | all (sliding_window on every layer) | types (layer_types / pattern)
    window_pattern_key: str | None = None  # cohere2/exaone4 sliding_window_pattern when layer_types absent
    window_gate_key: str | None = None  # smollm3 use_sliding_window
    act_params: dict | None = None  # hidden_act -> parameters per layer (apertus xIELU: alpha_p, alpha_n)
    moe: str | None = None  # None | all | ernie | first_k
    expert_width: str = "intermediate_size"
    experts_keys: tuple = ("num_local_experts",)
    top_k_keys: tuple = ("num_experts_per_tok",)
    shared: str | None = None  # granite (shared_intermediate_size) | ernie | hunyuan | n_shared (n_shared_experts)
    router_param_bias: bool = False  # ernie4_5_moe: e_score_correction_bias is a parameter (E)
    mtp_keys: tuple = ()  # keys of the MTP layer count: layers transformers does not build, reported apart


_LLAMA = Traits(mlp_bias="mlp_bias")
TRAITS: dict[str, Traits] = {
    "granite": _LLAMA,
    "smollm3": Traits(kv_default=4, mlp_bias="mlp_bias", windows="types", window_gate_key="use_sliding_window"),
    "arcee": Traits(mlp_bias="mlp_bias", gated=False),
    "seed_oss": Traits(kv_default=8, head_dim_default=128, o_bias="attention_out_bias", mlp_bias="mlp_bias"),
    "cohere": Traits(norms=1, qk_norm="all", qk_norm_key="use_qk_norm"),
    "cohere2": Traits(norms=1, windows="types", window_pattern_key="sliding_window_pattern"),
    "starcoder2": Traits(
        kv_default=2,
        qkv_bias="use_bias",
        o_bias="use_bias",
        mlp_bias="use_bias",
        gated=False,
        norm_bias=True,
        windows="all",
    ),
    "gpt_neox": Traits(mlp_bias=True, gated=False, fused_qkv=True, norm_bias=True, head_dim_key=False),
    "gptj": Traits(
        qkv_bias=False,
        o_bias=False,
        mlp_bias=True,
        lm_head_bias=True,
        gated=False,
        norms=1,
        norm_bias=True,
        head_dim_key=False,
        inter_default_mult=4,
    ),
    "stablelm": Traits(
        kv_default=32,
        qkv_bias="use_qkv_bias",
        o_bias=False,
        norm_bias=True,
        parallel_norms_key="use_parallel_residual",
        qk_norm="all",
        qk_norm_key="qk_layernorm",
        head_dim_key=False,
    ),
    "glm": Traits(kv_default=2, head_dim_default=128, o_bias=False),
    "glm4": Traits(kv_default=2, head_dim_default=128, o_bias=False, norms=4),
    "exaone4": Traits(
        kv_default=32,
        qkv_bias=False,
        o_bias=False,
        qk_norm="head",
        windows="types",
        window_pattern_key="sliding_window_pattern",
    ),
    "ernie4_5": Traits(kv_default=2, head_dim_default=128, qkv_bias="use_bias", o_bias="use_bias", mlp_bias="use_bias"),
    "hunyuan_v1_dense": Traits(qk_norm="head"),
    "apertus": Traits(gated=False, qk_norm="head", act_params={"xielu": 2}),
    # Phi-3 / Phi-4: fused qkv_proj and gate_up_proj, no biases, sliding_window on every layer
    "phi3": Traits(qkv_bias=False, o_bias=False, fused_qkv=True, windows="all"),
    # o_proj never has a bias (modeling_helium.py), q/k/v follow attention_bias
    "helium": Traits(kv_default=20, head_dim_default=128, o_bias=False, mlp_bias="mlp_bias"),
    "olmo": Traits(norm_weights=False),
    "olmo2": Traits(qk_norm="all"),  # post-norms (two of H) and q/k norms over all heads
    "olmo3": Traits(qk_norm="all", windows="types"),
    # MoE
    "olmoe": Traits(qk_norm="olmoe", moe="all", experts_keys=("num_experts",)),
    "phimoe": Traits(kv_default=8, lm_head_bias="lm_head_bias", norm_bias=True, windows="all", moe="all"),
    "granitemoe": Traits(moe="all"),
    "mixtral": Traits(kv_default=8, windows="all", moe="all", experts_keys=("num_local_experts", "num_experts")),
    "granitemoeshared": Traits(moe="all", shared="granite"),
    "ernie4_5_moe": Traits(
        kv_default=4,
        qkv_bias="use_bias",
        o_bias="use_bias",
        mlp_bias="use_bias",
        lm_head_bias="use_bias",
        moe="ernie",
        expert_width="moe_intermediate_size",
        experts_keys=("moe_num_experts",),
        top_k_keys=("moe_k",),
        shared="ernie",
        router_param_bias=True,
    ),
    "hunyuan_v1_moe": Traits(
        qk_norm="head", moe="all", experts_keys=("num_experts",), top_k_keys=("moe_topk",), shared="hunyuan"
    ),
    "glm4_moe": Traits(
        kv_default=8,
        o_bias=False,
        qk_norm="head",
        qk_norm_key="use_qk_norm",
        moe="first_k",
        expert_width="moe_intermediate_size",
        experts_keys=("n_routed_experts", "num_local_experts"),
        shared="n_shared",
        mtp_keys=("num_nextn_predict_layers", "num_mtp_layers"),
    ),
    # GLM-4.5V's language model: the same layers, no q/k norms (glm4v_moe: its wrapper, read flat)
    **dict.fromkeys(
        ("glm4v_moe_text", "glm4v_moe"),
        Traits(
            kv_default=8,
            o_bias=False,
            moe="first_k",
            expert_width="moe_intermediate_size",
            experts_keys=("n_routed_experts", "num_local_experts"),
            shared="n_shared",
            mtp_keys=("num_nextn_predict_layers", "num_mtp_layers"),
        ),
    ),
    "dots1": Traits(
        kv_default=32,
        qk_norm="head",
        moe="first_k",
        expert_width="moe_intermediate_size",
        experts_keys=("n_routed_experts",),
        shared="n_shared",
        windows="types",
    ),
}


def _flag(r: HFReader, flag) -> bool:
    if isinstance(flag, bool):
        return flag
    return r.bool(None, flag, default=r.defaults.get(flag, False))


def _layer_types(r: HFReader, t: Traits, n_layers: int, window: int | None) -> list[str]:
    if not window or t.windows == "none":
        return ["full_attention"] * n_layers
    if t.windows == "all":
        return ["sliding_attention"] * n_layers
    if t.window_gate_key and not r.bool(None, t.window_gate_key, default=r.defaults.get(t.window_gate_key, False)):
        return ["full_attention"] * n_layers
    if r.has("layer_types"):
        types = str_list(r, "layer_types") or []
        r.per_layer_lists["layer_types"] = len(types)
        return layer_types_of(types, n_layers)
    if t.window_pattern_key:
        period = r.int(None, t.window_pattern_key, default=r.defaults.get(t.window_pattern_key, 4))
        return ["sliding_attention" if (i + 1) % period else "full_attention" for i in range(n_layers)]
    if r.model_type == "dots1":
        first = r.int(None, "max_window_layers", default=n_layers, minimum=0)
        return ["sliding_attention" if i >= first else "full_attention" for i in range(n_layers)]
    return ["full_attention"] * n_layers


def _sparse_layers(r: HFReader, t: Traits, n_layers: int) -> list[bool]:
    if t.moe == "all":
        return [True] * n_layers
    if t.moe == "first_k":
        first = r.int(
            "first_k_dense_replace",
            "first_k_dense_replace",
            default=r.defaults.get("first_k_dense_replace", 0),
            minimum=0,
        )
        return [i >= first for i in range(n_layers)]
    if t.moe == "ernie":
        interval = r.int(None, "moe_layer_interval", default=1)
        start = r.int(None, "moe_layer_start_index", default=r.defaults.get("moe_layer_start_index", 0), minimum=0)
        end = r.int(
            None, "moe_layer_end_index", default=r.defaults.get("moe_layer_end_index", n_layers - 1), minimum=-1
        )
        return [(i + 1) % interval == 0 and start <= i <= end for i in range(n_layers)]
    return [False] * n_layers


def _top_k(r: HFReader, t: Traits, n_layers: int = 1) -> list[int]:
    """Experts per token of each layer: one integer, or (HunYuan ``moe_topk``) a list, one per layer."""
    key = t.top_k_keys[0]
    v = r.doc.get(r.path(key)) if r.has(key) else None
    if not isinstance(v, list):
        return [r.int("top_k", *t.top_k_keys)] * n_layers
    r.per_layer_lists[key] = len(v)
    for i, x in enumerate(v):
        if isinstance(x, bool) or not isinstance(x, int) or x < 1:
            raise r.error((key, i), f"'{r.key_name((key, i))}' must be a positive integer")
    return [v[i] if i < len(v) else v[-1] for i in range(n_layers)] if v else [1] * n_layers


def _moe_ffn(r: HFReader, t: Traits, h: int, inter: int) -> tuple[FFN, int]:
    """(the sparse FFN, its parameters outside the GEMMs)."""
    e = r.int("num_experts", *t.experts_keys)
    k = _top_k(r, t)[0]
    width = inter if t.expert_width == "intermediate_size" else r.int("moe_intermediate_size", t.expert_width)
    if t.expert_width == "intermediate_size":
        r.sources.setdefault("moe_intermediate_size", r.sources["intermediate_size"])
    n_shared, shared_w = 0, 0
    if t.shared == "granite":
        shared_w = r.int(
            "shared_expert_intermediate_size",
            "shared_intermediate_size",
            default=r.defaults.get("shared_intermediate_size", 0),
            minimum=0,
        )
        n_shared = 1 if shared_w else 0
    elif t.shared == "ernie":
        n_shared = r.int(
            "num_shared_experts",
            "moe_num_shared_experts",
            default=r.defaults.get("moe_num_shared_experts", 0),
            minimum=0,
        )
        shared_w = width
    elif t.shared == "n_shared":
        n_shared = r.int("num_shared_experts", "n_shared_experts", minimum=0)
        shared_w = width
    elif t.shared == "hunyuan":
        n_shared, shared_w = 1, inter
    ffn = routed_experts(
        e,
        k,
        width,
        num_shared_experts=n_shared,
        shared_intermediate_size=shared_w if n_shared else 0,
        shared_bias=_flag(r, t.mlp_bias),
        **(router_groups(r, e, k, r.defaults) if r.model_type in GROUP_LIMITED_ROUTERS else {}),
    )
    return ffn, e if t.router_param_bias else 0


def build(r: HFReader) -> ModelSpec:
    t = TRAITS[r.model_type]
    class_defaults = {"kv": t.kv_default, "head_dim": t.head_dim_default}
    derived_inter = bool(t.inter_default_mult) and not r.has("n_inner")  # gptj: n_inner null -> 4H
    c = read_common(
        r,
        {k: v for k, v in class_defaults.items() if v is not None},
        intermediate=None if derived_inter else ("intermediate_size", "intermediate_size", "n_inner"),
        head_dim="dims" if t.head_dim_key else "hidden",
    )
    h, n_layers, heads, kv, hd, vocab = (
        c.hidden_size,
        c.num_layers,
        c.num_heads,
        c.num_kv_heads,
        c.head_dim,
        c.vocab_size,
    )
    if c.intermediate_size is None:
        inter = (t.inter_default_mult or 0) * h
        r.record("intermediate_size", "n_inner", default=True)
    else:
        inter = c.intermediate_size
    qkv_bias, o_bias, mlp_bias = _flag(r, t.qkv_bias), _flag(r, t.o_bias), _flag(r, t.mlp_bias)
    window = nullable_int(r, "sliding_window", "sliding_window", None) if t.windows != "none" else None
    types = _layer_types(r, t, n_layers, window)

    norm_w = (2 * h if t.norm_bias else h) if t.norm_weights else 0
    norms = t.norms
    if t.parallel_norms_key and _flag(r, t.parallel_norms_key):
        norms = 1
    other = norms * norm_w
    if t.qk_norm and (t.qk_norm_key is None or _flag(r, t.qk_norm_key)):
        other += {"head": 2 * hd, "all": heads * hd + kv * hd, "olmoe": h + kv * (h // heads)}[t.qk_norm]
    act = r.str(None, "hidden_act", "activation_function")
    other += (t.act_params or {}).get(act, 0)

    dense = FFN(kind="dense", intermediate_size=inter, gated=t.gated, bias=mlp_bias)
    sparse = _sparse_layers(r, t, n_layers)
    moe_ffn, router_params = _moe_ffn(r, t, h, inter) if any(sparse) else (None, 0)
    top_ks = _top_k(r, t, n_layers) if any(sparse) else []
    mixers = full_and_windowed(
        window, num_heads=heads, num_kv_heads=kv, head_dim=hd, qkv_bias=qkv_bias, o_bias=o_bias, fused_qkv=t.fused_qkv
    )
    table = KindTable()
    for i in range(n_layers):
        mixer = mixers[types[i] == "sliding_attention" and bool(window)]
        if sparse[i]:
            assert moe_ffn is not None  # built above: any(sparse)
            ffn = moe_ffn if top_ks[i] == moe_ffn.top_k else replace(moe_ffn, top_k=top_ks[i])
            table.add(layer(mixer, ffn, other + router_params))
        else:
            table.add(layer(mixer, dense, other))
    mtp = r.int("mtp_layers", *t.mtp_keys, default=r.defaults.get(t.mtp_keys[0], 0), minimum=0) if t.mtp_keys else 0
    mtp_params = 0
    if mtp:  # each MTP module sized like DeepSeek-V3's around one sparse layer (moe_common.mtp_module_params)
        if moe_ffn is None:
            moe_ffn, router_params = _moe_ffn(r, t, h, inter)
        full = heads_attention(heads, kv, hd, qkv_bias=qkv_bias, o_bias=o_bias, fused_qkv=t.fused_qkv)
        mtp_params = mtp * deepseek_style_mtp_params(layer(full, moe_ffn, other + router_params), h)
    extra = norm_w + (vocab if _flag(r, t.lm_head_bias) else 0)  # a bias is never tied
    return r.header_spec(
        c,
        table,
        positions=("max_position_embeddings", "n_positions"),
        intermediate_size=inter,
        act=act,
        sliding_window=window,
        extra_params=extra,
        mtp_layers=mtp,
        mtp_params=mtp_params,
    )

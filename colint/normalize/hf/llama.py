"""Llama-style decoders: llama (2/3/3.x), mistral, ministral, ministral3, qwen2, qwen3, mimo,
and the Qwen2-VL / Qwen2.5-VL language models (flat pre-v5 layout or ``text_config``).

Per layer (transformers' LlamaDecoderLayer and its copies): q/k/v/o projections
(``attention_bias`` → bias on all four; the Qwen2 family → bias on q/k/v only, always), a
gated MLP (gate/up/down, ``mlp_bias``; Qwen2/3 and Mistral have none), two RMSNorms of width
H; qwen3 adds per-head q/k RMSNorms (head_dim each). Final RMSNorm. Sliding-window layers
(mistral ``sliding_window``; qwen2/qwen3 ``use_sliding_window`` from layer
``max_window_layers`` on) change attention cost, not weights. Qwen2-VL / Qwen2.5-VL text attention is
hidden_size // heads wide even when the file states a ``head_dim`` (their attention ignores it).

MiMo (remote code, a Qwen2 subclass) adds ``num_nextn_predict_layers`` MTP layers that
transformers' Qwen2 build does not have; they are reported in ``mtp_layers``/``mtp_params``
(estimate from the structure of MiMo's ``MiMoMTPLayers``: one decoder layer, three more
RMSNorms and a 2H -> H ``input_proj``), not in ``params.total``.
"""

from __future__ import annotations

from colint.normalize.weights import kind_params
from colint.normalize.hf.base import HFReader, layer_types_of, read_common
from colint.normalize.hf.moe_common import mtp_module_params
from colint.normalize.model_spec import FFN, LayerKind, Mixer, ModelSpec

QWEN2_LIKE = {"qwen2", "mimo", "qwen2_vl", "qwen2_vl_text", "qwen2_5_vl", "qwen2_5_vl_text"}
QWEN_WINDOWED = QWEN2_LIKE | {"qwen3"}
QWEN_VL = {"qwen2_vl", "qwen2_vl_text", "qwen2_5_vl", "qwen2_5_vl_text"}
NO_MLP_BIAS_KEY = QWEN_WINDOWED | {"mistral", "ministral", "ministral3"}

# num_key_value_heads when the key is absent: the config class's fixed default (transformers 5.24
# configuration_<family>.py); LlamaConfig's default is None, i.e. num_attention_heads.
KV_HEADS_DEFAULT = {
    "mistral": 8,
    "ministral": 8,
    "ministral3": 8,
    "qwen2": 32,
    "qwen3": 32,
    "mimo": 32,
    "qwen2_vl": 8,
    "qwen2_vl_text": 8,
    "qwen2_5_vl": 8,
    "qwen2_5_vl_text": 8,
}
# head_dim when absent: Qwen3Config and Ministral3Config fix it at 128; the others derive hidden_size // heads.
HEAD_DIM_DEFAULT = {"qwen3": 128, "ministral3": 128}


def build(r: HFReader) -> ModelSpec:
    mt = r.model_type
    c = read_common(r, {"kv": KV_HEADS_DEFAULT.get(mt), "head_dim": HEAD_DIM_DEFAULT.get(mt)})
    h, n_layers, heads, kv, hd = c.hidden_size, c.num_layers, c.num_heads, c.num_kv_heads, c.head_dim
    if mt in QWEN_VL:  # Qwen2(.5)-VL's text attention is hidden_size // heads wide whatever head_dim says
        hd = h // heads
        r.record_derived("head_dim", "hidden_size")
    inter = c.ffn_width
    if mt in QWEN2_LIKE:
        qkv_bias, o_bias = True, False
    else:
        b = r.bool("attention_bias", "attention_bias", default=False)
        qkv_bias = o_bias = b
    mlp_bias = False if mt in NO_MLP_BIAS_KEY else r.bool("mlp_bias", "mlp_bias", default=False)

    window = None
    first_sliding = 0
    if mt in ("mistral", "ministral", "ministral3"):
        window = r.opt_int("sliding_window", "sliding_window")
    elif mt in QWEN_WINDOWED and r.bool(None, "use_sliding_window", default=False):
        window = r.opt_int("sliding_window", "sliding_window")
        first_sliding = r.int(None, "max_window_layers", default=r.defaults.get("max_window_layers", 0), minimum=0)

    norm = h  # RMSNorm weight
    other = 2 * norm + (2 * hd if mt == "qwen3" else 0)
    types = r.layer_types(n_layers)
    if types is None:
        types = ["sliding_attention" if window and i >= first_sliding else "full_attention" for i in range(n_layers)]

    def mixer(attn: str) -> Mixer:
        return Mixer(
            kind="attention",
            attention=attn,
            window=window if attn == "sliding" else None,
            num_heads=heads,
            num_kv_heads=kv,
            head_dim=hd,
            qkv_bias=qkv_bias,
            o_bias=o_bias,
        )

    ffn = FFN(kind="dense", intermediate_size=inter, gated=True, bias=mlp_bias)
    kinds_by_type: dict[str, int] = {}
    kinds: list[LayerKind] = []
    pattern = []
    for t in layer_types_of(types, n_layers):
        attn = "sliding" if t == "sliding_attention" and window else "full"
        if attn not in kinds_by_type:
            kinds_by_type[attn] = len(kinds)
            kinds.append(LayerKind(name=f"attention/{attn}+dense", mixer=mixer(attn), ffn=ffn, other_params=other))
        pattern.append(kinds_by_type[attn])

    mtp = r.opt_int("mtp_layers", "num_nextn_predict_layers") or 0
    mtp_params = 0
    notes = []
    if mtp and mt == "mimo":
        layer_total, _ = kind_params(kinds[0], h)
        mtp_params = mtp * mtp_module_params(layer_total, h)  # enorm, hnorm, final norm (H each) + eh_proj
        notes.append(
            f"{mtp} MTP layer(s) not built by transformers: {mtp_params:,} parameters (estimate from "
            "MiMo's MTP layer structure), outside params.total"
        )
    return r.header_spec(
        c,
        (kinds, pattern),
        head_dim=hd,
        sliding_window=window,
        mtp_layers=mtp,
        mtp_params=mtp_params,
        extra_params=norm,
        notes=notes,
    )

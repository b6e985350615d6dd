"""Llama-style decoders: llama (2/3/3.x), mistral, ministral, qwen2, qwen3, mimo.

Per layer (transformers' LlamaDecoderLayer and its copies): q/k/v/o projections
(``attention_bias`` → bias on all four; qwen2 → bias on q/k/v only), a gated MLP
(gate/up/down, ``mlp_bias``), two RMSNorms of width H; qwen3 adds per-head q/k RMSNorms
(head_dim each). Sliding-window layers (mistral, qwen2 ``use_sliding_window``) change
attention cost, not weights. MiMo's MTP layers are not built by transformers.
"""

from __future__ import annotations

from colint.spec.hf.base import HFReader
from colint.spec.model import FFN, LayerKind, Mixer, ModelSpec


def build(r: HFReader) -> ModelSpec:
    mt = r.model_type
    h = r.int("hidden_size", "hidden_size")
    n_layers = r.int("num_layers", "num_hidden_layers")
    heads, kv, hd = r.attention_dims(h)
    inter = r.int("intermediate_size", "intermediate_size")
    vocab = r.int("vocab_size", "vocab_size")
    tie = r.bool("tie_word_embeddings", "tie_word_embeddings",
                 default=r.defaults.get("tie_word_embeddings", False))
    if mt == "qwen2":
        qkv_bias, o_bias = True, False
    else:
        b = r.bool("attention_bias", "attention_bias", default=False)
        qkv_bias = o_bias = b
    mlp_bias = r.bool("mlp_bias", "mlp_bias", default=False)

    window = None
    if mt in ("mistral", "ministral", "ministral3"):
        window = r.opt_int("sliding_window", "sliding_window")
    elif mt in ("qwen2", "qwen3") and r.bool(None, "use_sliding_window", default=False):
        window = r.opt_int("sliding_window", "sliding_window")

    norm = h  # RMSNorm weight
    other = 2 * norm + (2 * hd if mt == "qwen3" else 0)
    types = r.layer_types(n_layers)

    def mixer(attn: str) -> Mixer:
        return Mixer(kind="attention", attention=attn, window=window if attn == "sliding" else None,
                     num_heads=heads, num_kv_heads=kv, head_dim=hd, qkv_bias=qkv_bias, o_bias=o_bias)

    ffn = FFN(kind="dense", intermediate_size=inter, gated=True, bias=mlp_bias)
    if types:
        kinds_by_type: dict[str, int] = {}
        kinds: list[LayerKind] = []
        pattern = []
        for t in types[:n_layers]:
            attn = "sliding" if t == "sliding_attention" and window else "full"
            if attn not in kinds_by_type:
                kinds_by_type[attn] = len(kinds)
                kinds.append(LayerKind(name=f"attention/{attn}+dense", mixer=mixer(attn), ffn=ffn, other_params=other))
            pattern.append(kinds_by_type[attn])
        pattern += [pattern[-1] if pattern else 0] * (n_layers - len(pattern))
    else:
        attn = "sliding" if window else "full"
        kinds = [LayerKind(name=f"attention/{attn}+dense", mixer=mixer(attn), ffn=ffn, other_params=other)]
        pattern = [0] * n_layers

    mtp = r.opt_int("mtp_layers", "num_nextn_predict_layers") or 0
    return r.spec(
        hidden_size=h, num_layers=n_layers, kinds=kinds, pattern=pattern,
        vocab_size=vocab, tie_word_embeddings=tie,
        max_position_embeddings=r.opt_int("max_position_embeddings", "max_position_embeddings"),
        num_heads=heads, num_kv_heads=kv, head_dim=hd, intermediate_size=inter,
        hidden_act=r.str(None, "hidden_act"), sliding_window=window,
        mtp_layers=mtp, extra_params=norm,
    )

"""Mixtral (``mixtral``): Llama-style attention, every layer a sparse MoE without shared expert.

transformers 5.24 ``modeling_mixtral.py``: q/k/v/o without bias (head_dim from the file, else
H / heads); ``MixtralSparseMoeBlock`` = router ``gate.weight [E, H]`` (no bias) and fused
experts ``gate_up_proj [E, 2I, H]``, ``down_proj [E, H, I]``; two RMSNorms (H) per layer and a
final one. Sliding-window layers (``sliding_window``) change attention cost, not weights.
"""

from __future__ import annotations

from colint.normalize.hf.base import HFReader, read_common
from colint.normalize.hf.moe_common import layer
from colint.normalize.model_spec import FFN, Mixer, ModelSpec


def read_config(r: HFReader) -> tuple:
    """(H, layers, heads, KV heads, head_dim, expert intermediate, experts, top-k, vocab, tie, window):
    the MixtralConfig keys with its defaults; MiniMaxConfig (minimax.py) has the same ones."""
    c = read_common(
        r,
        dict(hidden=4096, layers=32, heads=32, kv=8, inter=14336, vocab=32000, tie=False),
        intermediate=("moe_intermediate_size", "intermediate_size"),
    )
    e = r.int("num_experts", "num_local_experts", "num_experts", default=8)
    k = r.int("top_k", "num_experts_per_tok", default=2)
    window = r.opt_int("sliding_window", "sliding_window") or None
    return (
        c.hidden_size,
        c.num_layers,
        c.num_heads,
        c.num_kv_heads,
        c.head_dim,
        c.intermediate_size,
        e,
        k,
        c.vocab_size,
        c.tie_word_embeddings,
        window,
    )


def attention_mixer(heads: int, kv: int, hd: int, window: int | None) -> Mixer:
    """Softmax attention, sliding when ``sliding_window`` is set."""
    return Mixer(
        kind="attention",
        attention="sliding" if window else "full",
        window=window,
        num_heads=heads,
        num_kv_heads=kv,
        head_dim=hd,
    )


def build(r: HFReader) -> ModelSpec:
    h, n_layers, heads, kv, hd, inter, e, k, vocab, tie, window = read_config(r)
    mixer = attention_mixer(heads, kv, hd, window)
    ffn = FFN(kind="moe", num_experts=e, top_k=k, expert_intermediate_size=inter)
    return r.spec(
        hidden_size=h,
        num_layers=n_layers,
        kinds=[layer(mixer, ffn, 2 * h)],
        pattern=[0] * n_layers,
        vocab_size=vocab,
        tie_word_embeddings=tie,
        max_position_embeddings=r.opt_int("max_position_embeddings", "max_position_embeddings"),
        num_heads=heads,
        num_kv_heads=kv,
        head_dim=hd,
        intermediate_size=inter,
        hidden_act=r.str(None, "hidden_act", default="silu"),
        sliding_window=window,
        extra_params=h,
    )

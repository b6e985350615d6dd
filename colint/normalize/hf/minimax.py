"""MiniMax-01 / MiniMax-M1 (``minimax``): lightning (linear) attention interleaved with softmax
attention, MoE in every layer.

transformers 5.24 (``configuration_minimax.py``, ``modeling_minimax.py``): ``layer_types``
(default: even layers ``full_attention``, odd layers ``linear_attention``). head_dim from the file,
else H / heads. Softmax layers: q/k/v/o without bias. Lightning layers: ``qkv_proj``
H -> 3·heads·head_dim, ``output_gate`` H -> heads·head_dim, ``out_proj`` heads·head_dim -> H (no
biases) and an RMSNorm of heads·head_dim; the decay tensors are buffers. MoE: router ``[E, H]``
(no bias), fused gated experts of ``intermediate_size``. Two RMSNorms (H) per layer. The remote
code's ``attn_type_list`` (1 = softmax, 0 = lightning) is not read by transformers; a note says so
when it disagrees with the layer types used.
"""

from __future__ import annotations

from colint.normalize.format_reader import attention, routed_experts
from colint.normalize.hf.base import Header, HFReader, read_common
from colint.normalize.hf.moe_common import KindTable, layer
from colint.normalize.model_spec import Mixer, ModelSpec


def read_config(r: HFReader) -> tuple:
    """(H, layers, heads, KV heads, head_dim, expert intermediate, experts, top-k, vocab, tie, window):
    MiniMaxConfig's keys with its defaults (the same as MixtralConfig's)."""
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


def build(r: HFReader) -> ModelSpec:
    h, n_layers, heads, kv, hd, inter, e, k, vocab, tie, window = read_config(r)
    types = r.layer_types(n_layers)
    if types is None:
        types = ["full_attention" if (i + 1) % 2 else "linear_attention" for i in range(n_layers)]
    notes = []
    legacy = r.list(None, "attn_type_list")
    if isinstance(legacy, list) and [("full_attention" if x == 1 else "linear_attention") for x in legacy] != list(
        types[:n_layers]
    ):
        notes.append(
            "attn_type_list (remote code) differs from the layer types transformers builds "
            "(layer_types, default alternating); colint follows transformers"
        )

    full = attention(heads, kv, hd, window=window)
    lightning = Mixer(
        kind="linear_attention",
        linear_variant="lightning",
        num_heads=heads,
        num_k_heads=heads,
        num_v_heads=heads,
        k_head_dim=hd,
        v_head_dim=hd,
    )
    ffn = routed_experts(e, k, inter)
    t = KindTable()
    for i in range(n_layers):
        lin = i < len(types) and types[i] == "linear_attention"
        t.add(layer(lightning, ffn, 2 * h + heads * hd) if lin else layer(full, ffn, 2 * h))
    return r.header_spec(
        Header(h, n_layers, heads, kv, hd, None, vocab, tie),
        t,
        act_default="silu",
        sliding_window=window,
        extra_params=h,
        notes=notes,
    )

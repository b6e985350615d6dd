"""Llama 4 (``llama4_text``, and the ``llama4`` multimodal wrapper through its ``text_config``).

transformers 5.24 (``configuration_llama4.py``, ``modeling_llama4.py``): q/k/v/o (bias =
``attention_bias``), head_dim default 128; the q/k norm (``use_qk_norm``) is a parameter-free L2
norm. ``no_rope_layers[i]`` = 1 means layer *i* uses RoPE (default: every layer but each
``no_rope_layer_interval``-th); RoPE layers are chunked-attention layers when
``attention_chunk_size`` is set (``layer_types`` when given). MoE layers are ``moe_layers``
(default every ``interleave_moe_layer_step``-th layer, from step-1): router H -> E (no bias,
top ``num_experts_per_tok``, sigmoid), fused experts ``gate_up_proj [E, H, 2I]`` /
``down_proj [E, I, H]`` with I = ``intermediate_size``, plus one gated shared expert of
``intermediate_size``; the other layers are gated MLPs of ``intermediate_size_mlp``. Two
RMSNorms (H) per layer and a final one. The vision tower of the wrapper is not counted.
"""

from __future__ import annotations

from colint.normalize.format_reader import routed_experts
from colint.normalize.hf.base import HFReader, full_and_windowed, read_common
from colint.normalize.hf.moe_common import KindTable, int_list, layer, nullable_int
from colint.normalize.model_spec import FFN, ModelSpec


def build(r: HFReader) -> ModelSpec:
    c = read_common(
        r,
        dict(hidden=5120, layers=48, heads=40, kv=8, head_dim=128, inter=8192, vocab=202048, tie=False),
        intermediate=("moe_intermediate_size", "intermediate_size"),  # the experts' width; the dense MLP's below
    )
    h, n_layers, heads, kv, hd = c.hidden_size, c.num_layers, c.num_heads, c.num_kv_heads, c.head_dim
    moe_inter = c.ffn_width
    bias = r.bool(None, "attention_bias", default=False)
    inter = r.int("intermediate_size", "intermediate_size_mlp", default=16384)
    e = r.int("num_experts", "num_local_experts", default=16)
    k = r.int("top_k", "num_experts_per_tok", default=1)
    step = r.int("interleave_moe_layer_step", "interleave_moe_layer_step", default=1)
    moe_layers = int_list(r, "moe_layers")
    if moe_layers is None:
        moe_layers = list(range(step - 1, n_layers, step))
    moe_set = set(moe_layers)

    chunk = nullable_int(r, "attention_chunk_size", "attention_chunk_size", 8192)
    interval = r.int(None, "no_rope_layer_interval", default=4)
    no_rope = int_list(r, "no_rope_layers") or [int((i + 1) % interval != 0) for i in range(n_layers)]
    types = r.layer_types(n_layers)
    if types is None:
        types = [
            "chunked_attention" if (i < len(no_rope) and no_rope[i]) and chunk is not None else "full_attention"
            for i in range(n_layers)
        ]

    dense_ffn = FFN(kind="dense", intermediate_size=inter)
    moe_ffn = routed_experts(e, k, moe_inter, num_shared_experts=1, shared_intermediate_size=moe_inter)
    mixers = full_and_windowed(
        chunk, "chunked", num_heads=heads, num_kv_heads=kv, head_dim=hd, qkv_bias=bias, o_bias=bias
    )
    t = KindTable()
    for i in range(n_layers):
        chunked = i < len(types) and types[i] == "chunked_attention"
        t.add(layer(mixers[chunked], moe_ffn if i in moe_set else dense_ffn, 2 * h))
    return r.header_spec(
        c,
        t,
        intermediate_size=inter,
        act_default="silu",
        extra_params=h,
    )

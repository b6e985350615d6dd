"""gpt-oss (``gpt_oss``).

transformers 5.24 ``modeling_gpt_oss.py``: q/k/v/o with bias (``attention_bias``, default true),
head_dim 64 by default (not H / heads), one attention-sink logit per head (``sinks``,
``num_attention_heads`` parameters); alternating sliding (``sliding_window``, 128) / full
layers from ``layer_types`` (default: even layers slide). Every layer is MoE: router
``weight [E, H]`` + ``bias [E]``; experts stored in×out (``gate_up_proj [E, H, 2I]`` +
``gate_up_proj_bias [E, 2I]``, ``down_proj [E, I, H]`` + ``down_proj_bias [E, H]``, gate/up
interleaved). Top-k is ``num_experts_per_tok``; OpenAI's ``experts_per_token`` is read when
that key is absent (transformers ignores it). Two RMSNorms (H) per layer and a final one.
"""

from __future__ import annotations

from colint.normalize.format_reader import routed_experts
from colint.normalize.hf.base import HFReader, full_and_windowed, read_common
from colint.normalize.hf.moe_common import KindTable, ignored_key, layer, nullable_int
from colint.normalize.model_spec import ModelSpec


def build(r: HFReader) -> ModelSpec:
    c = read_common(
        r,
        dict(hidden=2880, layers=36, heads=64, kv=8, head_dim=64, inter=2880, vocab=201088, tie=False),
        intermediate=("moe_intermediate_size", "intermediate_size"),
    )
    h, n_layers, heads, kv, hd = c.hidden_size, c.num_layers, c.num_heads, c.num_kv_heads, c.head_dim
    inter = c.ffn_width
    bias = r.bool(None, "attention_bias", default=True)
    e = r.int("num_experts", "num_local_experts", "num_experts", default=128)
    notes: list[str] = []
    issues: list = []
    if r.has("num_experts_per_tok"):
        k = r.int("top_k", "num_experts_per_tok")
        if r.has("experts_per_token") and r.raw("experts_per_token") != k:
            issues.append(ignored_key(r, "experts_per_token", f"transformers routes to num_experts_per_tok = {k}"))
    else:
        k = r.int("top_k", "experts_per_token", default=4)
    window = nullable_int(r, "sliding_window", "sliding_window", 128)
    types = r.layer_types(n_layers)
    if types is None:
        types = ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(n_layers)]

    ffn = routed_experts(e, k, inter, expert_bias=True, router_bias=True)
    mixers = full_and_windowed(window, num_heads=heads, num_kv_heads=kv, head_dim=hd, qkv_bias=bias, o_bias=bias)
    t = KindTable()
    for i in range(n_layers):
        sw = window is not None and i < len(types) and types[i] == "sliding_attention"
        t.add(layer(mixers[sw], ffn, 2 * h + heads))
    return r.header_spec(
        c,
        t,
        intermediate_size=None,
        act_default="silu",
        sliding_window=window,
        extra_params=h,
        notes=notes,
        key_issues=issues,
    )

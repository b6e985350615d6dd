"""DBRX (``dbrx``): nested ``attn_config`` / ``ffn_config``.

transformers 5.24 ``modeling_dbrx.py``: keys ``d_model`` (H), ``n_heads``, ``n_layers``,
``max_seq_len``; ``attn_config.kv_n_heads`` (default 1), head_dim = H / n_heads, one fused
``Wqkv`` H -> H + 2·kv·head_dim and ``out_proj`` H -> H, both without bias; ``clip_qkv`` clamps
activations (no weights). ``ffn_config``: router ``layer`` H -> ``moe_num_experts`` (no bias),
experts ``w1``/``v1``/``w2`` each ``[E·ffn_hidden_size, H]`` (a gated GLU, gate+up = 2·I),
top ``moe_top_k``. Two LayerNorms without bias (H each) per layer and a final one.
"""

from __future__ import annotations

from colint.normalize.format_reader import heads_attention, routed_experts
from colint.normalize.hf.base import HFReader, Header
from colint.normalize.hf.moe_common import layer
from colint.normalize.hf.tie import tie_embeddings
from colint.normalize.model_spec import ModelSpec


def build(r: HFReader) -> ModelSpec:
    h = r.int("hidden_size", "d_model", default=2048)
    n_layers = r.int("num_layers", "n_layers", default=24)
    heads = r.int("num_heads", "n_heads", default=16)
    kv = r.int("num_kv_heads", "attn_config.kv_n_heads", default=1)
    hd = h // heads
    inter = r.int("moe_intermediate_size", "ffn_config.ffn_hidden_size", default=3584)
    e = r.int("num_experts", "ffn_config.moe_num_experts", default=4)
    k = r.int("top_k", "ffn_config.moe_top_k", default=1)
    vocab = r.int("vocab_size", "vocab_size", default=32000)
    tie = tie_embeddings(r, False)
    rejects = ["DbrxConfig rejects tie_word_embeddings=true"] if tie else []
    if r.has("attn_config.clip_qkv"):
        r.float(None, "attn_config.clip_qkv")
    act = r.raw("ffn_config.ffn_act_fn")
    act_name = act.get("name") if isinstance(act, dict) and isinstance(act.get("name"), str) else "silu"

    mixer = heads_attention(heads, kv, hd, fused_qkv=True)
    ffn = routed_experts(e, k, inter)
    return r.header_spec(
        Header(h, n_layers, heads, kv, hd, None, vocab, tie),
        ([layer(mixer, ffn, 2 * h)], [0] * n_layers),
        positions=("max_seq_len",),
        act=act_name,
        extra_params=h,
        loader_rejects=rejects,
    )

"""Gemma (``gemma``), Gemma-2 (``gemma2``) and Gemma-3 text (``gemma3_text``; the ``gemma3``
wrapper is linted through its ``text_config``).

transformers: ``head_dim`` comes from the config (default 256), so it often differs from
H / heads; q/k/v/o with ``attention_bias``; gated MLP without bias; embeddings scaled by
sqrt(H) (no parameters); LM head tied by default. Norms (RMSNorm, width H): Gemma has two per
layer; Gemma-2 and Gemma-3 four (input, post-attention, pre- and post-feed-forward); Gemma-3
adds per-head ``q_norm``/``k_norm`` (head_dim each). Final RMSNorm. Gemma-2/3 alternate
sliding and full attention (``layer_types``; when absent Gemma-2 makes every other layer
sliding, Gemma-3 every layer but each ``sliding_window_pattern``-th, default 6).
"""

from __future__ import annotations

from colint.normalize.hf.base import HFReader, read_common, sliding_full_kinds
from colint.normalize.model_spec import FFN, ModelSpec


def _default_types(mt: str, r: HFReader, n_layers: int) -> list[str] | None:
    if mt == "gemma2":
        return ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(n_layers)]
    if mt == "gemma3_text":
        period = r.int(None, "sliding_window_pattern", "_sliding_window_pattern", default=6)
        return ["sliding_attention" if (i + 1) % period else "full_attention" for i in range(n_layers)]
    return None


def build(r: HFReader) -> ModelSpec:
    mt = r.model_type
    # KV heads absent: the class default (16 Gemma, 4 Gemma-2/3/4), not heads; head_dim absent: the class default (256 Gemma)
    c = read_common(r, head_dim="stated")
    h, n_layers, heads, kv, hd = c.hidden_size, c.num_layers, c.num_heads, c.num_kv_heads, c.head_dim
    inter = c.ffn_width
    bias = r.bool(None, "attention_bias", default=False)
    if mt == "gemma":
        other, window, types = 2 * h, None, None
    else:
        other = 4 * h + (2 * hd if mt == "gemma3_text" else 0)
        window = r.opt_int("sliding_window", "sliding_window")
        types = r.layer_types(n_layers) or _default_types(mt, r, n_layers)
    ffn = FFN(kind="dense", intermediate_size=inter, gated=True)
    kinds, pattern = sliding_full_kinds(
        n_layers, types, window, ffn, other, num_heads=heads, num_kv_heads=kv, head_dim=hd, qkv_bias=bias, o_bias=bias
    )
    return r.header_spec(
        c,
        (kinds, pattern),
        act=("hidden_activation", "hidden_act"),
        sliding_window=window,
        extra_params=h,
    )

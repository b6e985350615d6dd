"""The one assertion of a corpus file's table row (MaxText and Meta configs): format, family, widths, vocabulary,
parameter counts and layer kinds, each against the values its row states."""

from __future__ import annotations

from colint.analysis.inventory import param_counts


def assert_file_row(spec, fmt: str, row: tuple) -> None:
    """``row`` = (name, model_type, hidden, layers, heads, kv_heads, head_dim, ffn, vocab, tied, total params,
    active params per token, {layer kind: count})."""
    _name, mtype, h, n_layers, heads, kv, hd, ffn, vocab, tied, total, active, layer_counts = row
    assert (spec.format, spec.model_type) == (fmt, mtype)
    widths = (spec.hidden_size, spec.num_layers, spec.num_heads, spec.num_kv_heads, spec.head_dim)
    assert widths + (spec.intermediate_size,) == (h, n_layers, heads, kv, hd, ffn)
    assert (spec.vocab_size, spec.tie_word_embeddings) == (vocab, tied)
    p = param_counts(spec)
    assert (p.total, p.active_per_token) == (total, active)
    assert {k.name: c for k, c in zip(spec.layer_kinds, spec.layer_counts())} == layer_counts

"""OPT (``ffn_dim``, ``word_embed_proj_dim``, learned positions with a +2 offset).

transformers' OPTForCausalLM: ``embed_tokens`` is V x ``word_embed_proj_dim`` (P, default H);
when P != H, ``project_in`` (P -> H) and ``project_out`` (H -> P) Linears without bias sit
around the decoder and the LM head is P -> V. ``embed_positions`` has
``max_position_embeddings + 2`` rows (OPTLearnedPositionalEmbedding's offset). Per layer
q/k/v/out_proj (H -> H) and fc1/fc2 (``ffn_dim``, not gated), all with ``enable_bias``; two
LayerNorms (weight+bias when ``layer_norm_elementwise_affine``); a final LayerNorm when
``do_layer_norm_before`` and not ``_remove_final_layer_norm``. LM head tied by default.
"""

from __future__ import annotations

from colint.normalize.format_reader import heads_attention
from colint.normalize.hf.base import HFReader, Header
from colint.normalize.hf.tie import tie_embeddings
from colint.normalize.model_spec import FFN, LayerKind, ModelSpec

POSITION_OFFSET = 2  # OPTLearnedPositionalEmbedding.offset in transformers' modeling_opt.py


def build(r: HFReader) -> ModelSpec:
    h = r.int("hidden_size", "hidden_size")
    n_layers = r.int("num_layers", "num_hidden_layers")
    heads = r.int("num_heads", "num_attention_heads")
    if h % heads:
        raise r.error("num_attention_heads", f"hidden_size {h} is not divisible by num_attention_heads {heads}")
    hd = h // heads
    ffn_dim = r.int("intermediate_size", "ffn_dim")
    vocab = r.int("vocab_size", "vocab_size")
    tie = tie_embeddings(r)
    proj = r.int(None, "word_embed_proj_dim", default=h)
    positions = r.int("max_position_embeddings", "max_position_embeddings")
    bias = r.bool(None, "enable_bias", default=True)
    affine = r.bool(None, "layer_norm_elementwise_affine", default=True)
    before = r.bool(None, "do_layer_norm_before", default=True)
    remove_final = r.bool(None, "_remove_final_layer_norm", default=False)
    ln = 2 * h if affine else 0
    mixer = heads_attention(heads, heads, hd, qkv_bias=bias, o_bias=bias)
    ffn = FFN(kind="dense", intermediate_size=ffn_dim, gated=False, bias=bias)
    kind = LayerKind(name="attention/full+dense", mixer=mixer, ffn=ffn, other_params=2 * ln)
    notes = []
    extra_embed = 0
    if proj != h:
        # embed_tokens is V x P (not V x H), plus project_in and project_out (P x H each).
        extra_embed = vocab * (proj - h) + 2 * proj * h
        notes.append(
            f"word_embed_proj_dim {proj} != hidden_size {h}: project_in/out counted with the embedding"
            + ("" if tie else "; the LM head GEMM is listed as hidden_size -> vocab")
        )
    return r.header_spec(
        Header(h, n_layers, heads, heads, hd, ffn_dim, vocab, tie),
        ([kind], [0] * n_layers),
        positions=positions,
        position_embeddings=positions + POSITION_OFFSET,
        act=("activation_function",),
        embedding_params_extra=extra_embed + (0 if tie or proj == h else vocab * (proj - h)),
        extra_params=ln if (before and not remove_final) else 0,
        notes=notes,
    )

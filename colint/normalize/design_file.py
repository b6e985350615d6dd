"""colint's own YAML schema (``colint: 1``) for architectures that exist only as a design.

A design file says what a model *is*, in the fewest keys that fix every weight shape::

    colint: 1
    model:
      name: my-hybrid
      hidden_size: 4096
      vocab_size: 131072
      attention: {heads: 32, kv_heads: 8, head_dim: 128}
      ffn: {intermediate_size: 14336}
      mamba: {d_state: 128, expand: 2, head_dim: 64, n_groups: 8}
      pattern: "[A,A,A,M]*12"

``pattern`` is one letter per layer — ``A`` attention of ``attention.kind``, ``F`` full attention,
``S`` sliding-window attention, ``X`` MLA, ``M`` Mamba-2, ``L`` linear attention (Gated DeltaNet),
``N`` no token mixer — optionally followed by ``e`` (MoE FFN), ``d`` (dense FFN) or ``-`` (no
FFN); without it the ``moe`` section decides (``first_dense_layers``, ``every``). Groups repeat:
``"[S,S,S,S,S,F]*8"``, ``"F+[M,Me]*20"``; a YAML list of the same tokens works too. The schema is
exported as JSON Schema by ``colint schema`` and documented in docs/schema.md.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from colint.loading.document import Document
from colint.normalize.format_reader import (
    FormatReader,
    attention as attention_mixer,
    gated_deltanet,
    group_limited_routing,
    layer,
    mamba2_mixer,
    mla as mla_mixer,
    mla_norm_params,
    raise_at,
    routed_experts,
)
from colint.normalize.model_spec import FFN, Mixer, ModelSpec

if TYPE_CHECKING:  # pydantic (design_schema) is imported only when a design file is read
    from colint.normalize.design_file_schema import Attention, Model

ACCEPTS_VOCAB_SIZE = True
SCHEMA_ID = "colint/v1"


def json_schema() -> dict:
    from colint.normalize.design_file_schema import json_schema as build

    return build()


def detect(doc: Document) -> bool:
    d = doc.data
    return isinstance(d, dict) and (d.get("colint") == 1 or d.get("schema") == SCHEMA_ID)


_TOKEN = re.compile(r"^([AFSXMLN])([ed-]?)$")


def expand_pattern(text: str) -> list[str]:
    """``"[A,A,A,M]*12"`` → ['A', 'A', 'A', 'M', ...]; raises ValueError with what is wrong."""
    s = re.sub(r"\s+", "", text)
    pos = 0

    def term() -> list[str]:
        nonlocal pos
        if pos < len(s) and s[pos] == "[":
            pos += 1
            items = [t for t in seq(close="]")]
            if pos >= len(s) or s[pos] != "]":
                raise ValueError(f"missing ']' at character {pos + 1}")
            pos += 1
        else:
            m = re.match(r"[A-Za-z][ed-]?", s[pos:])
            if not m:
                raise ValueError(f"expected a layer letter or '[' at character {pos + 1}")
            tok = m.group()
            if not _TOKEN.match(tok):
                raise ValueError(f"unknown layer token {tok!r} (letters A F S X M L N, suffix e d -)")
            pos += len(tok)
            items = [tok]
        if pos < len(s) and s[pos] == "*":
            m = re.match(r"\*(\d+)", s[pos:])
            if not m or int(m.group(1)) > 100_000:
                raise ValueError(f"expected a repeat count after '*' at character {pos + 1}")
            pos += len(m.group())
            items = items * int(m.group(1))
        return items

    def seq(close: str | None = None) -> list[str]:
        nonlocal pos
        out = term()
        while pos < len(s) and s[pos] in ",+":
            pos += 1
            out += term()
        return out

    out = seq()
    if pos != len(s):
        raise ValueError(f"unexpected {s[pos]!r} at character {pos + 1}")
    return out


def normalize(doc: Document, vocab_size: int | None = None) -> ModelSpec:
    m = _validated(doc)
    r = FormatReader(doc, "colint", ("model",))
    h = m.hidden_size
    r.record("hidden_size", "hidden_size")
    tokens, n_layers = _layer_tokens(r, m)
    norm_w = h if m.norm == "rms" else 2 * h
    a = m.attention
    heads, kv, head_dim = _attention_dims(r, m)
    dense = _dense_ffn(r, m)
    moe = _moe_ffn(r, m)
    none_ffn = FFN(kind="none")

    layers = []
    for i, tok in enumerate(tokens[:n_layers]):
        mixer, other = _mixer(r, m, tok[0], heads, kv, head_dim, h)
        ffn = _layer_ffn(r, m, i, tok, dense, moe, none_ffn)
        norms = norm_w * ((mixer.kind != "none") + (ffn.kind != "none"))  # one pre-norm per sub-block
        layers.append(layer(mixer, ffn, other + norms))
    vocab = m.vocab_size if m.vocab_size is not None else vocab_size
    r.record("vocab_size", "vocab_size", default=m.vocab_size is None)
    if vocab is None:
        r.notes.append("no vocab_size: counts exclude embedding and LM head")
    r.record("tie_word_embeddings", "tie_embeddings", default="tie_embeddings" not in (doc.get(("model",)) or {}))
    sliding = (a.window or (a.sliding.window if a.sliding else None)) if a is not None else None
    return r.spec(
        hidden_size=h,
        num_layers=n_layers,
        layers=layers,
        model_type=m.name or "design",
        architecture="colint/v1",
        vocab_size=vocab,
        tie_word_embeddings=m.tie_embeddings,
        max_position_embeddings=m.max_position_embeddings,
        num_heads=heads,
        num_kv_heads=kv,
        head_dim=head_dim,
        intermediate_size=m.ffn.intermediate_size if m.ffn else None,
        sliding_window=sliding,
        mtp_layers=m.mtp_layers,
        extra_params=norm_w,
    )


def _validated(doc: Document) -> Model:
    """The file's ``model:`` section, validated by the pydantic schema; its first error located in the file."""
    from pydantic import ValidationError

    from colint.normalize.design_file_schema import ColintFile

    try:
        f = ColintFile.model_validate(doc.data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(p for p in err["loc"] if isinstance(p, (str, int)))
        doc_loc = _doc_path(doc, loc)
        raise raise_at(doc, doc_loc, err["msg"]) from None
    return f.model


def _layer_tokens(r: FormatReader, m: Model) -> tuple[list[str], int]:
    """(one pattern token per layer, the layer count): ``layers`` and ``pattern`` agree, either may stand alone."""
    tokens = _pattern(r, m)
    n_layers = m.layers or len(tokens)
    r.record("num_layers", "layers", default=m.layers is None)  # never the pattern: its value is text
    if m.pattern is not None and m.layers is not None and len(tokens) != m.layers:
        raise r.error("pattern", f"pattern describes {len(tokens)} layers but layers is {m.layers}")
    if m.pattern is None:
        tokens = ["A"] * n_layers
    return tokens, n_layers


def _attention_dims(r: FormatReader, m: Model) -> tuple[int, int, int]:
    """(heads, KV heads, head_dim) of the ``attention:`` section; zeros without one."""
    a = m.attention
    if a is None:
        return 0, 0, 0
    h = m.hidden_size
    heads = a.heads
    kv = a.kv_heads or heads
    if a.head_dim is None and h % heads:
        raise r.error("attention.heads", f"hidden_size {h} is not divisible by {heads} heads; give head_dim")
    head_dim = a.head_dim or h // heads
    r.record("num_heads", "attention.heads")
    r.record("num_kv_heads", "attention.kv_heads", default=a.kv_heads is None)
    r.record("head_dim", "attention.head_dim", default=a.head_dim is None)
    if a.window:
        r.record("sliding_window", "attention.window")
    return heads, kv, head_dim


def _dense_ffn(r: FormatReader, m: Model) -> FFN | None:
    if m.ffn is None:
        return None
    r.record("intermediate_size", "ffn.intermediate_size")
    return FFN(kind="dense", intermediate_size=m.ffn.intermediate_size, gated=m.ffn.gated, bias=m.ffn.bias)


def _moe_ffn(r: FormatReader, m: Model) -> FFN | None:
    """The MoE FFN of the ``moe:`` section (routed and shared experts), or None without one."""
    e = m.moe
    if e is None:
        return None
    keys = ("moe.expert_groups", "moe.groups_per_token")
    route = group_limited_routing(r, e.experts, e.top_k, e.expert_groups, e.groups_per_token or e.expert_groups, keys)
    moe = routed_experts(
        e.experts,
        e.top_k,
        e.intermediate_size,
        gated=e.gated,
        expert_gated=e.gated,
        num_shared_experts=e.shared_experts,
        shared_intermediate_size=(e.shared_intermediate_size or e.intermediate_size) if e.shared_experts else 0,
        shared_gated=e.gated,
        router_bias=e.router_bias,
        **route,
    )
    for field, key in (
        ("num_experts", "moe.experts"),
        ("top_k", "moe.top_k"),
        ("moe_intermediate_size", "moe.intermediate_size"),
    ):
        r.record(field, key)
    if e.shared_experts:
        r.record(
            "shared_expert_intermediate_size",
            "moe.shared_intermediate_size" if e.shared_intermediate_size else "moe.intermediate_size",
        )
    return moe


def _layer_ffn(r: FormatReader, m: Model, i: int, tok: str, dense: FFN | None, moe: FFN | None, none_ffn: FFN) -> FFN:
    """Layer ``i``'s FFN: its token's suffix (``e`` MoE, ``d`` dense, ``-`` none), else the ``moe:`` section's
    ``first_dense_layers`` and ``every``."""
    suffix = tok[1:]
    if suffix == "e" or (
        not suffix
        and m.moe is not None  # exactly when moe is built (_moe_ffn)
        and i >= m.moe.first_dense_layers
        and (i - m.moe.first_dense_layers) % m.moe.every == 0
    ):
        if moe is None:
            raise r.error("pattern", f"layer {i} asks for a MoE FFN ('{tok}') but there is no moe: section")
        return moe
    if suffix == "-":
        return none_ffn
    if dense is None:
        if suffix == "d" or moe is None:
            raise r.error(
                "ffn" if suffix != "d" else "pattern",
                f"layer {i} needs a dense FFN but there is no ffn: section",
            )
        raise r.error(
            "ffn",
            f"layer {i} is a dense layer (moe.first_dense_layers / moe.every) but there is no ffn: section",
        )
    return dense


def _pattern(r: FormatReader, m: Model) -> list[str]:
    if m.pattern is None:
        return []
    if isinstance(m.pattern, list):
        for i, t in enumerate(m.pattern):
            if not _TOKEN.match(t):
                raise r.error(("pattern", i), f"unknown layer token {t!r} (letters A F S X M L N, suffix e d -)")
        return list(m.pattern)
    try:
        return expand_pattern(m.pattern)
    except ValueError as exc:
        raise r.error("pattern", f"cannot read pattern {m.pattern!r}: {exc}") from None


def _mixer(r: FormatReader, m: Model, letter: str, heads: int, kv: int, head_dim: int, h: int) -> tuple[Mixer, int]:
    """The token mixer of a layer letter and its parameters outside GEMMs."""
    a = m.attention
    if letter in "AFSX" and a is None:
        raise r.error("pattern", f"layer letter {letter} needs an attention: section")
    if letter == "A":
        assert a is not None  # refused above
        letter = {"full": "F", "sliding": "S", "chunked": "C", "mla": "X"}[a.kind]
    if letter in ("F", "S", "C"):
        assert a is not None  # refused above
        return _attention_layer(r, a, letter, heads, head_dim)
    if letter == "X":
        assert a is not None
        return _mla_layer(r, a, heads)
    if letter == "M":
        return _mamba_layer(r, m, h)
    if letter == "L":
        return _linear_attention_layer(m)
    return Mixer(kind="none"), 0


def _attention_layer(r: FormatReader, a: Attention, letter: str, heads: int, head_dim: int) -> tuple[Mixer, int]:
    """Full (``F``), sliding (``S``) or chunked (``C``) attention: each key of the layer type's own section
    replaces the shared one; KV heads default to the type's heads (as to heads)."""
    own = a.full if letter == "F" else a.sliding
    o_heads = (own.heads if own else None) or heads
    o_kv = (own.kv_heads if own else None) or a.kv_heads or o_heads
    o_hd = (own.head_dim if own else None) or head_dim
    o_vd = (own.v_head_dim if own else None) or a.v_head_dim
    window = (own.window if own else None) or a.window
    sinks = own.sinks if own is not None and own.sinks is not None else a.sinks
    if own is not None and letter == "F" and own.window:
        raise r.error(("attention", "full", "window"), "full-attention layers have no window")
    extra = (2 * o_hd if a.qk_norm else 0) + (o_heads if sinks else 0)
    if letter == "F":
        mx = attention_mixer(o_heads, o_kv, o_hd, qkv_bias=a.qkv_bias, o_bias=a.o_bias, v_head_dim=o_vd)
        return _v(mx), extra
    if not window:
        raise r.error("attention", "sliding or chunked attention needs attention.window")
    return _v(
        attention_mixer(
            o_heads,
            o_kv,
            o_hd,
            window=window,
            attn="sliding" if letter == "S" else "chunked",
            qkv_bias=a.qkv_bias,
            o_bias=a.o_bias,
            v_head_dim=o_vd,
        )
    ), extra


def _mla_layer(r: FormatReader, a: Attention, heads: int) -> tuple[Mixer, int]:
    """MLA (``X``) of ``attention.mla``, with DeepSeek Sparse Attention's indexer where it gives index_heads."""
    from colint.normalize.design_file_schema import MLA

    ml = a.mla or MLA()
    mx = mla_mixer(
        heads,
        q_lora_rank=ml.q_lora_rank or None,
        kv_lora_rank=ml.kv_lora_rank,
        nope=ml.qk_nope_head_dim,
        rope=ml.qk_rope_head_dim,
        v_head_dim=ml.v_head_dim,
    )
    r.record("kv_lora_rank", "attention.mla.kv_lora_rank", default=a.mla is None)
    if ml.index_heads:  # DeepSeek Sparse Attention: the lightning indexer reads the q latent
        if not ml.q_lora_rank:
            raise r.error(("attention", "mla", "index_heads"), "the DSA indexer needs attention.mla.q_lora_rank")
        mx = replace(mx, index_num_heads=ml.index_heads, index_head_dim=ml.index_head_dim, index_topk=ml.index_topk)
        return mx, mla_norm_params(mx)
    if ml.index_topk:
        raise r.error(
            ("attention", "mla", "index_topk"), "index_topk needs the indexer: give attention.mla.index_heads"
        )
    return mx, mla_norm_params(mx)


def _mamba_layer(r: FormatReader, m: Model, h: int) -> tuple[Mixer, int]:
    """A Mamba-2 layer (``M``) of the ``mamba:`` section (its defaults without one)."""
    from colint.normalize.design_file_schema import Mamba

    mb = m.mamba or Mamba()
    d_inner = mb.expand * h
    if d_inner % mb.head_dim:
        raise r.error("mamba", f"expand x hidden_size = {d_inner} is not divisible by mamba.head_dim {mb.head_dim}")
    nh = d_inner // mb.head_dim
    conv_dim = d_inner + 2 * mb.n_groups * mb.d_state
    mx = mamba2_mixer(nh, d_inner, mb.d_state, mb.n_groups, mb.d_conv)
    return mx, conv_dim * mb.d_conv + conv_dim + 3 * nh + d_inner  # conv w+b, dt_bias, A_log, D, norm


def _linear_attention_layer(m: Model) -> tuple[Mixer, int]:
    """A Gated DeltaNet layer (``L``) of the ``linear_attention:`` section (its defaults without one)."""
    from colint.normalize.design_file_schema import LinearAttention

    la = m.linear_attention or LinearAttention()
    return gated_deltanet(la.k_heads, la.v_heads, la.k_head_dim, la.v_head_dim, la.conv_kernel)


def _v(mx: Mixer) -> Mixer:
    """A value head dim equal to the q/k head dim is no separate value dim (ModelSpec's convention)."""
    return replace(mx, v_head_dim=None) if mx.v_head_dim == mx.head_dim else mx


def _doc_path(doc: Document, loc: tuple) -> tuple:
    """pydantic's loc uses field names; the document uses the same keys (schema_ is 'schema')."""
    return tuple("schema" if p == "schema_" else p for p in loc)

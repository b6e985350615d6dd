"""GEMM inventory and parameter counts of a ModelSpec: the weight matrices of every layer kind
(``colint.normalize.weights``, where their shapes are defined) listed per model, then the LM head."""

from __future__ import annotations


from colint.util.memo import per_spec
from colint.normalize.model_spec import ModelSpec
from colint.normalize.weights import Gemm, is_gate, kind_ffn_params, kind_gemms, kind_params
from colint.util.records import dataclass

__all__ = [
    "Gemm",
    "ParamCounts",
    "gemms",
    "is_gate",
    "kind_ffn_params",
    "kind_gemms",
    "kind_params",
    "layer_counts",
    "lm_head_gemm",
    "param_counts",
]

# layer_counts() memo: id(spec) -> (spec, counts). The analysis and the rules ask a check's spec for its layer
# counts tens of times (53,308 calls over the 1,000-config MoE mix's checks, one pass over the layer pattern
# each); a spec is not modified once built (edits build new ones), so it is kept alive beside its entry and
# keyed by identity, as analyse's memo does. Oldest entries go first.
_COUNTS_MEMO: dict[int, tuple[ModelSpec, list[int]]] = {}
COUNTS_MEMO_MAX = 1024


def layer_counts(spec: ModelSpec) -> list[int]:
    """``spec.layer_counts()`` (layers of each layer kind), built once per spec object: read-only."""
    return per_spec(_COUNTS_MEMO, id(spec), spec, spec.layer_counts, COUNTS_MEMO_MAX)


def lm_head_gemm(spec: ModelSpec) -> Gemm:
    """The LM head's GEMM (H -> vocab), the last entry of :func:`gemms` when the spec has a vocabulary."""
    v = spec.vocab_size or 0
    return Gemm("lm_head", spec.hidden_size, v, 1, 1, 1.0, False, "column", None, "hidden_size", "vocab_size", "")


def gemms(spec: ModelSpec, merge: bool = True) -> list[Gemm]:
    """All weight GEMMs of the model, per layer kind, then the LM head.

    With ``merge``, entries that are identical but for their layer kind (q_proj of sliding and
    of full attention layers, say) are merged and their layer counts added.
    """
    out: list[Gemm] = []
    counts = layer_counts(spec)
    for kind, n_layers in zip(spec.layer_kinds, counts):
        if n_layers:
            out += kind_gemms(kind, spec.hidden_size, n_layers)
    if spec.vocab_size:
        out.append(lm_head_gemm(spec))
    if not merge:
        return out
    merged: dict[tuple, Gemm] = {}
    for g in out:
        key = (g.name, g.k, g.n, g.count, g.m_per_token, g.bias)
        if key in merged:
            prev = merged[key]
            same_kind = prev.kind if prev.kind == g.kind else None
            merged[key] = Gemm(
                prev.name,
                prev.k,
                prev.n,
                prev.layers + g.layers,
                prev.count,
                prev.m_per_token,
                prev.bias,
                prev.parallel,
                prev.group,
                prev.k_field,
                prev.n_field,
                same_kind,
            )
        else:
            merged[key] = g
    return list(merged.values())


@dataclass(frozen=True)
class ParamCounts:
    total: int  # what transformers builds (tied weights once); excludes MTP layers
    embedding: int
    lm_head: int  # 0 when tied to the embedding
    active_per_token: int  # routed experts counted top-k times instead of E
    layers: int
    mtp: int
    known_vocab: bool


def param_counts(spec: ModelSpec) -> ParamCounts:
    layers_total = layers_active = 0
    for kind, n in zip(spec.layer_kinds, layer_counts(spec)):
        if n:
            t, a = kind_params(kind, spec.hidden_size)
            layers_total += n * t
            layers_active += n * a
    v = spec.vocab_size or 0
    embedding = v * spec.hidden_size + spec.position_embeddings * spec.hidden_size + spec.embedding_params_extra
    lm_head = 0 if spec.tie_word_embeddings else v * spec.hidden_size
    total = embedding + lm_head + layers_total + spec.extra_params
    active = embedding + lm_head + layers_active + spec.extra_params
    return ParamCounts(total, embedding, lm_head, active, layers_total, spec.mtp_params, spec.vocab_size is not None)

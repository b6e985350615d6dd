"""Reading by structure: a config whose model_type neither colint nor transformers knows, read by its keys.

An architect writing a new model gives it a new ``model_type`` and its own modelling code (``auto_map``), while its
keys are still a Llama's, a DeepSeek-V3's or a Nemotron-H's. Every family colint reads (``FAMILIES``) is tried on
the file; each reading logs the keys it looks up (:class:`colint.normalize.reader.collect_accessed`). The file's
*shape keys* (:func:`shape_keys`: sizes, counts, ranks, experts, layer patterns, per-layer lists, Mamba/SSM and
window keys) are then accounted for by a reading when its adapter looks them up or the family's transformers config
class knows them (``hf_keys.json``: a key the class knows and the adapter does not read changes no shape of that
family). The reading kept is the one that leaves the fewest shape keys unaccounted for, then the fewest keys of
the file unknown, then reads the most shape keys, then comes first in ``PREFERRED`` and ``FAMILIES``. Its
spec keeps the file's own model_type and says what it was read as (a note and a CL007 info at ``model_type``);
every key of the file it neither reads nor knows is a CL007 finding too.

A reading counts only when the file itself gives its width and depth (not the family's defaults) and when the
file states every structure it builds (experts, MLA, recurrent layers, windows: no family's defaults may add them).
A file is refused (the error names its shape keys) when no family reads it so; a shape key the reading kept neither
reads nor knows is a CL007 warning (whatever it sizes is not counted). ``auto_map``
code is never imported or run: only the JSON is read. The readings are exact for the family read; how close they
are to the new model is only as close as its code is to that family (docs/structure-reading.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from colint.errors import ColintError, FormatNotRecognized
from colint.loading.document import Document, format_path
from colint.normalize.model_spec import KeyIssue, ModelSpec, Source
from colint.normalize.reader import COLLECTORS, collect_accessed
from colint.normalize.unknown_keys import hf_known, hf_known_common

# Key names that size or shape a model (a signature per family): MLA (kv_lora_rank, q_lora_rank, qk_*_head_dim),
# MoE in each family's naming (n_routed_experts, num_experts, num_local_experts, moe_intermediate_size,
# first_k_dense_replace, num_experts_per_tok, decoder_sparse_step, mlp_only_layers), hybrid Mamba stacks
# (hybrid_override_pattern, mamba_*, ssm_*, n_groups, conv_kernel), sliding windows and layer_types, per-layer
# lists, and the common header (hidden_size, num_hidden_layers, heads, head_dim, intermediate_size, vocab_size).
_SHAPE = re.compile(
    r"(^num_|^n_|_size$|_dim$|_rank$|_layers$|experts|^moe_|_heads$|pattern|layer_types|^layers_|block_types|"
    r"block_configs|^mamba|^ssm|^linear_|^conv_|window|^first_k|_freq$|_step$|_period$|intermediate|^hidden_size|"
    r"vocab|^d_model$|^d_ff|^ffn_|_mult$)"
)
# ... and these, though the pattern matches them, shape nothing (token ids, deployment, regularisation, routing).
_NOT_SHAPE = re.compile(
    r"(_token_ids?$|dropout|^initializer|^rope|^rotary|^max_position|^ep_size$|^tp_size$|_parallel|world_size|"
    r"^n_group$|^topk_group$|^num_beams$|^num_return|_dtype$|^moe_router|^moe_aux|aux_loss|z_loss|_jitter|"
    r"routed_scaling|^max_window_layers$)"
)
# What a reading builds must be stated by the file: a family whose defaults add experts, MLA, recurrent layers or
# windows to a file that names none of them (Qwen3-MoE's 128 default experts under a dense Qwen3) is no reading.
_STATES = {
    "moe": re.compile(r"expert|^moe_"),
    "mla": re.compile(r"^kv_lora_rank$"),
    "recurrent": re.compile(r"^mamba|^ssm|^linear_|^conv_|hybrid|layers_block_type|layer_types|block_types|attn_layer"),
    "sliding": re.compile(r"window|layer_types|chunk"),
}


# Of readings alike (the same keys read and known), the family whose conventions are the most common comes first:
# a gated, bias-free Llama block before phi's or gpt-oss's, DeepSeek-V3 before V2; then FAMILIES' order.
PREFERRED = (
    "llama",
    "mistral",
    "qwen2",
    "qwen3",
    "mixtral",
    "qwen3_moe",
    "qwen2_moe",
    "deepseek_v3",
    "gemma3_text",
    "nemotron_h",
    "qwen3_next",
    "jamba",
)


def shape_keys(node: dict) -> list[str]:
    """The keys of ``node`` that name a size, a count or the layer structure (module comment), in file order."""
    return [k for k in node if isinstance(k, str) and _SHAPE.search(k) and not _NOT_SHAPE.search(k)]


def known_keys(model_type: str) -> frozenset:
    """The keys ``model_type``'s transformers config class knows, as CL007 judges a file read as that family
    (colint.normalize.unknown_keys.hf_known: hf_keys.json's defined, aliased and PretrainedConfig's own keys, a
    wrapper's text config's, the bookkeeping keys of published configs); for a family the table lacks, the
    common and bookkeeping keys alone."""
    return hf_known(model_type) or hf_known_common()


def _built(spec: ModelSpec) -> set[str]:
    """The structures of ``_STATES`` that ``spec`` has."""
    out = set()
    for k in spec.layer_kinds:
        if k.ffn.kind == "moe":
            out.add("moe")
        mixers = [k.mixer] + ([k.parallel_mixer] if k.parallel_mixer is not None else [])
        for m in mixers:
            if m.kind == "mla":
                out.add("mla")
            elif m.kind in ("mamba", "linear_attention", "short_conv"):
                out.add("recurrent")
            if m.kind in ("attention", "mla") and m.attention != "full":
                out.add("sliding")
    return out


def _sized_by_the_file(spec: ModelSpec) -> bool:
    """Whether the file itself gives the reading's width, depth and (with attention) head count."""
    needed = ["hidden_size", "num_layers"] + (["num_heads"] if spec.num_heads and "num_heads" in spec.sources else [])
    return all((src := spec.sources.get(f)) is not None and not src.default for f in needed)


class _Reading:
    __slots__ = ("model_type", "spec", "looked", "read", "unaccounted", "unknown", "phantom", "order")

    def __init__(
        self,
        model_type: str,
        spec: ModelSpec,
        looked: set,
        shape: list[str],
        present: set,
        stated: set,
        order: int,
    ) -> None:
        known = known_keys(model_type)
        self.model_type = model_type
        self.spec = spec
        self.looked = looked
        self.read = [k for k in shape if k in looked]
        self.unaccounted = [k for k in shape if k not in looked and k not in known]
        # every key of the file this reading neither looks up nor knows (CL007's findings if it is kept)
        self.unknown = sum(1 for k in present if isinstance(k, str) and k not in looked and k not in known)
        self.phantom = sorted(s for s in _built(spec) if not any(_STATES[s].search(str(k)) for k in stated))
        self.order = order

    def rank(self) -> tuple:
        return (len(self.phantom), len(self.unaccounted), self.unknown, -len(self.read), self.order)


def read_by_structure(
    doc: Document, prefix: tuple, model_type: str, families: Iterable[str], reader_for, why_unknown: str
) -> ModelSpec:
    """The spec of ``doc``'s model read as the known family its keys match best (module docstring), or a
    FormatNotRecognized naming the shape keys no family accounts for. ``why_unknown`` ends the note's first clause
    (" (transformers is not installed)" or ""). ``families``: the model_types to try; ``reader_for(doc, prefix,
    mt)``: the adapter module and reader of one (colint.normalize.hf.reader_for)."""

    node = doc.get(prefix) if prefix else doc.data
    shape = shape_keys(node)
    present = set(node)
    # the names a structure is stated by: keys with a value (not null or false), and those of nested mappings
    # (DBRX's ffn_config)
    stated = {k for k, v in node.items() if v is not None and v is not False} | {
        k for v in node.values() if isinstance(v, dict) for k, x in v.items() if x is not None and x is not False
    }
    n = len(prefix)
    best: _Reading | None = None
    first_error: ColintError | None = None
    tried = list(families)
    for order, mt in enumerate(dict.fromkeys([m for m in PREFERRED if m in tried] + tried)):
        with collect_accessed() as log:
            try:
                module, reader = reader_for(doc, prefix, mt)
                spec = module.build(reader)
            except ColintError as exc:  # this family cannot read the file (a key it requires, a value it refuses)
                first_error = first_error or exc
                continue
            except Exception:  # noqa: BLE001 - an adapter meeting another family's keys: not a reading
                continue
        if not _sized_by_the_file(spec):
            continue  # a width, depth or head count from the family's defaults: a reading of the defaults
        looked = {p[n] for p in log.paths if len(p) > n and p[:n] == prefix}
        reading = _Reading(mt, spec, looked, shape, present, stated, order)
        if best is None or reading.rank() < best.rank():
            best = reading
    if best is None or best.phantom:
        raise _refusal(doc, prefix, model_type, tried, shape, first_error)
    if COLLECTORS:  # the caller's access log (CL007) sees what the reading kept looked up
        outer = COLLECTORS[-1]
        outer.root = prefix
        outer.paths.update(prefix + (k,) for k in best.looked)
    return _as_read(doc, prefix, model_type, best, why_unknown)


def _as_read(doc: Document, prefix: tuple, model_type: str, best: _Reading, why_unknown: str) -> ModelSpec:
    node = doc.get(prefix) if prefix else doc.data
    line, col = doc.location(prefix + ("model_type",))
    code = " (its auto_map code is not run)" if "auto_map" in node or "auto_map" in doc.data else ""
    others = best.unknown
    read_as = (
        f"read by its structure as {best.model_type}{code}: {best.model_type} reads {len(best.read)} of its "
        f"{len(shape_keys(node))} shape keys" + (f"; {others} other key(s) it does not read (CL007)" if others else "")
    )
    note = f"model_type {model_type!r} is one neither colint nor transformers knows{why_unknown}; {read_as}"
    # the family read as travels in `suggestion`: colint.normalize.structure_keys reports the keys it does not read
    structure = KeyIssue(
        kind="structure",
        source=Source(key=format_path(prefix + ("model_type",)), line=line, column=col),
        detail=read_as,
        suggestion=best.model_type,
    )
    spec = best.spec
    return replace(
        spec, model_type=model_type, notes=[note] + list(spec.notes), key_issues=[structure] + list(spec.key_issues)
    )


def _refusal(
    doc: Document,
    prefix: tuple,
    model_type: str,
    families: list[str],
    keys: list[str],
    cause: ColintError | None = None,
) -> FormatNotRecognized:
    """The error of a file no family reads: the form of colint.normalize.hf.fallback's "not supported", with why."""
    line, col = doc.location(prefix + ("model_type",))
    named = f"its shape keys: {', '.join(keys)}" if keys else "it states none of the keys a family is sized by"
    said = f"; the nearest reading stopped at: {cause.message}" if cause is not None and not keys else ""
    return FormatNotRecognized(
        f"model_type {model_type!r} is not supported by colint (neither colint nor transformers knows it, and no "
        f"family colint reads can size it from its keys; {named}{said}; colint's design schema can describe it: "
        f"`colint schema`); colint reads {len(families)} model types (`colint formats` lists them)",
        path=doc.path,
        line=line or 1,
        column=col or 1,
    )

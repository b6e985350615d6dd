"""Shared pieces of the Hugging Face adapters: the reader, defaults, quantization, attention."""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping
from typing import Any, Literal, Protocol

from colint.loading.document import Document
from colint.normalize.hf.tie import tie_embeddings
from colint.normalize.model_spec import FFN, LayerKind, Mixer, ModelSpec, Quantization
from colint.normalize.reader import Reader
from colint.util.records import dataclass

_DEFAULTS_FILE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "hf_defaults.json")


@functools.lru_cache(maxsize=1)
def _defaults_table() -> dict:
    """Defaults and attribute maps per model_type, generated from transformers by
    ``scripts/gen_hf_defaults.py`` (tests check the table against the installed transformers)."""
    try:
        with open(_DEFAULTS_FILE, encoding="utf-8") as fh:
            return json.load(fh)
    except FileNotFoundError:
        return {"model_types": {}}


def family_defaults(model_type: str) -> tuple[dict, dict]:
    """(defaults, aliases) of a model_type. ``aliases`` is transformers' ``attribute_map``
    (canonical name -> the family's key: gpt2 ``hidden_size -> n_embd``); the defaults are
    keyed by the family's keys and, through the map, by the canonical names too."""
    entry = _defaults_table().get("model_types", {}).get(model_type, {})
    defaults = dict(entry.get("defaults", {}))
    aliases = dict(entry.get("attribute_map", {}))
    for canonical, real in aliases.items():
        if real in defaults and canonical not in defaults:
            defaults[canonical] = defaults[real]
    return defaults, aliases


class HFReader(Reader):
    def __init__(
        self,
        doc: Document,
        prefix: tuple = (),
        defaults: dict | None = None,
        aliases: dict | None = None,
        model_type: str = "",
    ) -> None:
        super().__init__(doc, prefix, defaults, aliases)
        self.model_type = model_type  # resolved (resolve_model_type): the family's key in FAMILIES
        self.notes: list[str] = []
        self.per_layer_lists: dict[str, int] = {}

    def record(self, field: str, key, default: bool = False) -> None:
        # A value that is absent is reported under the key this family spells (gpt2: n_layer).
        if default and isinstance(key, str):
            key = self.aliases.get(key, key)
        super().record(field, key, default)

    @property
    def key_prefix(self) -> str:
        return "".join(f"{p}." for p in self.prefix)

    def architecture(self) -> str | None:
        archs = self.doc.get(self.prefix + ("architectures",)) or self.doc.get(("architectures",))
        if isinstance(archs, list) and archs and isinstance(archs[0], str):
            return archs[0]
        return None

    def dtype(self) -> str | None:
        v = self.raw("dtype", "torch_dtype")
        if v is None and self.prefix:
            v = self.doc.get(("dtype",)) or self.doc.get(("torch_dtype",))
        return v if isinstance(v, str) else None

    def quantization(self) -> Quantization | None:
        q = self.doc.get(self.prefix + ("quantization_config",))
        if q is None and self.prefix:
            q = self.doc.get(("quantization_config",))
        if not isinstance(q, dict):
            return None
        block = q.get("weight_block_size")
        group = q.get("group_size")
        mods = q.get("modules_to_not_convert") or q.get("ignored_layers") or q.get("ignore") or []
        fmt = q.get("fmt") or q.get("quant_method")
        return Quantization(
            quant_method=q.get("quant_method") if isinstance(q.get("quant_method"), str) else None,
            fmt=fmt if isinstance(fmt, str) else None,
            weight_block_size=[int(b) for b in block]
            if isinstance(block, list) and all(isinstance(b, int) and not isinstance(b, bool) for b in block)
            else None,
            group_size=group if isinstance(group, int) and not isinstance(group, bool) else None,
            modules_to_not_convert=[m for m in mods if isinstance(m, str)] if isinstance(mods, list) else [],
            raw=q,
        )

    def attention_dims(
        self, hidden: int, *, heads_default=None, kv_default=None, head_dim_default=None
    ) -> tuple[int, int, int]:
        """(num_heads, num_kv_heads, head_dim) with transformers' defaults. ``heads_default=None``: the
        key is required; ``kv_default=None`` means "equal to heads"; ``head_dim_default=None`` means
        hidden // heads (transformers' ``getattr`` fallback), as does an explicit null head_dim."""
        heads = self.int(
            "num_heads", "num_attention_heads", **({} if heads_default is None else {"default": heads_default})
        )
        kv = self.int("num_kv_heads", "num_key_value_heads", default=heads if kv_default is None else kv_default)
        if self.has("head_dim"):
            hd = self.int("head_dim", "head_dim")
        else:  # absent: the family default; explicit null: transformers falls back to H / heads
            explicit_null = self.doc.has(self.path("head_dim"))
            hd = head_dim_default if head_dim_default is not None and not explicit_null else hidden // heads
            self.record("head_dim", "head_dim", default=True)
        return heads, kv, hd

    def layer_types(self, num_layers: int) -> list[str] | None:
        lt = self.list("layer_types", "layer_types")
        if lt is None:
            return None
        self.per_layer_lists["layer_types"] = len(lt)
        for i, t in enumerate(lt):
            if not isinstance(t, str):
                raise self.error(("layer_types", i), f"'{self.key_name('layer_types')}[{i}]' must be a string")
        return lt

    def spec(
        self, *, hidden_size: int, num_layers: int, kinds: list[LayerKind], pattern: list[int], **fields
    ) -> ModelSpec:
        """Assemble the ModelSpec with this reader's sources and notes."""
        notes = fields.pop("notes", []) + self.notes
        return ModelSpec(
            format="hf",
            model_type=self.model_type,
            architecture=self.architecture(),
            key_prefix=self.key_prefix,
            hidden_size=hidden_size,
            num_layers=num_layers,
            layer_kinds=kinds,
            layer_pattern=pattern,
            dtype=fields.pop("dtype", self.dtype()),
            quantization=fields.pop("quantization", self.quantization()),
            notes=notes,
            sources=dict(self.sources),
            per_layer_lists={**self.per_layer_lists, **fields.pop("per_layer_lists", {})},
            **fields,
        )

    def header_spec(
        self,
        header: Header,
        layers: KindTable | tuple[list[LayerKind], list[int]],
        *,
        positions: tuple[str, ...] | int | None = ("max_position_embeddings",),
        act: tuple[str, ...] | str | None = ("hidden_act",),
        act_default: str | None = None,
        **fields,
    ) -> ModelSpec:
        """:meth:`spec` of a decoder whose header is ``header`` and whose layers are ``layers`` (a table with
        ``kinds`` and ``pattern``, or the pair), so an adapter states only what differs from the common case.

        ``positions``: the keys of ``max_position_embeddings`` (read here, optional), or the value itself.
        ``act``: the keys of ``hidden_act`` (read here after the positions, default ``act_default``), or the
        value itself. ``fields`` are ModelSpec fields, and override the header's (``intermediate_size=None``
        where the FFN width lives in the layers)."""
        kinds, pattern = layers if isinstance(layers, tuple) else (layers.kinds, layers.pattern)
        if isinstance(positions, tuple):
            positions = self.opt_int("max_position_embeddings", *positions)
        if isinstance(act, tuple):
            act = self.str(None, *act, default=act_default)
        stated: dict[str, Any] = {
            "vocab_size": header.vocab_size,
            "tie_word_embeddings": header.tie_word_embeddings,
            "max_position_embeddings": positions,
            "num_heads": header.num_heads,
            "num_kv_heads": header.num_kv_heads,
            "head_dim": header.head_dim,
            "intermediate_size": header.intermediate_size,
            "hidden_act": act,
        }
        return self.spec(
            hidden_size=header.hidden_size,
            num_layers=header.num_layers,
            kinds=kinds,
            pattern=pattern,
            **{**stated, **fields},
        )


class KindTable(Protocol):
    """What :meth:`HFReader.header_spec` reads of a layer table (``moe_common.KindTable``)."""

    kinds: list[LayerKind]
    pattern: list[int]


def full_and_windowed(window: int | None, windowed: str = "sliding", **attention) -> list[Mixer]:
    """The attention mixers ``[full, windowed]`` of a stack that mixes full and windowed (``sliding`` or
    ``chunked``) layers: one object each, shared by the layers, so a table holds one LayerKind per
    combination, not per layer. ``attention`` holds the Mixer fields both share (heads, KV heads, biases)."""
    return [
        Mixer(kind="attention", attention=windowed if w else "full", window=window if w else None, **attention)
        for w in (False, True)
    ]


@dataclass(frozen=True)
class Header:
    """The keys that nearly every HF decoder states the same way (read by :func:`read_common`)."""

    hidden_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate_size: int | None  # None: the family reads its FFN width itself
    vocab_size: int
    tie_word_embeddings: bool

    @property
    def ffn_width(self) -> int:
        """``intermediate_size`` of a family whose FFN width read_common read (its default ``intermediate``)."""
        if self.intermediate_size is None:
            raise TypeError("read_common(..., intermediate=None) leaves the FFN width to the family")
        return self.intermediate_size


def read_common(
    r: HFReader,
    defaults: Mapping[str, Any] | None = None,
    *,
    intermediate: tuple[str, ...] | None = ("intermediate_size", "intermediate_size"),
    head_dim: Literal["dims", "hidden", "stated"] = "dims",
) -> Header:
    """Read the header of an HF decoder config, in one order: hidden size, layers, attention heads / KV
    heads / head_dim, FFN width, vocabulary, tied embeddings.

    ``defaults`` holds the config class's defaults where the family states them in code (keys ``hidden``,
    ``layers``, ``heads``, ``kv``, ``head_dim``, ``inter``, ``vocab``, ``tie``); an explicit default also
    makes an explicit null read as absent. A key without one takes the generated defaults table
    (``hf_defaults.json``) and a null there is an error. ``intermediate`` is ``(field, *keys)`` of the FFN
    width (None: not read here). ``head_dim``: ``"dims"`` from the file (else the class default, else
    H / heads: :meth:`HFReader.attention_dims`); ``"hidden"`` always H / heads, with KV heads read only where
    the class has a default for them (GPT-NeoX: none, so equal to heads); ``"stated"`` heads, KV heads and
    head_dim each read as stated (Gemma: the class defaults are not derived from H)."""
    d = defaults or {}

    def given(name: str) -> dict[str, Any]:
        return {"default": d[name]} if name in d else {}

    h = r.int("hidden_size", "hidden_size", **given("hidden"))
    n_layers = r.int("num_layers", "num_hidden_layers", **given("layers"))
    if head_dim == "dims":
        heads, kv, hd = r.attention_dims(
            h, heads_default=d.get("heads"), kv_default=d.get("kv"), head_dim_default=d.get("head_dim")
        )
    elif head_dim == "hidden":
        heads = r.int("num_heads", "num_attention_heads", **given("heads"))
        kv = r.int("num_kv_heads", "num_key_value_heads", default=d["kv"]) if d.get("kv") else heads
        hd = h // heads
    else:
        heads = r.int("num_heads", "num_attention_heads", **given("heads"))
        kv = r.int("num_kv_heads", "num_key_value_heads", **given("kv"))
        hd = r.int("head_dim", "head_dim", **given("head_dim"))
    inter = r.int(intermediate[0], *intermediate[1:], **given("inter")) if intermediate else None
    vocab = r.int("vocab_size", "vocab_size", **given("vocab"))
    tie = tie_embeddings(r, d.get("tie"))
    return Header(h, n_layers, heads, kv, hd, inter, vocab, tie)


def head_dim_of(r: HFReader, hidden: int, heads: int, hidden_name: str) -> int:
    """``hidden // heads`` of a family without a head_dim key (GPT-2, BLOOM), whose attention splits the hidden
    size evenly: an error on the heads' key (``n_head``) where they do not divide it."""
    if hidden % heads:
        raise r.error(
            r.first_present(["num_attention_heads"]) or "n_head",
            f"{hidden_name} {hidden} is not divisible by n_head {heads}",
        )
    return hidden // heads


def layer_types_of(types: list[str] | None, n_layers: int) -> list[str]:
    """``layer_types`` fitted to ``n_layers``: extra entries dropped, missing ones full attention.

    transformers 5.24 rejects a list whose length is not ``num_hidden_layers``
    (``PreTrainedConfig.validate_layer_type``), so it has no reading of a missing entry. colint reports
    the mismatch (``spec.per_layer_lists`` -> a consistency finding) and reads every family's short list
    the same way: a layer the list does not name gets no window the file does not state."""
    types = list(types or [])[:n_layers]
    return types + ["full_attention"] * (n_layers - len(types))


def sliding_full_kinds(
    n_layers: int, types: list[str] | None, window: int | None, ffn: FFN, other_params: int, **attention
) -> tuple[list[LayerKind], list[int]]:
    """Layer kinds and pattern of a stack whose attention layers are ``sliding_attention`` or full, as
    ``layer_types`` says (:func:`layer_types_of`; sliding layers without a window are full attention).
    ``attention`` holds the Mixer fields shared by both kinds (heads, KV heads, head_dim, biases)."""
    kinds: list[LayerKind] = []
    index: dict[str, int] = {}
    pattern = []
    for t in layer_types_of(types, n_layers):
        attn = "sliding" if t == "sliding_attention" and window else "full"
        if attn not in index:
            index[attn] = len(kinds)
            kinds.append(
                LayerKind(
                    name=f"attention/{attn}+dense",
                    mixer=Mixer(
                        kind="attention", attention=attn, window=window if attn == "sliding" else None, **attention
                    ),
                    ffn=ffn,
                    other_params=other_params,
                )
            )
        pattern.append(index[attn])
    return kinds, pattern

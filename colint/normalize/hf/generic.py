"""A decoder of a family colint has no adapter for, read by the key conventions that transformers'
families share (an approximation: the spec's notes say so).

Used by :mod:`colint.normalize.hf.fallback` on transformers' reading of an unknown ``model_type``: the
reader's defaults are that config object's values, so a key the file omits means what the
family's config class makes of it (its ``head_dim``, ``num_key_value_heads``, ``mlp_only_layers``).
Reading a MoE model as a dense Llama would drop its experts (counts 60–98 % low on transformers
5.24's MoE families); with the conventions below those families count within 1 % of a meta-device
build (2.3 % for DeepSeek-V4's hash experts). What is read, first key present wins:

- attention: MLA when ``kv_lora_rank`` is set (``q_lora_rank`` null = plain q projection,
  ``qk_nope_head_dim`` + ``qk_rope_head_dim``, ``v_head_dim``, latent RMSNorms) as DeepSeek-V3;
  else q/k/v/o of ``num_attention_heads`` / ``num_key_value_heads`` / ``head_dim``, biases by
  ``attention_bias``; ``layer_types`` + ``sliding_window`` for sliding layers;
- routed experts: ``n_routed_experts`` | ``num_experts`` | ``num_local_experts`` |
  ``moe_num_experts``; top-k: ``num_experts_per_tok`` | ``num_experts_per_token`` | ``moe_topk`` |
  ``moe_k``; width: ``moe_intermediate_size`` | ``expert_ffn_hidden_size`` | else ``intermediate_size``;
- shared experts: ``n_shared_experts`` | ``num_shared_experts`` | ``moe_num_shared_experts`` of the
  expert width, else one of ``shared_expert_intermediate_size`` | ``shared_intermediate_size``;
- which layers are sparse: ``mlp_layer_types`` ("dense" / anything else sparse: transformers 5's
  per-layer list), else ``first_k_dense_replace`` | ``num_dense_layers`` dense layers first, else
  ``decoder_sparse_step`` with ``mlp_only_layers`` (Qwen-MoE), else every layer;
- two RMSNorms of width H per layer, a final one, a router ``[E, H]`` without bias.

Per-layer attention geometry: ``v_head_dim`` (when the config class has it) widens v and o as
transformers' families do (``num_kv_heads x v_head_dim``, ``num_heads x v_head_dim``). Each layer type
(``layer_types``: the file's, else the config class's own pattern) is sized on its own:

- keys that give one layer type its own geometry (``swa_num_key_value_heads``, ``sliding_head_dim``,
  ``global_head_dim``, ...; the file's, else the config class's) size that type's heads, KV heads,
  head dim or value dim: ``swa|sliding|local|attn_local`` the sliding layers, ``global|full|attn_global``
  the full ones;
- a projection the modelling code sizes by layer type as ``config.X * n if <sliding flag> else config.X``
  (MiMo-V2-Flash: ``num_key_value_heads * 2 if is_swa``) scales X on sliding layers, unless a key
  above already sizes it;
- attention sinks (``self.sinks``, one parameter per head): in every layer, or only on sliding layers
  when the code makes them conditional on a sliding flag;
- ``indexed_attention`` layers (DeepSeek Sparse Attention) are MLA layers with the lightning indexer
  (``index_n_heads``, ``index_head_dim``, ``index_topk``).

What it still cannot place it refuses, located at the key when the file has it and at ``model_type``
when only the config class or the code says it: other layer types (chunked, ...), or per-type code
it cannot read.

Not modelled (family-specific, so unknown here): q/k norms, extra gates, zero or hash experts,
score-correction parameters, different dense-layer widths than ``intermediate_size``.
"""

from __future__ import annotations

import re

from colint.errors import SpecError
from colint.normalize.format_reader import mla_attention, mla_norm_params, routed_experts
from colint.normalize.hf.base import HFReader, Header
from colint.normalize.hf.moe_common import KindTable, int_list, layer, nullable_int, str_list
from colint.normalize.hf.tie import tie_embeddings
from colint.normalize.model_spec import FFN, Mixer, ModelSpec

EXPERTS_KEYS = ("n_routed_experts", "num_experts", "num_local_experts", "moe_num_experts")
TOP_K_KEYS = ("num_experts_per_tok", "num_experts_per_token", "moe_topk", "moe_k")
EXPERT_WIDTH_KEYS = ("moe_intermediate_size", "expert_ffn_hidden_size")
SHARED_COUNT_KEYS = ("n_shared_experts", "num_shared_experts", "moe_num_shared_experts")
SHARED_WIDTH_KEYS = ("shared_expert_intermediate_size", "shared_intermediate_size")
NOTE = (
    "read through transformers' generic config by the key conventions its families share (no colint "
    "adapter for this model type); parameter counts approximate"
)


ATTENTION_TYPES = ("full_attention", "sliding_attention", "indexed_attention")
# keys that size one layer type's attention on its own (MiMo's swa_*, Gemma-4's global_*, ...)
_TYPE_GEOMETRY = re.compile(
    r"^(swa|sliding|local|global|full|attn_global|attn_local)_(num_)?"
    r"(attention_heads|key_value_heads|kv_heads|heads|head_dim|v_head_dim|qk_head_dim)$"
)
_SLIDING_PREFIXES = ("swa", "sliding", "local", "attn_local")
# the Mixer field each geometry suffix sizes
_GEOMETRY_FIELD = {
    "attention_heads": "num_heads",
    "heads": "num_heads",
    "key_value_heads": "num_kv_heads",
    "kv_heads": "num_kv_heads",
    "head_dim": "head_dim",
    "qk_head_dim": "head_dim",
    "v_head_dim": "v_head_dim",
}
_CONFIG_FIELD = {"num_heads": "num_attention_heads", "num_kv_heads": "num_key_value_heads", "head_dim": "head_dim"}
# a projection sized by layer type in the modelling code: "num_key_value_heads * 2 if is_swa else ..."
_CODE_PER_TYPE = re.compile(
    r"(num_key_value_heads|num_attention_heads|head_dim)[^\n=]*=[^\n]*\bif\b[^\n]*"
    r"(swa|sliding|layer_type|is_local|is_global)"
)
# the readable form: "X = config.X * n if <flag> else config.X" with a sliding flag
_CODE_SCALED = re.compile(
    r"(num_key_value_heads|num_attention_heads|head_dim)\s*=\s*config\.\1\s*\*\s*(\d+)\s+if\s+(\w+)\s+else\s+config\.\1"
)
_SLIDING_FLAG = re.compile(r"swa|sliding|local")


def code_traits(source: str | None) -> dict:
    """What the family's modelling source says about per-layer attention (read as text)."""
    if not source:
        return {}
    sinks = re.search(r"self\.sinks\s*=\s*nn\.Parameter\([^\n]*\)(\s+if\s+(\w+))?", source)
    per_type = _CODE_PER_TYPE.search(source)
    scaled = {
        _CONFIG_KEY_FIELD[m.group(1)]: int(m.group(2))
        for m in _CODE_SCALED.finditer(source)
        if _SLIDING_FLAG.search(m.group(3))
    }
    return {
        "sinks": bool(sinks),
        "sinks_per_type": bool(sinks and sinks.group(1)),
        "sinks_sliding_only": bool(sinks and sinks.group(2) and _SLIDING_FLAG.search(sinks.group(2))),
        "per_type_geometry": per_type.group(0).strip()[:80] if per_type else None,
        "sliding_scaled": scaled,  # Mixer field -> factor on sliding layers
    }


_CONFIG_KEY_FIELD = {v: k for k, v in _CONFIG_FIELD.items()}


def _type_geometry(r: HFReader) -> dict[bool, dict[str, tuple[str, int]]]:
    """{sliding?: {Mixer field: (key, value)}} from the per-layer-type keys the file states, else the config
    class's values for them."""
    keys = [k for k in (list(r.doc.get(r.prefix) or {}) if r.prefix else list(r.doc.data)) if isinstance(k, str)]
    keys += [k for k in r.defaults if k not in keys]
    out: dict[bool, dict[str, tuple[str, int]]] = {False: {}, True: {}}
    for k in keys:
        m = _TYPE_GEOMETRY.match(k)
        v = _value(r, k)
        if not m or v is None:
            continue
        if not r.has(k) and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            continue  # a class value that is no size (the file's own value is checked, located, by r.int)
        field = _GEOMETRY_FIELD[m.group(3)]
        out[m.group(1) in _SLIDING_PREFIXES][field] = (k, r.int(None, k))
    return out


def _refuse_unplaced_geometry(r: HFReader, types: list[str], code: dict, placed: dict) -> None:
    """Raise a located error for per-layer attention geometry the generic reading cannot place."""
    for i, t in enumerate(types):
        if t not in ATTENTION_TYPES:
            msg = (
                f"layer type {t!r} is not one the generic reading of model_type {r.model_type!r} can size "
                "(full, sliding or indexed attention); colint has no adapter for this family"
            )
            if r.has("layer_types"):
                raise r.error(("layer_types", i), msg)
            line, col = r.doc.location(r.prefix + ("model_type",))
            raise SpecError(
                f"'{r.key_name('model_type')}': its config class fills layer_types ({t!r} at layer {i}); {msg}",
                path=r.doc.path,
                line=line or 1,
                column=col or 1,
                key=r.key_name("model_type"),
            )
    hybrid = len(set(types)) > 1
    why = None
    scaled = set(code.get("sliding_scaled") or {})
    if code.get("per_type_geometry") and hybrid and not scaled and not placed[True]:
        why = f"its modelling code sizes attention by layer type ({code['per_type_geometry']!r})"
    elif code.get("sinks_per_type") and not code.get("sinks_sliding_only") and hybrid:
        why = "its modelling code gives only some layer types attention sinks"
    if why:
        line, col = r.doc.location(r.prefix + ("model_type",))
        raise SpecError(
            f"'{r.key_name('model_type')}' {r.model_type!r} mixes sliding and full attention layers and {why}: the "
            "generic reading cannot size each layer (colint has no adapter for this family)",
            path=r.doc.path,
            line=line or 1,
            column=col or 1,
            key=r.key_name("model_type"),
        )


def _value(r: HFReader, key: str):
    """The key's value in the file, else transformers' config class's value for it (None: neither)."""
    return r.doc.get(r.path(key)) if r.has(key) else r.defaults.get(key)


def _set(r: HFReader, key: str) -> bool:
    return _value(r, key) is not None


def _first(r: HFReader, keys: tuple) -> str | None:
    return next((k for k in keys if _set(r, k)), None)


def has_experts(r: HFReader) -> bool:
    """Routed experts: an expert count above 1, not switched off by ``is_moe`` / ``use_moe`` false (Doge)."""
    if any(_value(r, flag) is False for flag in ("is_moe", "use_moe")):
        return False
    experts = _first(r, EXPERTS_KEYS)
    v = _value(r, experts) if experts else None
    return isinstance(v, int) and not isinstance(v, bool) and v > 1


def _mixer(
    r: HFReader, h: int, window: int | None, sliding: bool, placed: dict | None = None, code: dict | None = None
) -> tuple[Mixer, int]:
    """(the token mixer, its parameters outside the GEMMs); ``placed``: this layer type's own geometry
    (:func:`_type_geometry`), ``code``: the modelling code's per-type scaling (:func:`code_traits`)."""
    bias = r.bool(None, "attention_bias", default=bool(r.defaults.get("attention_bias", False)))
    if _set(r, "kv_lora_rank"):
        heads = r.int("num_heads", "num_attention_heads")
        q_lora = r.int("q_lora_rank", "q_lora_rank") if _set(r, "q_lora_rank") else None
        nope = r.int("qk_nope_head_dim", "qk_nope_head_dim")
        rope = r.int("qk_rope_head_dim", "qk_rope_head_dim")
        v_dim = r.int("v_head_dim", "v_head_dim", default=nope)
        index = q_lora is not None and _set(r, "index_n_heads") and _set(r, "index_head_dim")  # DSA's indexer
        m = mla_attention(
            heads,
            heads,
            q_lora=q_lora,
            kv_lora=r.int("kv_lora_rank", "kv_lora_rank"),
            nope=nope,
            rope=rope,
            v_dim=v_dim,
            bias=bias,
            index_num_heads=r.int(None, "index_n_heads") if index else None,
            index_head_dim=r.int(None, "index_head_dim") if index else None,
            index_topk=r.int(None, "index_topk") if index and _set(r, "index_topk") else None,
        )
        return m, mla_norm_params(m)
    heads, kv, hd = r.attention_dims(
        h, kv_default=r.defaults.get("num_key_value_heads"), head_dim_default=r.defaults.get("head_dim")
    )
    # only where the config class has it: a v_head_dim key transformers' class does not define changes nothing
    v_dim = r.int("v_head_dim", "v_head_dim") if "v_head_dim" in r.defaults and _set(r, "v_head_dim") else None
    dims: dict[str, int | None] = {"num_heads": heads, "num_kv_heads": kv, "head_dim": hd, "v_head_dim": v_dim}
    own = placed or {}
    if sliding:
        for f, factor in ((code or {}).get("sliding_scaled") or {}).items():
            if f not in own and dims[f] is not None:
                dims[f] = int(dims[f] or 0) * factor
    for f, (_key, value) in own.items():
        dims[f] = value
    n_heads, n_kv, n_hd, v_dim = dims["num_heads"], dims["num_kv_heads"], dims["head_dim"], dims["v_head_dim"]
    assert n_hd is not None and n_heads is not None and n_kv is not None  # attention_dims gives all three
    m = Mixer(
        kind="attention",
        attention="sliding" if sliding else "full",
        window=window if sliding else None,
        num_heads=n_heads,
        num_kv_heads=n_kv,
        head_dim=n_hd,
        v_head_dim=v_dim if v_dim is not None and v_dim != n_hd else None,
        qkv_bias=bias,
        o_bias=bias,
    )
    return m, 0


def _sparse_layers(r: HFReader, n_layers: int) -> list[bool]:
    if not has_experts(r):
        return [False] * n_layers
    types = str_list(r, "mlp_layer_types") if r.has("mlp_layer_types") else None
    if types is None and isinstance(r.defaults.get("mlp_layer_types"), list):
        types = [str(t) for t in r.defaults["mlp_layer_types"]]
    if types is not None:
        if r.has("mlp_layer_types"):
            r.per_layer_lists["mlp_layer_types"] = len(types)
        return [i < len(types) and types[i] != "dense" for i in range(n_layers)]
    first_key = _first(r, ("first_k_dense_replace", "num_dense_layers"))
    if first_key is not None:
        first = r.int("first_k_dense_replace", first_key, minimum=0)
        return [i >= first for i in range(n_layers)]
    if _set(r, "decoder_sparse_step"):
        step = r.int(None, "decoder_sparse_step")
        stated = int_list(r, "mlp_only_layers")  # an explicit [] means none, not the class default
        dense_only = set(stated if stated is not None else r.defaults.get("mlp_only_layers") or [])
        return [i not in dense_only and (i + 1) % step == 0 for i in range(n_layers)]
    return [True] * n_layers


def build(r: HFReader, gated: bool = True, code: dict | None = None) -> ModelSpec:
    """The spec; ``gated``: whether the MLPs (dense, experts, shared) have a gate projection; ``code``: what the
    family's modelling source says about per-layer attention (:func:`code_traits`)."""
    h = r.int("hidden_size", "hidden_size")
    n_layers = r.int("num_layers", "num_hidden_layers")
    inter = r.int("intermediate_size", "intermediate_size")
    vocab = r.int("vocab_size", "vocab_size")
    tie = tie_embeddings(r)
    mlp_bias = r.bool(None, "mlp_bias", default=bool(r.defaults.get("mlp_bias", False)))
    window = nullable_int(r, "sliding_window", "sliding_window", r.defaults.get("sliding_window"))
    types = r.layer_types(n_layers)
    if types is None and isinstance(r.defaults.get("layer_types"), list):
        types = [str(t) for t in r.defaults["layer_types"]]  # the class's own pattern (MiMo-V2-Flash: 1 in 6 full)
    types = types or ["full_attention"] * n_layers
    if not window:
        types = ["full_attention" if t == "sliding_attention" else t for t in types]
    code = code or {}
    placed = _type_geometry(r)
    _refuse_unplaced_geometry(r, types, code, placed)

    sparse = _sparse_layers(r, n_layers)
    moe = None
    if any(sparse):
        e = r.int("num_experts", _first(r, EXPERTS_KEYS) or EXPERTS_KEYS[0])
        k = r.int("top_k", _first(r, TOP_K_KEYS) or TOP_K_KEYS[0])
        width_key = _first(r, EXPERT_WIDTH_KEYS)
        width = r.int("moe_intermediate_size", width_key) if width_key else inter
        count_key, shared_key = _first(r, SHARED_COUNT_KEYS), _first(r, SHARED_WIDTH_KEYS)
        n_shared = r.int("num_shared_experts", count_key, minimum=0) if count_key else 0
        shared_w = width
        if not n_shared and shared_key:
            shared_w = r.int("shared_expert_intermediate_size", shared_key, minimum=0)
            n_shared = 1 if shared_w else 0
        moe = routed_experts(
            e,
            k,
            width,
            num_shared_experts=n_shared,
            shared_intermediate_size=shared_w if n_shared else 0,
            shared_bias=mlp_bias,
            expert_gated=gated,
            shared_gated=gated,
        )
    dense = FFN(kind="dense", intermediate_size=inter, gated=gated, bias=mlp_bias)
    mixers = {s: _mixer(r, h, window, s, placed[s], code) for s in ({False, True} if window else {False})}
    table = KindTable()
    for i in range(n_layers):
        swa = i < len(types) and types[i] == "sliding_attention" and bool(window)
        mixer, mixer_other = mixers[swa]
        # one learned sink logit per head (gpt-oss style), or only on sliding layers (MiMo-V2-Flash)
        sinks = mixer.num_heads if code.get("sinks") and (swa or not code.get("sinks_sliding_only")) else 0
        ffn = dense
        if sparse[i]:
            assert moe is not None  # built above: any(sparse)
            ffn = moe
        table.add(layer(mixer, ffn, 2 * h + mixer_other + sinks))
    heads = table.kinds[0].mixer.num_heads
    return r.header_spec(
        Header(h, n_layers, heads, table.kinds[0].mixer.num_kv_heads, table.kinds[0].mixer.head_dim, inter, vocab, tie),
        table,
        sliding_window=window,
        extra_params=h,
        notes=[NOTE],
    )

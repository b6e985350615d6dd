"""Pieces shared by the non-Hugging-Face adapters (Megatron/NeMo, MaxText, GPT-NeoX, OLMo, Meta, colint).

``FormatReader`` is the located :class:`~colint.normalize.reader.Reader` plus the notes, per-layer
list lengths and ``spec()`` assembly every adapter needs; the helpers below build layer kinds
and apply the size rules (Meta's FFN rounding, Megatron's vocab padding) that several formats share.
"""

from __future__ import annotations

import math
from typing import Any

from colint.errors import SpecError
from colint.loading.document import Document, format_path
from colint.util.memo import keep
from colint.normalize.model_spec import FFN, LayerKind, Mixer, ModelSpec
from colint.normalize.reader import MISSING, Reader


class FormatReader(Reader):
    """A Reader that also collects notes and per-layer list lengths and assembles the ModelSpec."""

    def __init__(self, doc: Document, fmt: str, prefix: tuple = (), defaults: dict | None = None) -> None:
        super().__init__(doc, prefix, defaults=defaults or {}, aliases={})
        self.format = fmt
        self.notes: list[str] = []
        self.per_layer_lists: dict[str, int] = {}
        # (divisor, tp) when the format pads the vocab itself (Megatron/NeoX): CL202 fixes the divisor's key
        self.vocab_padding: tuple[int, int] | None = None

    @property
    def key_prefix(self) -> str:
        return "".join(f"{p}." for p in self.prefix)

    def sub(self, key: str) -> FormatReader:
        r = FormatReader(self.doc, self.format, self.path(key), defaults={})
        r.sources, r.notes, r.per_layer_lists = self.sources, self.notes, self.per_layer_lists
        return r

    def check_resolved(self, *keys: str) -> None:
        """Raise a located error when one of ``keys`` holds a ``${...}`` the loader could not resolve."""
        for k in keys:
            text = self._unresolved(k)
            if text is not None:
                raise self.error(k, f"interpolation {text} cannot be resolved offline; give the value")

    def opt(self, field: str | None, *keys: str, minimum: int = 1) -> int | None:
        """An optional positive integer: absent or null → None; unresolved ``${...}`` → located error."""
        self.check_resolved(*keys)
        if self.first_present(keys) is None:
            return None
        return self.int(field, *keys, minimum=minimum)

    def req(self, field: str | None, *keys: str, default: Any = MISSING, minimum: int = 1) -> int:
        self.check_resolved(*keys)
        return self.int(field, *keys, default=default, minimum=minimum)

    def name(self, *keys: str, default: str | None = None) -> str | None:
        """A string value, lower-cased (activation and norm names)."""
        self.check_resolved(*keys)
        v = self.str(None, *keys, default=default)
        return v.lower() if isinstance(v, str) else v

    def spec(self, *, hidden_size: int, num_layers: int, layers: list[LayerKind], **fields) -> ModelSpec:
        kinds, pattern = assemble(layers)
        notes = fields.pop("notes", []) + self.notes
        return ModelSpec(
            format=self.format,
            key_prefix=self.key_prefix,
            hidden_size=hidden_size,
            num_layers=num_layers,
            layer_kinds=kinds,
            layer_pattern=pattern,
            notes=notes,
            sources=dict(self.sources),
            per_layer_lists={**self.per_layer_lists, **fields.pop("per_layer_lists", {})},
            **fields,
        )


def assemble(layers: list[LayerKind]) -> tuple[list[LayerKind], list[int]]:
    """Per-layer kinds → (distinct kinds in order of first use, pattern of indices)."""
    kinds: list[LayerKind] = []
    index: dict[LayerKind, int] = {}
    by_id: dict[int, int] = {}  # the same object again (a list of one kind repeated): no hashing (layers holds it)
    pattern = []
    for k in layers:
        i = by_id.get(id(k))
        if i is None:
            i = index.get(k)
            if i is None:
                i = index[k] = len(kinds)
                kinds.append(k)
            by_id[id(k)] = i
        pattern.append(i)
    return kinds, pattern


def attention(
    heads: int,
    kv_heads: int,
    head_dim: int,
    *,
    window: int | None = None,
    attn: str | None = None,
    qkv_bias: bool = False,
    o_bias: bool = False,
    fused_qkv: bool = False,
    v_head_dim: int | None = None,
) -> Mixer:
    """An attention mixer; ``window`` alone makes it sliding-window attention."""
    attn = attn or ("sliding" if window else "full")
    return Mixer(
        kind="attention",
        attention=attn,
        window=window if attn != "full" else None,
        num_heads=heads,
        num_kv_heads=kv_heads,
        head_dim=head_dim,
        v_head_dim=v_head_dim,
        qkv_bias=qkv_bias,
        o_bias=o_bias,
        fused_qkv=fused_qkv,
    )


def heads_attention(heads: int, kv_heads: int, head_dim: int, **fields: Any) -> Mixer:
    """Softmax attention of ``heads`` query heads and ``kv_heads`` KV heads of ``head_dim``; ``fields`` are the
    Mixer's other fields, the ones a family sets (biases, window, gates)."""
    return Mixer(kind="attention", num_heads=heads, num_kv_heads=kv_heads, head_dim=head_dim, **fields)


def mamba2_mixer(heads: int, d_inner: int, d_state: int, n_groups: int, conv_kernel: int, **fields: Any) -> Mixer:
    """A Mamba-2 mixer: ``heads`` SSM heads over ``d_inner`` channels, state ``d_state`` in ``n_groups`` groups,
    a causal conv of ``conv_kernel`` taps; ``fields`` are the Mixer's other fields (projection biases)."""
    return Mixer(
        kind="mamba",
        mamba_version=2,
        num_heads=heads,
        d_inner=d_inner,
        d_state=d_state,
        n_groups=n_groups,
        conv_kernel=conv_kernel,
        **fields,
    )


def gated_deltanet(
    k_heads: int, v_heads: int, k_head_dim: int, v_head_dim: int, conv_kernel: int, **fields: Any
) -> tuple[Mixer, int]:
    """Gated DeltaNet linear attention (Qwen3-Next, Qwen3.5) and its parameters outside GEMMs: a depthwise conv1d
    of ``conv_kernel`` taps over the 2·key + value channels (no bias), ``dt_bias`` and ``A_log`` (one per value
    head), a gated RMSNorm of the value head dim. ``fields`` are the Mixer's other fields (``split_in_proj``)."""
    mixer = Mixer(
        kind="linear_attention",
        num_k_heads=k_heads,
        num_v_heads=v_heads,
        k_head_dim=k_head_dim,
        v_head_dim=v_head_dim,
        conv_kernel=conv_kernel,
        **fields,
    )
    other = (2 * k_heads * k_head_dim + v_heads * v_head_dim) * conv_kernel + 2 * v_heads + v_head_dim
    return mixer, other


def routed_experts(num_experts: int, top_k: int, width: int, **fields: Any) -> FFN:
    """A MoE FFN: ``top_k`` of ``num_experts`` experts of FFN width ``width`` per token; ``fields`` are the
    FFN's other fields (shared experts, biases, gates)."""
    return FFN(kind="moe", num_experts=num_experts, top_k=top_k, expert_intermediate_size=width, **fields)


def group_limited_routing(
    r, num_experts: int, top_k: int, groups: int, per_token: int, keys: tuple[str, str]
) -> dict[str, int]:
    """The FFN fields of a router whose token picks its top-k within its ``per_token`` best of ``groups`` contiguous
    expert groups (DeepSeek-V3's node-limited routing), where that limit binds ({} where per_token = groups), after
    checking what the router needs: ``groups`` divides the experts (the scores are viewed [groups, E / groups]) and a
    token's top-k fits in its groups. ``keys``: the file's (groups, per-token) keys, named by the errors."""
    g_key, t_key = keys
    if num_experts % groups:
        raise r.error(g_key, f"'{r.key_name(g_key)}' {groups} does not divide the {num_experts} routed experts")
    if per_token > groups:
        raise r.error(
            t_key, f"'{r.key_name(t_key)}' {per_token} is more than the {groups} groups of '{r.key_name(g_key)}'"
        )
    if top_k > per_token * (num_experts // groups):
        raise r.error(
            t_key,
            f"'{r.key_name(t_key)}' {per_token} groups of {num_experts // groups} experts cannot hold a "
            f"token's top-{top_k}",
        )
    return {"expert_groups": groups, "groups_per_token": per_token} if per_token < groups else {}


def mla_attention(
    heads: int,
    kv_heads: int,
    *,
    q_lora: int | None,
    kv_lora: int,
    nope: int,
    rope: int,
    v_dim: int,
    bias: bool = False,
    **fields: Any,
) -> Mixer:
    """Multi-head latent attention (DeepSeek-V2/V3): queries through a rank-``q_lora`` latent (None: one plain
    projection), keys and values through a rank-``kv_lora`` latent; heads of ``nope`` + ``rope`` dimensions for
    q·k and ``v_dim`` for values; ``bias`` on q/kv and o. ``fields``: the Mixer's other fields (DSA's indexer)."""
    return Mixer(
        kind="mla",
        num_heads=heads,
        num_kv_heads=kv_heads,
        head_dim=nope + rope,
        v_head_dim=v_dim,
        qkv_bias=bias,
        o_bias=bias,
        q_lora_rank=q_lora,
        kv_lora_rank=kv_lora,
        qk_nope_head_dim=nope,
        qk_rope_head_dim=rope,
        **fields,
    )


def mla(heads: int, *, q_lora_rank: int | None, kv_lora_rank: int, nope: int, rope: int, v_head_dim: int) -> Mixer:
    return mla_attention(
        heads, heads, q_lora=q_lora_rank or None, kv_lora=kv_lora_rank, nope=nope, rope=rope, v_dim=v_head_dim
    )


def mla_norm_params(m: Mixer) -> int:
    """MLA's RMSNorms on the compressed q and kv latents (DeepSeek-V2/V3), and the DSA indexer's k_norm where the
    layer has an indexer (a LayerNorm with bias over index_head_dim: DeepSeek-V3.2, GLM-5)."""
    return (m.q_lora_rank or 0) + (m.kv_lora_rank or 0) + 2 * (m.index_head_dim or 0)


def kind_name(m: Mixer, f: FFN) -> str:
    if m.kind == "attention":
        mix = f"attention/{m.attention}"
    elif m.kind == "mla" and m.index_topk and not m.index_num_heads:
        mix = "mla/shared-topk"  # DSA without its own indexer: reuses an earlier layer's top-k (GLM-5 "shared")
    else:
        mix = m.kind
    return f"{mix}+{f.kind}"


# (id(mixer), id(ffn), other_params, name) -> the LayerKind built from them. Adapters build a model's
# layers in a loop from a few mixer and FFN objects: one LayerKind per combination instead of one per
# layer (61 for DeepSeek-V3), each of which KindTable/assemble would hash field by field. A hit is
# checked by identity (the kind holds its mixer and FFN, so their ids cannot be reused while cached).
_LAYERS: dict[tuple, LayerKind] = {}
_LAYERS_MAX = 512


def layer(m: Mixer, f: FFN, other_params: int, name: str | None = None) -> LayerKind:
    key = (id(m), id(f), other_params, name)
    kind = _LAYERS.get(key)
    if kind is not None and kind.mixer is m and kind.ffn is f:
        return kind
    return keep(
        _LAYERS, key, LayerKind(name=name or kind_name(m, f), mixer=m, ffn=f, other_params=other_params), _LAYERS_MAX
    )


def round_up(x: int, multiple: int) -> int:
    """``x`` rounded up to a multiple of ``multiple`` (> 0): every stage's padding and alignment arithmetic."""
    return multiple * ((x + multiple - 1) // multiple)


def llama_ffn_hidden(dim: int, multiple_of: int, ffn_dim_multiplier: float | None) -> int:
    """FFN width exactly as Meta's reference ``FeedForward`` derives it (llama/model.py)."""
    hidden = 4 * dim
    hidden = int(2 * hidden / 3)
    if ffn_dim_multiplier is not None:
        hidden = int(ffn_dim_multiplier * hidden)
    return multiple_of * ((hidden + multiple_of - 1) // multiple_of)


def megatron_padded_vocab(vocab: int, divisible_by: int, tp: int) -> int:
    """Megatron-LM / NeMo ``_vocab_size_with_padding``: pad to a multiple of divisible_by × TP."""
    return round_up(vocab, divisible_by * tp)


def literal_list(r: Reader, key: str) -> list | None:
    """A per-layer list given either as a list or as the text of a Python/JSON list
    (ExecuTorch writes ``"layer_types": "['sliding_attention', ...]"``)."""
    if not r.has(key):
        return None
    v = r.doc.get(r.path(key))
    if isinstance(v, list):
        return v
    if isinstance(v, str) and v.strip().startswith("["):
        import ast

        try:
            parsed = ast.literal_eval(v.strip()) if len(v) < 100_000 else None
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            parsed = None
        if isinstance(parsed, list):
            return parsed
    raise r.error(key, f"'{r.key_name(key)}' must be a list (or the text of one)")


def safe_int_list_expr(text: str) -> list[int] | None:
    """Evaluate Megatron's ``--moe-layer-freq`` list expressions such as ``([0]*3+[1]*1)*3``
    without ``eval``: only list literals of ints, ``+`` and ``*`` by an int are allowed."""
    import ast

    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return None

    def ev(node):
        if isinstance(node, ast.List):
            out = [ev(e) for e in node.elts]
            if not all(isinstance(x, int) for x in out):
                raise ValueError
            return out
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mult)):
            a, b = ev(node.left), ev(node.right)
            if isinstance(node.op, ast.Add) and isinstance(a, list) and isinstance(b, list):
                return a + b
            if isinstance(node.op, ast.Mult):
                if isinstance(a, list) and isinstance(b, int) and 0 <= b <= 10_000:
                    return a * b
                if isinstance(b, list) and isinstance(a, int) and 0 <= a <= 10_000:
                    return b * a
        raise ValueError

    try:
        v = ev(tree.body)
    except (ValueError, RecursionError):
        return None
    return v if isinstance(v, list) and len(v) <= 100_000 else None


def positive_float(r: Reader, *keys: str) -> float | None:
    k = r.first_present(keys)
    if k is None:
        return None
    v = r.float(None, k)
    if not math.isfinite(v) or v <= 0:
        raise r.error(k, f"'{r.key_name(k)}' must be a positive number, got {v}")
    return v


def raise_at(doc: Document, path: tuple, message: str) -> SpecError:
    line, col = doc.location(path)
    return SpecError(message, path=doc.path, line=line, column=col, key=format_path(path) or None)

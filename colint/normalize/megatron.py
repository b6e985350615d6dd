"""Megatron-LM / Megatron-core / NeMo model sections → ModelSpec.

Accepted layouts: a NeMo (1.x) or NeMo-Framework-Launcher training config, whose model sits
under ``model:``; a Megatron-LM YAML with a ``language_model:`` section; or a bare section of
Megatron-core ``TransformerConfig`` keys / Megatron-LM argument names (underscored).

Parameters follow Megatron-core's ``GPTModel``: per layer a fused ``linear_qkv`` of width
``(heads + 2·query_groups)·kv_channels`` (bias when ``add_bias_linear``/``bias`` or
``add_qkv_bias``/``qkv_bias``), ``linear_proj``, ``fc1`` (2×ffn when the activation is gated),
``fc2``, two norms of width H (LayerNorm and layernorm1p carry a bias, RMSNorm does not; NeMo's
Falcon layer with ``parallel_attention`` and not ``new_decoder_architecture`` has one), optional
per-head q/k norms; a final norm; word embeddings, a learned position table for
``learned_absolute`` and an output layer unless ``share_embeddings_and_output_weights``.
MoE layers add a router (E×H, no bias), E expert MLPs of ``moe_ffn_hidden_size`` and an optional
shared expert of ``moe_shared_expert_intermediate_size`` (the total width of all shared experts).

The vocabulary comes from the tokenizer, not the file: without ``--vocab-size`` the spec has
``vocab_size=None`` and the counts exclude embedding and output layer. With it, the size is
padded as Megatron does (``_vocab_size_with_padding``: a multiple of
``make_vocab_size_divisible_by × tensor_model_parallel_size``).
"""

from __future__ import annotations

from colint.loading.document import Document
from colint.normalize.format_reader import (
    FormatReader,
    attention,
    group_limited_routing,
    layer,
    megatron_padded_vocab,
    mla,
    mla_norm_params,
    raise_at,
    routed_experts,
    safe_int_list_expr,
)
from colint.normalize.model_spec import FFN, Mixer, ModelSpec

ACCEPTS_VOCAB_SIZE = True  # normalize(doc, vocab_size=...) applies --vocab-size itself

# Activations whose MLP has a gate (fc1 outputs 2×ffn); NeMo spells them with and without "fast-".
GATED = {"swiglu", "fast-swiglu", "geglu", "fast-geglu", "reglu", "fast-reglu", "glu"}
NOT_GATED = {"gelu", "squared-relu", "relu", "silu", "approx-gelu", "openai-gelu", "quick-gelu", "fast-gelu"}
RMS = {"rmsnorm"}
LAYERNORM = {"layernorm", "layernorm1p", "low_precision_layernorm", "layernorm_p1"}
# Keys only GPT-NeoX configs use (NeoX also accepts hidden_size / num_layers with underscores).
_NEOX_MARKERS = (
    "pos_emb",
    "pos-emb",
    "rotary_pct",
    "rotary-pct",
    "gpt_j_residual",
    "gpt-j-residual",
    "no_weight_tying",
    "no-weight-tying",
    "attention_config",
    "attention-config",
    "model_parallel_size",
    "model-parallel-size",
    "pipe_parallel_size",
    "pipe-parallel-size",
)
_SECTIONS = ("model", "language_model")


def _root(doc: Document, strict: bool = True) -> tuple | None:
    """Where the model section is. ``strict`` (detection) refuses files with GPT-NeoX-only keys;
    a forced ``--input-format megatron`` reads any top-level section with the three core keys."""
    data = doc.data
    if not isinstance(data, dict):
        return None
    for key in _SECTIONS:
        sub = data.get(key)
        if isinstance(sub, dict) and "hidden_size" in sub and ("num_layers" in sub or "num_attention_heads" in sub):
            return (key,)
    if all(k in data for k in ("hidden_size", "num_layers", "num_attention_heads")) and not (
        strict and (any(m in data for m in _NEOX_MARKERS) or "num_hidden_layers" in data)
    ):
        return ()
    return None


def detect(doc: Document) -> bool:
    return _root(doc) is not None


def normalize(doc: Document, vocab_size: int | None = None) -> ModelSpec:
    r = FormatReader(doc, "megatron", _section(doc))
    h = r.req("hidden_size", "hidden_size")
    n_layers = r.req("num_layers", "num_layers")
    heads = r.req("num_heads", "num_attention_heads")
    groups = _query_groups(r, heads)
    head_dim = _kv_channels(r, h, heads)
    act, gated = _activation(r)
    ffn = _ffn_width(r, h, gated)
    linear_bias = _linear_bias(r)
    qkv_bias = linear_bias or bool(r.bool(None, "add_qkv_bias", "qkv_bias", default=False))
    norm_w, other = _norm_params(r, h, head_dim)
    window = _window(r)
    mixer = attention(heads, groups, head_dim, window=window, qkv_bias=qkv_bias, o_bias=linear_bias, fused_qkv=True)
    if r.bool(None, "multi_latent_attention", default=False):
        mixer = _mla(r, heads)
        other += mla_norm_params(mixer)
        groups, head_dim = heads, mixer.head_dim

    dense = FFN(kind="dense", intermediate_size=ffn, gated=gated, bias=linear_bias)
    experts = r.opt("num_experts", "num_moe_experts", "num_experts")
    layers = [layer(mixer, dense, other)] * n_layers
    if experts:
        layers = _moe_layers(r, mixer, dense, other, n_layers, experts, ffn, gated, linear_bias)

    positions = _position_table(r)
    tie = _tied(r)
    vocab = _vocab(r, vocab_size)
    max_pos = r.opt("max_position_embeddings", "max_position_embeddings", "encoder_seq_length")
    mtp = r.opt("mtp_layers", "mtp_num_layers") or 0
    if mtp:
        r.notes.append(f"{mtp} MTP layer(s) not counted")
    return r.spec(
        hidden_size=h,
        num_layers=n_layers,
        layers=layers,
        model_type=_model_type(doc, r),
        vocab_size=vocab,
        tie_word_embeddings=tie,
        max_position_embeddings=max_pos,
        position_embeddings=positions,
        vocab_padding=r.vocab_padding,
        num_heads=heads,
        num_kv_heads=groups,
        head_dim=head_dim,
        intermediate_size=ffn,
        hidden_act=act,
        sliding_window=window,
        mtp_layers=mtp,
        extra_params=norm_w,
    )


def _section(doc: Document) -> tuple:
    """The model section's path, or a located error that says where it was looked for."""
    root = _root(doc, strict=False)
    if root is None:
        sub = next((k for k in _SECTIONS if isinstance(doc.get((k,)), dict)), None)
        raise raise_at(
            doc,
            (sub,) if sub else (),
            "no Megatron model section: expected hidden_size, num_layers and num_attention_heads"
            + (f" under '{sub}:'" if sub else " (at the top level or under 'model:')"),
        )
    return root


def _query_groups(r: FormatReader, heads: int) -> int:
    """KV heads: ``num_query_groups`` unless ``group_query_attention`` is false, else one per query head."""
    groups = r.opt("num_kv_heads", "num_query_groups")
    if groups is not None and r.has("group_query_attention") and not r.bool(None, "group_query_attention"):
        r.notes.append("num_query_groups ignored: group_query_attention is false")
        groups = None
    if groups is None:
        groups = heads
        r.record("num_kv_heads", "num_query_groups", default=True)
    return groups


def _kv_channels(r: FormatReader, h: int, heads: int) -> int:
    """The head dimension: ``kv_channels``, else hidden_size / heads (an error where they do not divide)."""
    head_dim = r.opt("head_dim", "kv_channels")
    if head_dim is None:
        if h % heads:
            raise r.error(
                "num_attention_heads",
                f"hidden_size {h} is not divisible by num_attention_heads {heads} and kv_channels is not given",
            )
        head_dim = h // heads
        r.record("head_dim", "kv_channels", default=True)
    return head_dim


def _activation(r: FormatReader) -> tuple[str, bool]:
    """(activation, gated): ``activation`` by name, else ``gated_linear_unit`` / ``swiglu``."""
    act = r.name("activation")
    if act is None:
        gated = bool(r.bool(None, "gated_linear_unit", default=False) or r.bool(None, "swiglu", default=False))
        act = "swiglu" if gated else "gelu"
    elif act in GATED:
        gated = True
    elif act in NOT_GATED:
        gated = False
    else:
        raise r.error(
            "activation", f"unknown activation {act!r}; expected one of {', '.join(sorted(GATED | NOT_GATED))}"
        )
    return act, gated


def _ffn_width(r: FormatReader, h: int, gated: bool) -> int:
    ffn = r.opt("intermediate_size", "ffn_hidden_size")
    if ffn is None:
        # Megatron-core TransformerConfig / Megatron-LM arguments.py default.
        ffn = int((4 * h * 2 / 3) / 64) * 64 if gated and r.has("swiglu") else 4 * h
        r.record("intermediate_size", "ffn_hidden_size", default=True)
        r.notes.append(f"ffn_hidden_size not given: Megatron's default {ffn}")
    return ffn


def _norm_params(r: FormatReader, h: int, head_dim: int) -> tuple[int, int]:
    """(one norm's parameters, a layer's norm parameters): LayerNorm or RMSNorm, NeMo's Falcon layer with one
    input norm, optional per-head q/k norms."""
    norm = r.name("normalization", default="layernorm")
    if norm not in RMS | LAYERNORM:
        raise r.error("normalization", f"unknown normalization {norm!r}; expected LayerNorm, layernorm1p or RMSNorm")
    norm_w = h if norm in RMS else 2 * h  # LayerNorm: weight and bias
    norms_per_layer = 2
    if "falcon" in str(r.raw("name") or "") and isinstance(r.raw("mcore_customization_config"), dict):
        c = r.sub("mcore_customization_config")
        if c.bool(None, "parallel_attention", default=False) and not c.bool(
            None, "new_decoder_architecture", default=False
        ):
            norms_per_layer = 1  # NeMo's Falcon layer: one input LayerNorm feeds attention and MLP
    block_type = r.name("transformer_block_type", default="pre_ln")
    if block_type != "pre_ln":
        r.notes.append(f"transformer_block_type {block_type}: norms counted as pre-LN")
    qk_norm = 0
    if r.bool(None, "qk_layernorm", default=False):
        qk_norm = 2 * head_dim * (1 if norm in RMS else 2)
    return norm_w, norms_per_layer * norm_w + qk_norm


def _window(r: FormatReader) -> int | None:
    """The sliding window: the first entry of ``window_size`` where it is a positive integer."""
    ws = r.raw("window_size")
    if isinstance(ws, list) and ws and isinstance(ws[0], int) and not isinstance(ws[0], bool) and ws[0] > 0:
        r.record("sliding_window", ("window_size", 0))
        return ws[0]
    return None


def _mla(r: FormatReader, heads: int) -> Mixer:
    """Megatron-core MLASelfAttention: q down/up (or one q projection), kv down to the latent + the shared RoPE
    key, kv up, linear_proj; RMSNorms on the q and kv latents."""
    q_lora = r.opt("q_lora_rank", "q_lora_rank")
    return mla(
        heads,
        q_lora_rank=q_lora,
        kv_lora_rank=r.req("kv_lora_rank", "kv_lora_rank", default=512),
        nope=r.req("qk_nope_head_dim", "qk_head_dim", default=128),
        rope=r.req("qk_rope_head_dim", "qk_pos_emb_head_dim", default=64),
        v_head_dim=r.req("v_head_dim", "v_head_dim", default=128),
    )


def _position_table(r: FormatReader) -> int:
    """Rows of the learned position table (``learned_absolute``), else 0."""
    pos_type = r.name("position_embedding_type", default="learned_absolute")
    if pos_type != "learned_absolute":
        return 0
    if r.first_present(("encoder_seq_length", "max_position_embeddings", "seq_length")) is None:
        raise r.error(
            "position_embedding_type" if r.has("position_embedding_type") else "hidden_size",
            "learned_absolute position embeddings need encoder_seq_length or "
            "max_position_embeddings (the rows of the position table)",
        )
    positions = r.req(None, "encoder_seq_length", "max_position_embeddings", "seq_length")
    r.notes.append(f"learned absolute positions: a {positions}-row position table")
    return positions


def _linear_bias(r: FormatReader) -> bool:
    if r.has("add_bias_linear") or r.has("bias"):
        return bool(r.bool(None, "add_bias_linear", "bias"))
    if r.has("disable_bias_linear"):
        return not r.bool(None, "disable_bias_linear")
    return True  # Megatron-core TransformerConfig.add_bias_linear and NeMo's `bias` default


def _tied(r: FormatReader) -> bool:
    if r.has("share_embeddings_and_output_weights"):
        return bool(r.bool("tie_word_embeddings", "share_embeddings_and_output_weights"))
    if r.has("untie_embeddings_and_output_weights"):
        return not r.bool(None, "untie_embeddings_and_output_weights")  # inverse: not a tie source
    r.record("tie_word_embeddings", "share_embeddings_and_output_weights", default=True)
    return True  # Megatron's default: the output layer reuses the word embeddings


def _vocab(r: FormatReader, given: int | None) -> int | None:
    padded = r.opt("vocab_size", "padded_vocab_size")
    if padded is not None:
        return padded
    raw = r.opt(None, "vocab_size")
    if raw is None and given is None:
        r.notes.append(
            "vocab size comes from the tokenizer, not this file: parameter counts exclude the "
            "embedding and output layer (pass --vocab-size)"
        )
        return None
    raw = raw if raw is not None else given
    assert raw is not None  # returned above when neither the file nor --vocab-size gives it
    div = r.req(None, "make_vocab_size_divisible_by", default=128)
    tp = r.req(None, "tensor_model_parallel_size", default=1)
    padded = megatron_padded_vocab(raw, div, tp)
    r.vocab_padding = (div, tp)  # CL202 fixes the divisor, the key this format reads, not a vocab key
    r.record("vocab_divisible_by", "make_vocab_size_divisible_by")
    # No source points at make_vocab_size_divisible_by: its value is the multiple, not the vocab, so an
    # edit "vocab_size old → new" must not land there. With the vocab from --vocab-size there is no key.
    if r.has("vocab_size"):
        r.record("vocab_size", "vocab_size")
    src = "vocab_size" if r.has("vocab_size") else "--vocab-size"
    if padded != raw:
        r.notes.append(
            f"vocab {raw} ({src}) padded to {padded}: a multiple of make_vocab_size_divisible_by {div}"
            f" x tensor_model_parallel_size {tp}, as Megatron pads it"
        )
    else:
        r.notes.append(f"vocab {raw} from {src} (already a multiple of {div} x tp {tp})")
    return padded


def _moe_layers(
    r: FormatReader, mixer, dense: FFN, other: int, n_layers: int, experts: int, ffn: int, gated: bool, bias: bool
) -> list:
    top_k = r.req("top_k", "moe_router_topk", default=2)
    expert_ffn = r.opt("moe_intermediate_size", "moe_ffn_hidden_size") or ffn
    if not r.has("moe_ffn_hidden_size"):
        r.record("moe_intermediate_size", "ffn_hidden_size")
    shared = r.opt("shared_expert_intermediate_size", "moe_shared_expert_intermediate_size") or 0
    # megatron-core's group-limited routing (--moe-router-num-groups, --moe-router-group-topk: DeepSeek-V3's)
    groups = r.opt("expert_groups", "moe_router_num_groups")
    route = {}
    if groups:
        per_token = r.req("groups_per_token", "moe_router_group_topk")
        route = group_limited_routing(
            r, experts, top_k, groups, per_token, ("moe_router_num_groups", "moe_router_group_topk")
        )
    moe = routed_experts(
        experts,
        top_k,
        expert_ffn,
        gated=gated,
        expert_gated=gated,
        expert_bias=bias,
        num_shared_experts=1 if shared else 0,
        shared_intermediate_size=shared,
        shared_gated=gated,
        shared_bias=bias,
        shared_expert_gate=bool(shared) and bool(r.bool(None, "moe_shared_expert_gate", default=False)),
        **route,
    )
    pattern = _moe_pattern(r, n_layers)
    return [layer(mixer, moe if is_moe else dense, other) for is_moe in pattern]


def _moe_pattern(r: FormatReader, n_layers: int) -> list[bool]:
    """Megatron-core: an int N makes every N-th layer (0, N, 2N, ...) MoE; a list gives one 0/1 per layer;
    Megatron-LM also accepts the text of a list expression such as ``([0]*3+[1]*1)*3``."""
    r.check_resolved("moe_layer_freq")
    v = r.raw("moe_layer_freq")
    if v is None:
        return [True] * n_layers
    if isinstance(v, str):
        parsed = safe_int_list_expr(v)
        if parsed is None:
            raise r.error(
                "moe_layer_freq",
                f"cannot read moe_layer_freq {v!r}: expected an integer or a list expression such as ([0]*1+[1]*3)*12",
            )
        v = parsed
    if isinstance(v, int) and not isinstance(v, bool):
        if v < 1:
            raise r.error("moe_layer_freq", f"'{r.key_name('moe_layer_freq')}' must be at least 1, got {v}")
        r.record("moe_layer_freq", "moe_layer_freq")
        return [i % v == 0 for i in range(n_layers)]
    if isinstance(v, list) and all(isinstance(x, int) and not isinstance(x, bool) and x in (0, 1) for x in v):
        r.record("moe_layer_freq", "moe_layer_freq")
        r.per_layer_lists["moe_layer_freq"] = len(v)
        if len(v) != n_layers:
            r.notes.append(f"moe_layer_freq lists {len(v)} entries for {n_layers} layers")
        return [bool(x) for x in v[:n_layers]] + [False] * max(0, n_layers - len(v))
    raise r.error("moe_layer_freq", "moe_layer_freq must be an integer or a list of 0/1 per layer")


def _model_type(doc: Document, r: FormatReader) -> str | None:
    for path in (r.prefix + ("name",), ("exp_manager", "name"), ("name",)):
        v = doc.get(path)
        if isinstance(v, str) and v.startswith("megatron_"):
            return v
    return None

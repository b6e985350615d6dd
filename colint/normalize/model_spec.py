"""ModelSpec: one schema for every source format.

A model is a stack of ``num_layers`` layers. Layers that are built alike share one
:class:`LayerKind`; ``layer_pattern[i]`` is the index of layer *i*'s kind. Each kind has a
token mixer (attention of some flavour, MLA, linear attention, Mamba, a plain linear
replacement, or nothing) and a channel mixer (dense FFN, MoE, or nothing).

Every dimension that a rule may ask the user to change remembers where it came from:
``ModelSpec.sources`` maps a field path (``"hidden_size"``, ``"ffn.intermediate_size"``,
``"layers[3].ffn.intermediate_size"``) to the config key, line and column. Fields that are
not in the file (defaults, derived values) carry the key the user would add, with no line.
"""

from __future__ import annotations

from dataclasses import field
from typing import Literal, Optional

from colint.loading.witness import WeightsWitness
from colint.util.plain_data import HashSlot, keeps_hash
from colint.util.records import dataclass

PositiveInt = int  # bounds are enforced by the adapters' readers, which know the key to blame


@dataclass(frozen=True, kw_only=True, slots=True)
class Source:
    """Where a value of the spec came from: its key in the file, with line and column when it is there."""

    key: str  # dotted key path in the file, e.g. "text_config.intermediate_size"
    line: Optional[int] = None
    column: Optional[int] = None
    default: bool = False  # the value was not in the file: a default or a derived value
    # The value is computed from ``key`` (Meta's FFN width from multiple_of, MaxText gemma2's layers from
    # the pair count): findings point at that key, but it does not hold the value, so no fix writes it there.
    derived: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class Mixer:
    """The token mixer of a layer."""

    kind: Literal["attention", "mla", "linear_attention", "mamba", "linear", "short_conv", "none"]
    # attention / mla
    attention: str = "full"  # "full", "sliding" or "chunked" (the adapters read it from strings)
    window: Optional[int] = None  # sliding window or chunk size, tokens
    num_heads: int = 0
    num_kv_heads: int = 0
    head_dim: int = 0  # q/k head dim (MLA: nope + rope)
    v_head_dim: Optional[int] = None  # when it differs from head_dim
    qkv_bias: bool = False
    o_bias: bool = False
    fused_qkv: bool = False  # one weight for q, k and v (GPT-2, BLOOM, Falcon, phi3, ...)
    # MLA (DeepSeek-V2/V3, Kimi K2, MiniCPM3)
    q_lora_rank: Optional[int] = None  # None = plain q projection
    kv_lora_rank: Optional[int] = None
    qk_nope_head_dim: Optional[int] = None
    qk_rope_head_dim: Optional[int] = None
    # linear attention (Gated DeltaNet) and Mamba
    num_k_heads: Optional[int] = None
    num_v_heads: Optional[int] = None
    k_head_dim: Optional[int] = None
    d_inner: Optional[int] = None  # Mamba: expand * hidden (or heads * head_dim)
    d_state: Optional[int] = None
    n_groups: Optional[int] = None
    conv_kernel: Optional[int] = None
    dt_rank: Optional[int] = None  # Mamba-1
    mamba_version: Optional[int] = None
    in_bias: bool = False
    out_bias: bool = False
    # Qwen3-Next / Qwen3.5 gated attention: q_proj also emits a per-channel output gate (N doubles).
    gated_q: bool = False
    # Gemma-4: a KV-sharing layer has no k/v projections (it reuses an earlier layer's cache);
    # attention_k_eq_v full layers have no v projection (values are the keys).
    kv_shared: bool = False
    v_from_k: bool = False
    # Gated DeltaNet input projections as separate GEMMs qkv / z / b / a (Qwen3.5) instead of qkvz / ba.
    split_in_proj: bool = False
    # DeepSeek Sparse Attention (DeepSeek-V3.2, GLM-5): the lightning indexer (wq_b from the q latent, wk,
    # weights_proj, its key cache) on a layer that runs it; a layer that reuses an earlier layer's top-k (GLM-5's
    # "shared" indexer layers) has none. ``index_topk``: keys each query attends (on every DSA layer).
    index_num_heads: Optional[int] = None
    index_head_dim: Optional[int] = None
    index_topk: Optional[int] = None
    # linear_attention flavour: None = Gated DeltaNet; "lightning" = MiniMax-01 lightning attention
    # (qkv_proj H -> 3·heads·head_dim, output_gate H -> heads·head_dim, out_proj; state heads·d·d).
    linear_variant: Optional[str] = None


@dataclass(frozen=True, kw_only=True, slots=True)
class FFN:
    """The channel mixer of a layer."""

    kind: Literal["dense", "moe", "linear", "none"]
    intermediate_size: int = 0  # dense FFN width H'
    gated: bool = True  # SwiGLU/GeGLU: gate+up fused GEMM has N = 2H'
    bias: bool = False
    # MoE
    num_experts: int = 0
    top_k: int = 0
    expert_intermediate_size: int = 0  # H'_e
    expert_gated: bool = True
    expert_bias: bool = False
    num_shared_experts: int = 0
    shared_intermediate_size: int = 0  # per shared expert
    shared_gated: bool = True
    shared_bias: bool = False
    router_bias: bool = False
    shared_expert_gate: bool = False  # Qwen2-MoE's sigmoid gate on the shared expert (H -> 1)
    latent_size: Optional[int] = None  # latent MoE (Nemotron-H): experts work in a smaller width
    latent_bias: bool = False  # bias on the latent down/up projections (Nemotron-H mlp_bias)
    # Group-limited routing (HF ``n_group`` / ``topk_group``; DeepSeek-V2's device-limited, V3's node-limited
    # routing): the routed experts lie in ``expert_groups`` contiguous groups and each token picks its top-k
    # within its ``groups_per_token`` best groups. Binding only where groups_per_token < expert_groups.
    expert_groups: int = 1
    groups_per_token: int = 1

    @property
    def group_limited(self) -> bool:
        """Whether the router confines a token's picks to fewer groups than there are."""
        return 1 <= self.groups_per_token < self.expert_groups


@keeps_hash  # memos are keyed by layer kinds: weights.kind_gemms and kind_params, gemm_rows._KIND_ENTRIES
@dataclass(frozen=True, kw_only=True, slots=True)
class LayerKind(HashSlot):
    """One kind of layer: its token mixer and channel mixer (layers built alike share one)."""

    name: str  # e.g. "attention/full+dense", "mamba+moe"
    mixer: Mixer
    ffn: FFN
    other_params: int = 0  # parameters outside the weight GEMMs: norms, convs, state vectors, sinks
    # A second token mixer run beside `mixer` on the same input, outputs summed (Falcon-H1: attention
    # and Mamba-2 in every layer). The layer costs both; `mixer` stays the one rules edit (attention).
    parallel_mixer: Optional[Mixer] = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Quantization:
    """The checkpoint's quantization config as the file states it (format, block or group size)."""

    quant_method: Optional[str] = None
    fmt: Optional[str] = None  # e.g. "e4m3", "mxfp4", "nvfp4"
    weight_block_size: Optional[list[int]] = None
    group_size: Optional[int] = None
    modules_to_not_convert: list[str] = field(default_factory=list)
    raw: dict = field(default_factory=dict)
    origin: str = "quantization_config"  # where it was stated: the config's key, or ModelOpt's hf_quant_config.json


@dataclass(frozen=True, kw_only=True, slots=True)
class KeyIssue:
    """Something about a key that a consistency rule reports (found while loading/normalizing)."""

    # "structure": the model_type is unknown and the file was read by its keys as a known family (detail says which)
    kind: Literal["duplicate", "nonstandard", "unknown", "ignored", "invalid", "structure"]
    source: Source
    detail: str = ""
    suggestion: Optional[str] = None  # e.g. the key the user probably meant


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelSpec:
    """A model in one schema, whatever the source format (module docstring)."""

    format: str  # "hf", "megatron", "colint", "maxtext", "gpt-neox", "olmo", "meta"
    model_type: Optional[str] = None
    architecture: Optional[str] = None
    key_prefix: str = ""  # "text_config." for multimodal wrappers

    hidden_size: int
    num_layers: int
    vocab_size: Optional[int] = None  # None: not in the file (tokenizer-defined)
    # Megatron/NeMo/NeoX: (make_vocab_size_divisible_by, tp) the vocab was padded with (to a multiple of
    # their product); sources["vocab_divisible_by"] locates the divisor's key. None: the file states the vocab.
    vocab_padding: Optional[tuple[int, int]] = None
    tie_word_embeddings: bool = False
    max_position_embeddings: Optional[int] = None
    position_embeddings: int = 0  # learned absolute positions (GPT-2, OPT): rows of the table

    # The main attention and FFN shapes (the ones a rule's fix edits).
    num_heads: int = 0
    num_kv_heads: int = 0
    head_dim: int = 0
    intermediate_size: Optional[int] = None
    hidden_act: Optional[str] = None

    layer_kinds: list[LayerKind]
    layer_pattern: list[int]  # len == num_layers; index into layer_kinds

    mtp_layers: int = 0  # multi-token-prediction layers (not built by transformers)
    mtp_params: int = 0  # their parameters, reported apart from params.total

    embedding_params_extra: int = 0  # e.g. OPT's project_in/out, position tables counted in "embedding"
    extra_params: int = 0  # final norm and other parameters outside layers, embedding and LM head

    dtype: Optional[str] = None
    quantization: Optional[Quantization] = None
    sliding_window: Optional[int] = None

    notes: list[str] = field(default_factory=list)
    sources: dict[str, Source] = field(default_factory=dict)
    # Per-layer lists declared in the file and their lengths ({"layer_types": 17}), for CL0xx.
    per_layer_lists: dict[str, int] = field(default_factory=dict)
    key_issues: list[KeyIssue] = field(default_factory=list)
    # Values the family's loader (transformers) rejects or silently ignores, e.g.
    # {"hidden_size % num_attention_heads": "LlamaConfig rejects ..."}; filled by adapters.
    loader_rejects: list[str] = field(default_factory=list)
    # What the checkpoint's safetensors beside the file say (colint.loading.weights; CL011 compares): None when
    # the file lies in no checkpoint folder.
    weights: Optional[WeightsWitness] = None

    # -- helpers ---------------------------------------------------------------------------
    def source(self, field: str) -> Optional[Source]:
        return self.sources.get(field)

    def kind_of(self, layer: int) -> LayerKind:
        return self.layer_kinds[self.layer_pattern[layer]]

    def layer_counts(self) -> list[int]:
        """How many layers each kind has (a new list; the analysis keeps one per spec: inventory.layer_counts)."""
        counts = [0] * len(self.layer_kinds)
        for i in self.layer_pattern:
            counts[i] += 1
        return counts

    @property
    def is_moe(self) -> bool:
        return any(k.ffn.kind == "moe" for k in self.layer_kinds)

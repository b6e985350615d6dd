"""The pydantic models of colint's design schema (``colint: 1``); see colint/normalize/design_file.py.

Kept apart so that format detection, which runs on every file, does not pay for building them.
"""

from __future__ import annotations

from typing import Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_ID = "colint/v1"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MLA(_Strict):
    """Multi-head latent attention (DeepSeek-V2/V3)."""

    q_lora_rank: int = Field(0, ge=0, description="Rank of the compressed query; 0 = plain q projection.")
    kv_lora_rank: int = Field(512, gt=0, description="Rank of the compressed key/value latent (cached).")
    qk_nope_head_dim: int = Field(128, gt=0, description="Per-head q/k dims without RoPE.")
    qk_rope_head_dim: int = Field(64, gt=0, description="Per-head q/k dims with RoPE (shared key, cached).")
    v_head_dim: int = Field(128, gt=0, description="Per-head value dims.")
    index_heads: Optional[int] = Field(
        None, gt=0, description="DeepSeek Sparse Attention: the lightning indexer's heads (needs q_lora_rank)."
    )
    index_head_dim: int = Field(128, gt=0, description="The indexer's head dims (its cached key, FP8).")
    index_topk: Optional[int] = Field(None, gt=0, description="Tokens each query attends (DSA top-k).")


class LayerTypeAttention(_Strict):
    """One layer type's own attention geometry (``attention.full`` / ``attention.sliding``): each key given
    replaces the shared ``attention:`` value on the layers of that type."""

    heads: Optional[int] = Field(None, gt=0, le=1 << 20, description="Query heads of this layer type.")
    kv_heads: Optional[int] = Field(None, gt=0, description="KV heads of this layer type.")
    head_dim: Optional[int] = Field(None, gt=0, description="Per-head q/k dims of this layer type.")
    v_head_dim: Optional[int] = Field(None, gt=0, description="Per-head value dims of this layer type.")
    window: Optional[int] = Field(None, gt=0, description="Window of the sliding layers (tokens).")
    sinks: Optional[bool] = Field(None, description="One learned attention-sink logit per head.")


class Attention(_Strict):
    heads: int = Field(gt=0, le=1 << 20, description="Query heads.")
    kv_heads: Optional[int] = Field(None, gt=0, description="KV heads (GQA); default = heads.")
    head_dim: Optional[int] = Field(None, gt=0, description="Per-head dims; default hidden_size // heads.")
    v_head_dim: Optional[int] = Field(None, gt=0, description="Per-head value dims; default head_dim.")
    kind: Literal["full", "sliding", "chunked", "mla"] = Field(
        "full", description="What the letter A in the pattern means."
    )
    window: Optional[int] = Field(None, gt=0, description="Sliding-window / chunk size in tokens (S layers).")
    qkv_bias: bool = False
    o_bias: bool = False
    qk_norm: bool = Field(False, description="Per-head RMSNorm on q and k.")
    sinks: bool = Field(False, description="One learned attention-sink logit per head (gpt-oss).")
    mla: Optional[MLA] = Field(None, description="MLA ranks (kind: mla or X layers).")
    full: Optional[LayerTypeAttention] = Field(None, description="Full-attention layers' own geometry (F).")
    sliding: Optional[LayerTypeAttention] = Field(
        None, description="Sliding-window layers' own geometry (S): e.g. more KV heads than the full layers."
    )


class DenseFFN(_Strict):
    intermediate_size: int = Field(gt=0, le=1 << 40, description="FFN width H'.")
    gated: bool = Field(True, description="SwiGLU/GeGLU: gate and up projections (N = 2H').")
    bias: bool = False


class MoE(_Strict):
    experts: int = Field(gt=0, le=1 << 20, description="Routed experts E.")
    top_k: int = Field(gt=0, description="Experts per token.")
    intermediate_size: int = Field(gt=0, le=1 << 40, description="Width of one routed expert H'_e.")
    shared_experts: int = Field(0, ge=0, description="Always-on shared experts.")
    shared_intermediate_size: Optional[int] = Field(
        None, gt=0, description="Per shared expert; default = intermediate_size."
    )
    gated: bool = True
    first_dense_layers: int = Field(0, ge=0, description="Leading layers that keep the dense FFN.")
    every: int = Field(1, gt=0, description="MoE on every n-th layer after the dense ones (1 = all).")
    router_bias: bool = False
    expert_groups: int = Field(
        1, gt=0, description="Contiguous expert groups of a group-limited router (DeepSeek-V3's n_group: 8)."
    )
    groups_per_token: Optional[int] = Field(
        None, gt=0, description="Groups a token's top-k may use (DeepSeek-V3's topk_group: 4); default all."
    )


class Mamba(_Strict):
    """Mamba-2 mixer for M layers."""

    d_state: int = Field(128, gt=0)
    d_conv: int = Field(4, gt=0)
    expand: int = Field(2, gt=0, description="d_inner = expand × hidden_size.")
    head_dim: int = Field(64, gt=0)
    n_groups: int = Field(8, gt=0)


class LinearAttention(_Strict):
    """Gated DeltaNet mixer (Qwen3-Next style) for L layers."""

    k_heads: int = Field(16, gt=0)
    v_heads: int = Field(32, gt=0)
    k_head_dim: int = Field(128, gt=0)
    v_head_dim: int = Field(128, gt=0)
    conv_kernel: int = Field(4, gt=0)


class Model(_Strict):
    name: Optional[str] = None
    hidden_size: int = Field(gt=0, le=1 << 40, description="Model width H.")
    layers: Optional[int] = Field(None, gt=0, le=1 << 20, description="Layer count; default = pattern length.")
    vocab_size: Optional[int] = Field(None, gt=0, description="Vocabulary rows (omit if not decided yet).")
    tie_embeddings: bool = False
    max_position_embeddings: Optional[int] = Field(None, gt=0)
    norm: Literal["rms", "layernorm"] = Field("rms", description="layernorm adds a bias to every norm.")
    attention: Optional[Attention] = None
    ffn: Optional[DenseFFN] = None
    moe: Optional[MoE] = None
    mamba: Optional[Mamba] = None
    linear_attention: Optional[LinearAttention] = None
    pattern: Optional[Union[str, list[str]]] = Field(
        None, description='Layer letters, e.g. "[A,A,A,M]*12" or a list; default: A on every layer.'
    )
    mtp_layers: int = Field(0, ge=0, description="Multi-token-prediction layers (reported apart).")


class ColintFile(_Strict):
    """A colint design file."""

    model_config = ConfigDict(extra="forbid", title="colint design file")

    colint: Optional[Literal[1]] = Field(None, description="Marker: colint: 1 (or schema: colint/v1).")
    schema_: Optional[Literal["colint/v1"]] = Field(None, alias="schema")
    model: Model


def json_schema() -> dict:
    s = ColintFile.model_json_schema(by_alias=True)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID, **s}

"""Qwen3-MoE (``qwen3_moe``) and the Qwen3-VL-MoE language model (``qwen3_vl_moe_text``).

Same builder as :mod:`colint.normalize.hf.qwen2_moe` (mlp_only_layers, decoder_sparse_step;
``norm_topk_prob`` only changes routing weights): no shared expert, ``attention_bias`` on
q/k/v/o, per-head q/k RMSNorms.
"""

from __future__ import annotations

from colint.normalize.hf.qwen2_moe import build

__all__ = ["build"]

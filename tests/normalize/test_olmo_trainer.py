"""OLMo trainer adapter: the OLMoE file in tests/corpus/megatron, exact."""

from __future__ import annotations

import pytest

from colint.analysis.inventory import gemms, param_counts
from colint.errors import SpecError
from colint.loading import load, load_text
from colint.normalize import normalize


def test_olmoe_1b_7b():
    s = normalize(load("tests/corpus/megatron/olmo-trainer__OLMoE-1B-7B-0924.yaml"))
    assert (s.format, s.model_type, s.key_prefix) == ("olmo", "olmoe", "model.")
    assert (s.hidden_size, s.num_layers, s.num_heads, s.num_kv_heads, s.head_dim) == (2048, 16, 16, 16, 128)
    f = s.kind_of(0).ffn
    # mlp_ratio 1 → ff_proj 2048 outputs, halved by SwiGLU: experts of width 1024 (HF intermediate_size).
    assert (f.kind, f.num_experts, f.top_k, f.expert_intermediate_size) == ("moe", 64, 8, 1024)
    assert (s.vocab_size, s.tie_word_embeddings) == (50304, False)  # embedding_size rows, not vocab_size 50280
    assert "vocab_size 50280 padded to embedding_size 50304 rows" in s.notes
    # = HF OLMoE-1B-7B-0924: 6,919,161,856 total, 1,282,017,280 active (q_norm 2048 + k_norm 2048 per layer)
    p = param_counts(s)
    assert (p.total, p.active_per_token) == (6_919_161_856, 1_282_017_280)
    g = {x.name: (x.k, x.n, x.count) for x in gemms(s)}
    assert g["attn.qkv_proj"] == (2048, 3 * 2048, 1) and g["moe.experts.gate_up"] == (2048, 2048, 64)
    src = s.sources["vocab_size"]
    assert (src.key, src.line, src.column) == ("model.embedding_size", 33, 3)


def test_dense_olmo_with_bias_and_errors():
    s = normalize(
        load_text(
            "model:\n  d_model: 256\n  n_layers: 2\n  n_heads: 4\n  mlp_ratio: 8\n"
            "  vocab_size: 1000\n  rope: true\n  activation_type: gelu\n",
            "o.yaml",
        )
    )
    k = s.kind_of(0)
    assert (k.ffn.kind, k.ffn.intermediate_size, k.ffn.gated, k.ffn.bias) == ("dense", 2048, False, True)
    assert s.tie_word_embeddings and s.position_embeddings == 0
    with pytest.raises(SpecError) as e:
        normalize(load_text("model:\n  d_model: 256\n  n_layers: 2\n  n_heads: 3\n  vocab_size: 10\n", "o.yaml"))
    assert e.value.located() == "o.yaml:4:3: error: model.n_heads: d_model 256 is not divisible by n_heads 3"

from tests.rules.helpers import LLAMA_8B, run_spec_rules


def codes(findings):
    return [(f.code, f.severity, f.key, f.line) for f in findings]


def test_clean_llama_has_no_consistency_findings():
    assert run_spec_rules(LLAMA_8B, ["CL0"]) == []


def test_cl001_head_dim_not_integral():
    cfg = dict(LLAMA_8B, hidden_size=4000, num_attention_heads=48, num_key_value_heads=8)
    (f,) = [f for f in run_spec_rules(cfg, ["CL001"])]
    assert (f.code, f.severity, f.key, f.line) == ("CL001", "error", "num_attention_heads", 8)
    assert f.message == (
        "hidden_size 4000 is not divisible by 48 attention heads and no head_dim is given (head_dim would be 83.33)"
    )


def test_cl001_explicit_head_dim_is_fine():
    cfg = dict(LLAMA_8B, model_type="qwen3", hidden_size=5120, num_attention_heads=64, head_dim=128)
    assert run_spec_rules(cfg, ["CL001"]) == []


def test_cl001_does_not_apply_to_mla():
    """MLA's head widths are qk_nope_head_dim + qk_rope_head_dim and v_head_dim, whatever H / heads is
    (GLM-4.7-Flash: hidden 2048, 20 heads)."""
    cfg = {
        "model_type": "deepseek_v3",
        "hidden_size": 2048,
        "num_attention_heads": 20,
        "num_hidden_layers": 4,
        "intermediate_size": 8192,
        "moe_intermediate_size": 1024,
        "n_routed_experts": 8,
        "num_experts_per_tok": 2,
        "kv_lora_rank": 512,
        "q_lora_rank": 768,
        "qk_nope_head_dim": 192,
        "qk_rope_head_dim": 64,
        "v_head_dim": 256,
        "vocab_size": 32000,
    }
    assert run_spec_rules(cfg, ["CL001"]) == []  # (before: "hidden_size 2048 is not divisible by 20 ...")
    assert [
        f.code
        for f in run_spec_rules(
            dict(LLAMA_8B, hidden_size=4000, num_attention_heads=48, num_key_value_heads=8), ["CL001"]
        )
    ] == ["CL001"]


def test_cl002_kv_heads_not_divisor_with_fixes():
    cfg = dict(LLAMA_8B, num_key_value_heads=12)
    (f,) = run_spec_rules(cfg, ["CL002"])
    assert (f.code, f.severity, f.key, f.line) == ("CL002", "error", "num_key_value_heads", 9)
    assert f.message == "12 KV heads do not divide 32 query heads"
    assert [(e.key, e.old, e.new) for fx in f.fixes for e in fx.edits] == [
        ("num_key_value_heads", 12, 8),
        ("num_key_value_heads", 12, 16),
    ]


def test_cl004_layer_types_length():
    cfg = dict(LLAMA_8B, num_hidden_layers=4, layer_types=["full_attention"] * 5)
    (f,) = run_spec_rules(cfg, ["CL004"])
    assert (f.code, f.key, f.evidence) == ("CL004", "layer_types", {"entries": 5, "num_layers": 4})


def test_cl005_duplicate_key_last_wins():
    text = (
        '{"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008,\n'
        ' "num_attention_heads": 32, "num_hidden_layers": 32, "vocab_size": 32000,\n'
        ' "intermediate_size": 14336}\n'
    )
    (f,) = run_spec_rules(text, ["CL005"])
    assert (f.code, f.severity, f.key, f.line, f.column) == ("CL005", "warning", "intermediate_size", 1, 46)
    assert f.message == "duplicate key 'intermediate_size': appears again at line 3; the later value wins"


def test_cl006_bare_infinity():
    text = (
        '{"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008,\n'
        ' "num_attention_heads": 32, "num_hidden_layers": 32, "vocab_size": 32000,\n'
        ' "time_step_limit": [0.0, Infinity]}\n'
    )
    (f,) = run_spec_rules(text, ["CL006"])
    assert (f.code, f.severity, f.key, f.line) == ("CL006", "info", "time_step_limit[1]", 3)


def test_cl009_window_covers_context():
    cfg = dict(LLAMA_8B, model_type="mistral", sliding_window=131072)
    (f,) = run_spec_rules(cfg, ["CL009"])
    assert (f.code, f.severity, f.key) == ("CL009", "info", "sliding_window")
    assert f.evidence == {"window_tokens": 131072, "max_position_tokens": 131072}

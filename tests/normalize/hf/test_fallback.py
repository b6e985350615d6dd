"""The transformers fallback (colint/normalize/hf/fallback.py + generic.py): a model_type colint has no
adapter for is read through transformers' config of it, by the key conventions its families share.

The configs below are small instances of transformers 5.24 families without a colint adapter. Their
``oracle`` counts are what transformers builds on the meta device
(``.venv-oracle/bin/python scripts/gen_golden.py --count cfg.json``, transformers 5.24.0 + torch 2.13.0
CPU); colint's counts differ only by what the fallback cannot know (q/k norms, attention sinks), so
each test pins colint's exact count and its structure, and the gap to the oracle.
"""

from __future__ import annotations

import json

import pytest

from colint.errors import ColintError, FormatNotRecognized
from colint.loading import load_text
from colint.normalize import normalize

transformers = pytest.importorskip("transformers")
from transformers import CONFIG_MAPPING  # noqa: E402

from colint.analysis.inventory import param_counts  # noqa: E402

BASE = {
    "hidden_size": 512,
    "intermediate_size": 1536,
    "num_hidden_layers": 4,
    "num_attention_heads": 8,
    "vocab_size": 32000,
}
CASES = {
    # first_k_dense_replace + num_shared_experts; oracle 57,832,448 (q/k norms of 64 per layer not modelled)
    "exaone_moe": (
        {
            "moe_intermediate_size": 256,
            "num_key_value_heads": 2,
            "head_dim": 64,
            "num_experts": 16,
            "num_experts_per_tok": 4,
            "num_shared_experts": 1,
            "first_k_dense_replace": 1,
        },
        57_831_936,
        57_832_448,
        [False, True, True, True],
        (16, 4, 256, 1, 256),
    ),
    # Qwen-MoE layout: decoder_sparse_step with the class's mlp_only_layers default [0, 1], one shared expert of
    # shared_expert_intermediate_size, head_dim default 128; oracle 57,185,824 (sinks, q/k norms)
    "flint": (
        {
            "moe_intermediate_size": 128,
            "shared_expert_intermediate_size": 256,
            "num_key_value_heads": 4,
            "num_experts": 32,
            "num_experts_per_tok": 4,
            "decoder_sparse_step": 1,
        },
        57_184_800,
        57_185_824,
        [False, False, True, True],
        (32, 4, 128, 1, 256),
    ),
    # transformers 5's per-layer mlp_layer_types; oracle 59,274,752
    "mellum": (
        {
            "moe_intermediate_size": 256,
            "num_key_value_heads": 2,
            "num_local_experts": 16,
            "num_experts_per_tok": 2,
            "mlp_layer_types": ["dense", "sparse", "sparse", "sparse"],
        },
        59_273_728,
        59_274_752,
        [False, True, True, True],
        (16, 2, 256, 0, 0),
    ),
    # MLA with a plain q projection + DeepSeek MoE keys: exact
    "sarvam_mla": (
        {
            "moe_intermediate_size": 256,
            "kv_lora_rank": 128,
            "q_lora_rank": None,
            "qk_nope_head_dim": 64,
            "qk_rope_head_dim": 32,
            "v_head_dim": 64,
            "n_routed_experts": 16,
            "n_shared_experts": 1,
            "num_experts_per_tok": 4,
            "first_k_dense_replace": 1,
        },
        58_684_416,
        58_684_416,
        [False, True, True, True],
        (16, 4, 256, 1, 256),
    ),
    # MLA without experts: exact
    "youtu": (
        {
            "num_key_value_heads": 8,
            "kv_lora_rank": 128,
            "q_lora_rank": 256,
            "qk_nope_head_dim": 64,
            "qk_rope_head_dim": 32,
            "qk_head_dim": 96,
            "v_head_dim": 64,
        },
        29_038_592,
        29_038_592,
        [False] * 4,
        None,
    ),
    # a non-gated MLP (up, act, down): modeling_jais2.py names no gate projection; oracle 43,279,360 (LayerNorm
    # biases)
    "jais2": ({"num_key_value_heads": 8}, 43_274_752, 43_279_360, [False] * 4, None),
    # expert keys switched off by is_moe: false; oracle 45,364,240
    "doge": (
        {"num_key_value_heads": 4, "is_moe": False, "num_experts": 1024, "num_experts_per_tok": 32},
        45_355_520,
        45_364_240,
        [False] * 4,
        None,
    ),
}


def _spec(model_type: str, extra: dict):
    if model_type not in CONFIG_MAPPING:
        pytest.skip(f"this transformers has no {model_type}")
    text = json.dumps({"model_type": model_type, **BASE, **extra}, indent=2)
    return normalize(load_text(text, f"{model_type}.json"))


@pytest.mark.parametrize("model_type", sorted(CASES))
def test_unknown_families_are_read_by_their_key_conventions(model_type):
    extra, colint_total, oracle_total, sparse, moe = CASES[model_type]
    spec = _spec(model_type, extra)
    total = param_counts(spec).total
    assert total == colint_total
    assert abs(total - oracle_total) / oracle_total < 2e-4  # what no config key says: sinks, q/k norms, gates
    assert [spec.kind_of(i).ffn.kind == "moe" for i in range(spec.num_layers)] == sparse
    if moe is not None:
        f = next(k.ffn for k in spec.layer_kinds if k.ffn.kind == "moe")
        assert (
            f.num_experts,
            f.top_k,
            f.expert_intermediate_size,
            f.num_shared_experts,
            f.shared_intermediate_size,
        ) == moe
    assert spec.notes == [
        "read through transformers' generic config by the key conventions its families share "
        "(no colint adapter for this model type); parameter counts approximate"
    ]
    assert all(k.ffn.gated for k in spec.layer_kinds if k.ffn.kind == "dense") == (model_type != "jais2")


def test_mla_fields_come_from_the_file():
    spec = _spec("sarvam_mla", CASES["sarvam_mla"][0])
    m = spec.layer_kinds[0].mixer
    assert (m.kind, m.q_lora_rank, m.kv_lora_rank, m.qk_nope_head_dim, m.qk_rope_head_dim, m.v_head_dim) == (
        "mla",
        None,
        128,
        64,
        32,
        64,
    )
    assert (spec.sources["kv_lora_rank"].line, spec.sources["num_experts"].key) == (9, "n_routed_experts")


def test_the_config_class_defaults_fill_what_the_file_omits():
    """flint's file has no head_dim and no mlp_only_layers: FlintConfig's 128 and [0, 1] apply; a stated
    empty mlp_only_layers means every layer is sparse."""
    spec = _spec("flint", CASES["flint"][0])
    assert (spec.head_dim, spec.sources["head_dim"].default) == (128, True)
    spec = _spec("flint", {**CASES["flint"][0], "mlp_only_layers": []})
    assert [spec.kind_of(i).ffn.kind for i in range(4)] == ["moe"] * 4


@pytest.mark.parametrize(
    "model_type, extra, evidence",
    [
        ("zamba", {"mamba_d_state": 16, "attn_layer_period": 6}, "keys attn_layer_period, "),
        (
            "olmo_hybrid",
            {"layer_types": ["linear_attention", "linear_attention", "linear_attention", "full_attention"]},
            "layer_types has linear_attention",
        ),
    ],
)
def test_hybrid_stacks_are_refused_not_read_as_llama(model_type, extra, evidence):
    """Reading Mamba / linear-attention layers as attention + MLP was 10-130 % off: an error says so."""
    with pytest.raises(FormatNotRecognized) as exc:
        _spec(model_type, extra)
    assert f"model_type '{model_type}' is not supported by colint (a hybrid or recurrent stack: " in exc.value.message
    assert evidence in exc.value.message
    assert (exc.value.line, exc.value.column) == (2, 3)


# --- per-layer attention geometry (issue 13 item 2) -----------------------------------------------------------
SMALL_MIMO = {
    "model_type": "mimo_v2_flash",
    "hidden_size": 1024,
    "num_hidden_layers": 6,
    "num_attention_heads": 16,
    "num_key_value_heads": 4,
    "head_dim": 192,
    "v_head_dim": 128,
    "intermediate_size": 2048,
    "vocab_size": 1000,
    "moe_intermediate_size": 256,
    "n_routed_experts": 8,
    "num_experts_per_tok": 2,
    "sliding_window": 128,
}
# transformers' MiMoV2FlashConfig: layer 0 and 5 full, 1-4 sliding (8 KV heads = 4 x 2, 16 sinks); layer 0 dense.
# q 1024 x 3072 (16 x 192), o 2048 (16 x 128) x 1024; full k 1024 x 768, v 1024 x 512; sliding k 1024 x 1536, v 1024 x 1024
_FULL_ATTN = 1024 * 3072 + 1024 * 768 + 1024 * 512 + 2048 * 1024  # 6,553,600
_SWA_ATTN = 1024 * 3072 + 1024 * 1536 + 1024 * 1024 + 2048 * 1024 + 16  # 7,864,336 with the sinks
_DENSE = 3 * 1024 * 2048
_MOE = 8 * 1024 + 8 * 3 * 1024 * 256  # router + fused gated experts
SMALL_MIMO_TOTAL = (
    (_FULL_ATTN + 2048 + _DENSE)  # layer 0
    + 4 * (_SWA_ATTN + 2048 + _MOE)  # layers 1-4
    + (_FULL_ATTN + 2048 + _MOE)  # layer 5
    + 2 * 1000 * 1024  # embedding, untied LM head
    + 1024  # final norm
)


def test_per_layer_geometry_in_the_family_code_is_placed():
    """MiMo-V2-Flash doubles its sliding layers' KV heads in code (``num_key_value_heads * 2 if is_swa``) and gives
    only them sinks: the generic reading sizes each layer type on its own, exactly as transformers builds it
    (84,415,552 from gen_golden.py --count, torch 2.13 meta device), and agrees with colint's own adapter."""
    if "mimo_v2_flash" not in CONFIG_MAPPING:
        pytest.skip("this transformers has no mimo_v2_flash")
    from colint.normalize.hf import FAMILIES
    from colint.normalize.hf.fallback import build_with_transformers

    assert SMALL_MIMO_TOTAL == 84_415_552
    doc = load_text(json.dumps(SMALL_MIMO), "mimo.json")
    spec = build_with_transformers(doc, (), "mimo_v2_flash", FAMILIES)
    kv = {k.mixer.attention: k.mixer.num_kv_heads for k in spec.layer_kinds}
    assert kv == {"full": 4, "sliding": 8}
    assert param_counts(spec).total == SMALL_MIMO_TOTAL
    assert param_counts(normalize(load_text(json.dumps(SMALL_MIMO), "mimo.json"))).total == SMALL_MIMO_TOTAL


def test_a_layer_type_geometry_key_sizes_that_type():
    text = json.dumps(
        {"model_type": "flint", **BASE, **CASES["flint"][0], "sliding_window": 128, "swa_num_key_value_heads": 8},
        indent=1,
    )
    spec = normalize(load_text(text, "flint.json"))
    kv = {k.mixer.attention: k.mixer.num_kv_heads for k in spec.layer_kinds}
    assert kv.get("sliding") == 8 and all(v != 8 for a, v in kv.items() if a != "sliding")
    layer_types = ["full_attention", "chunked_attention", "full_attention", "full_attention"]
    text = json.dumps({"model_type": "flint", **BASE, **CASES["flint"][0], "layer_types": layer_types})
    with pytest.raises(ColintError) as exc:
        normalize(load_text(text, "flint.json"))
    assert exc.value.key == "layer_types[1]" and "'chunked_attention'" in exc.value.message


def test_a_layer_type_the_config_class_fills_is_refused_at_model_type_not_1_1():
    """A layer type the file does not state (transformers' config class fills ``layer_types``) is refused at
    ``model_type``, the key that chose the class, never at 1:1."""
    from colint.normalize.hf import generic
    from colint.normalize.hf.base import HFReader

    cfg = {"hidden_size": 1024, "num_hidden_layers": 2, "num_attention_heads": 16, "intermediate_size": 2048}
    text = json.dumps({**cfg, "vocab_size": 1000, "model_type": "x"}, indent=1)
    defaults = {"layer_types": ["full_attention", "chunked_attention"]}
    with pytest.raises(ColintError) as exc:
        generic.build(HFReader(load_text(text, "x.json"), (), defaults=defaults, model_type="x"))
    line = next(i for i, x in enumerate(text.splitlines(), 1) if '"model_type"' in x)
    assert (exc.value.key, exc.value.line) == ("model_type", line)
    assert "config class fills layer_types ('chunked_attention' at layer 1)" in exc.value.message


def test_v_head_dim_of_the_config_class_sizes_v_and_o():
    from colint.normalize.hf import generic
    from colint.normalize.hf.base import HFReader

    cfg = {
        "model_type": "x",
        "hidden_size": 1024,
        "num_hidden_layers": 2,
        "num_attention_heads": 16,
        "num_key_value_heads": 4,
        "head_dim": 192,
        "intermediate_size": 2048,
        "vocab_size": 1000,
    }
    doc = load_text(json.dumps(cfg), "x.json")
    spec = generic.build(HFReader(doc, (), defaults={"v_head_dim": 128}, model_type="x"))
    m = spec.layer_kinds[0].mixer
    assert (m.head_dim, m.v_head_dim) == (192, 128)
    # q 1024x3072, k 1024x768, v 1024x512 (4 x 128), o 2048 (16 x 128) x 1024
    attn = sum(
        g.weight_params
        for g in __import__("colint.analysis.inventory", fromlist=["gemms"]).gemms(spec)
        if g.name.startswith("attn.")
    )
    assert attn == 1024 * 3072 + 1024 * 768 + 1024 * 512 + 2048 * 1024
    # a v_head_dim the class does not define is ignored, as transformers ignores it
    spec = generic.build(
        HFReader(load_text(json.dumps({**cfg, "v_head_dim": 128}), "x.json"), (), defaults={}, model_type="x")
    )
    assert spec.layer_kinds[0].mixer.v_head_dim is None

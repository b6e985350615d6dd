"""Meta params.json / ModelArgs adapter: every file in tests/corpus/meta, exact.

The reference Transformers (Meta llama, torchchat, ExecuTorch, DeepSeek inference) keep a separate
output matrix, so the spec is untied unless the file says tie_word_embeddings; where an HF
release ties them the HF count is lower by exactly vocab x dim (stated per comparison below).
"""

from __future__ import annotations

import pytest

from colint.analysis.inventory import gemms, param_counts
from colint.errors import SpecError
from colint.loading import load, load_text
from colint.normalize import normalize
from tests.normalize.file_rows import assert_file_row
from colint.normalize.format_reader import llama_ffn_hidden

CORPUS = "tests/corpus/meta/"

# file, model_type, H, L, heads, kv, head_dim, ffn, vocab, tied, total params, active, {kind: count}
META = [
    (
        "deepseek-native__config_16B",
        "deepseek-ref",
        2048,
        27,
        16,
        16,
        192,
        10944,
        102_400,
        False,
        15_706_484_224,
        2_661_150_208,
        {"mla+dense": 1, "mla+moe": 26},
    ),
    (
        "deepseek-native__config_671B",
        "deepseek-ref",
        7168,
        61,
        128,
        128,
        192,
        18432,
        129_280,
        False,
        671_026_419_200,
        37_552_297_472,
        {"mla+dense": 3, "mla+moe": 58},
    ),
    (
        "executorch__LFM2-1.2B",
        "llama",
        2048,
        16,
        32,
        8,
        64,
        8192,
        65536,
        False,
        1_304_558_336,
        1_304_558_336,
        {"short_conv+dense": 10, "attention/full+dense": 6},
    ),
    (
        "executorch__Phi-4-mini",
        "llama",
        3072,
        32,
        24,
        8,
        128,
        8192,
        200_064,
        False,
        4_450_618_368,
        4_450_618_368,
        {"attention/full+dense": 32},
    ),
    (
        "executorch__Qwen2.5-0.5B",
        "llama",
        896,
        24,
        14,
        2,
        64,
        4864,
        151_936,
        False,
        630_167_424,
        630_167_424,
        {"attention/full+dense": 24},
    ),
    (
        "executorch__SmolLM3-3B",
        "llama",
        2048,
        36,
        16,
        4,
        128,
        11008,
        128_256,
        False,
        3_337_766_912,
        3_337_766_912,
        {"attention/full+dense": 36},
    ),
    (
        "executorch__gemma-2-2b",
        "llama",
        2304,
        26,
        8,
        4,
        256,
        9216,
        256_000,
        False,
        3_204_165_888,
        3_204_165_888,
        {"attention/sliding+dense": 13, "attention/full+dense": 13},
    ),
    (
        "executorch__gemma-2b",
        "llama",
        2048,
        18,
        8,
        1,
        256,
        16384,
        256_000,
        False,
        3_030_460_416,
        3_030_460_416,
        {"attention/full+dense": 18},
    ),
    (
        "executorch__gemma-3-1b",
        "llama",
        1152,
        26,
        4,
        1,
        256,
        6912,
        262_144,
        False,
        1_301_875_840,
        1_301_875_840,
        {"attention/sliding+dense": 22, "attention/full+dense": 4},
    ),
    (
        "executorch__granite-3-2b",
        "llama",
        2048,
        40,
        32,
        8,
        64,
        8192,
        49159,
        False,
        2_634_217_472,
        2_634_217_472,
        {"attention/full+dense": 40},
    ),
    (
        "torchchat__Granite-3.0-8B-Instruct",
        "torchchat",
        4096,
        40,
        32,
        8,
        128,
        12800,
        49155,
        True,
        8_170_848_256,
        8_170_848_256,
        {"attention/full+dense": 40},
    ),
    (
        "torchchat__Meta-Llama-3.2-1B",
        "torchchat",
        2048,
        16,
        32,
        8,
        64,
        8192,
        128_256,
        False,
        1_498_482_688,
        1_498_482_688,
        {"attention/full+dense": 16},
    ),
    (
        "torchchat__llama2-13B",
        "llama",
        5120,
        40,
        40,
        40,
        128,
        13824,
        None,
        False,
        12_688_184_320,
        12_688_184_320,
        {"attention/full+dense": 40},
    ),
    (
        "torchchat__llava-1.5",
        "llava",
        4096,
        32,
        32,
        32,
        128,
        11008,
        32064,
        False,
        6_738_939_904,
        6_738_939_904,
        {"attention/full+dense": 32},
    ),
]


def spec_of(name: str, **kw):
    return normalize(load(f"{CORPUS}{name}.json"), **kw)


def hf(name: str):
    return normalize(load(f"tests/corpus/hf/{name}.json"))


@pytest.mark.parametrize("row", META, ids=[r[0] for r in META])
def test_meta_file(row):
    assert_file_row(spec_of(row[0]), "meta", row)


def test_meta_ffn_rounding_rule():
    assert llama_ffn_hidden(5120, 256, None) == 13824  # Llama 2 13B
    assert llama_ffn_hidden(2048, 256, 1.5) == 8192  # Llama 3.2 1B
    assert llama_ffn_hidden(16384, 4096, 1.2) == 53248  # Llama 3.1 405B params.json
    assert llama_ffn_hidden(8192, 4096, 1.3) == 28672  # Llama 2 70B params.json
    s = spec_of("torchchat__Meta-Llama-3.2-1B")
    src = s.sources["intermediate_size"]
    # Derived, so no key holds 8192: the source names multiple_of (256, the width is a multiple of it), the
    # key the user would edit, with its line; derived, so a fix never writes a width there.
    assert (src.key, src.line, src.default, src.derived) == ("multiple_of", 9, False, True)


def test_counts_agree_with_hf_adapter():
    # Llama 3.2 1B: HF ties the LM head; the torchchat reference keeps its own output (+V·H).
    assert (
        param_counts(spec_of("torchchat__Meta-Llama-3.2-1B")).total
        == param_counts(hf("llama3__Llama-3.2-1B-Instruct")).total + 128_256 * 2048
    )
    # DeepSeek-V3 671B: the reference Gate has a bias Parameter when dim == 7168; HF keeps
    # e_score_correction_bias as a buffer: 58 MoE layers x 256 experts more here.
    assert (
        param_counts(spec_of("deepseek-native__config_671B")).total
        == param_counts(hf("deepseek__DeepSeek-V3")).total + 58 * 256
    )
    # DeepSeek-V2-Lite (16B) has no router bias: identical to the MaxText file of the same model.
    assert (
        param_counts(spec_of("deepseek-native__config_16B")).total
        == param_counts(normalize(load("tests/corpus/megatron/maxtext__deepseek2-16b.yaml"))).total
    )
    # Llama-2-13B with the 32000-token Llama-2 tokenizer: the published 13,015,864,320.
    assert param_counts(spec_of("torchchat__llama2-13B", vocab_size=32000)).total == 13_015_864_320


def test_deepseek_mla_gemms_and_fp8():
    s = spec_of("deepseek-native__config_671B")
    g = {x.name: (x.k, x.n) for x in gemms(s)}
    assert g["mla.q_a_proj"] == (7168, 1536) and g["mla.q_b_proj"] == (1536, 128 * 192)
    assert g["mla.kv_a_proj_with_mqa"] == (7168, 512 + 64) and g["mla.kv_b_proj"] == (512, 128 * 256)
    assert g["moe.experts.gate_up"] == (7168, 4096) and g["moe.shared_experts.gate_proj"] == (7168, 2048)
    assert s.quantization.weight_block_size == [128, 128] and s.dtype == "fp8"
    lite = spec_of("deepseek-native__config_16B")
    assert "mla.q_proj" in {x.name for x in gemms(lite)}  # q_lora_rank 0: plain q projection


def test_lfm2_inconsistent_layer_types_is_a_spec_with_a_note():
    # INCONSISTENT AS PUBLISHED: 16 layers, 17 layer_types. colint builds the 16 layers the
    # first 16 entries describe, says so, and leaves the length to rule CL004 (layer-list-length).
    s = spec_of("executorch__LFM2-1.2B")
    assert s.per_layer_lists == {"layer_types": 17}
    assert "INCONSISTENT: layer_types lists 17 entries for n_layers 16; the first 16 describe the layers" in s.notes
    src = s.sources["layer_types"]
    assert (src.key, src.line, src.column) == ("layer_types", 15, 3)
    conv = s.kind_of(0)
    assert conv.mixer.kind == "short_conv" and conv.other_params == 2 * 2048 + 3 * 2048
    g = {x.name: (x.k, x.n, x.layers) for x in gemms(s)}
    assert g["conv.in_proj"] == (2048, 3 * 2048, 10) and g["conv.out_proj"] == (2048, 2048, 10)
    # HF LFM2-1.2B (tied) has 1,170,340,608 parameters; ExecuTorch's output matrix adds V·H.
    assert param_counts(s).total == 1_170_340_608 + 65536 * 2048


def test_executorch_layer_types_given_as_text_and_qk_norm():
    s = spec_of("executorch__gemma-3-1b")
    assert [s.kind_of(i).mixer.attention for i in range(6)] == ["sliding"] * 5 + ["full"]
    assert s.kind_of(0).mixer.window == 512
    assert s.kind_of(0).other_params == 4 * 1152 + 2 * 256  # 4 norms + q/k norms


def test_vocab_minus_one_and_vocab_option():
    doc = load_text(
        '{"dim": 4096, "n_layers": 32, "n_heads": 32, "n_kv_heads": 8, "vocab_size": -1,\n'
        ' "multiple_of": 1024, "ffn_dim_multiplier": 1.3}',
        "params.json",
    )
    s = normalize(doc)
    assert s.vocab_size is None and s.intermediate_size == 14336
    assert "vocab_size -1: set by the tokenizer at load time (pass --vocab-size)" in s.notes
    assert param_counts(s).embedding == 0
    s2 = normalize(doc, vocab_size=128256)
    assert s2.vocab_size == 128256
    assert param_counts(s2).total == param_counts(s).total + 2 * 128256 * 4096


def test_bad_values_are_located():
    with pytest.raises(SpecError) as e:
        normalize(load_text('{"dim": 4096, "n_layers": "32", "n_heads": 32}', "p.json"))
    assert e.value.located() == "p.json:1:15: error: 'n_layers' must be an integer, got the string '32'"
    with pytest.raises(SpecError) as e:
        normalize(load_text('{"dim": 64, "n_layers": 2, "n_heads": 4, "layer_types": ["conv", "mamba"]}', "p.json"))
    assert e.value.located() == (
        "p.json:1:66: error: 'layer_types[1]' is 'mamba'; expected full_attention, sliding_attention or conv"
    )

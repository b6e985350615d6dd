"""GPT-NeoX adapter (Pythia): every gpt-neox file in tests/corpus/megatron, exact.

Decision on the JSON-with-comments files: they are YAML flow mappings (``#`` comments after
whitespace and a trailing comma are legal there), so the YAML loader reads them unchanged; a file
that is not even that is a load error at its line and column (tested below).
"""

from __future__ import annotations

import pytest

from colint.analysis.inventory import gemms, param_counts
from colint.cli.main import main
from colint.errors import LoadError
from colint.loading import load, load_text
from colint.normalize import normalize

# file, H, L, heads, mlp, params without vocab, padded vocab for tokenizer 50277, params with it
# (= the HF GPTNeoX checkpoints: pythia-70m 70,426,624; 1.4b 1,414,647,808; 6.9b 6,857,302,016)
PYTHIA = [
    ("70m", 512, 6, 8, 2048, 18_915_328, 50304, 70_426_624),
    ("1.4b", 2048, 24, 16, 8192, 1_208_602_624, 50304, 1_414_647_808),
    ("6.9b", 4096, 32, 32, 16384, 6_444_163_072, 50432, 6_857_302_016),  # model-parallel-size 2: x256
]


@pytest.mark.parametrize("row", PYTHIA, ids=[r[0] for r in PYTHIA])
def test_pythia(row):
    size, h, n_layers, heads, mlp, params, vocab, params_v = row
    doc = load(f"tests/corpus/megatron/gpt-neox__pythia-{size}.yaml")
    s = normalize(doc)
    assert (s.format, s.model_type, s.hidden_size, s.num_layers, s.num_heads, s.num_kv_heads) == (
        "gpt-neox",
        "gpt-neox",
        h,
        n_layers,
        heads,
        heads,
    )
    assert (s.intermediate_size, s.head_dim, s.vocab_size, s.tie_word_embeddings) == (mlp, h // heads, None, False)
    assert param_counts(s).total == params
    sv = normalize(doc, vocab_size=50277)
    assert (sv.vocab_size, param_counts(sv).total) == (vocab, params_v)
    g = {x.name: (x.k, x.n) for x in gemms(sv)}
    assert g["attn.qkv_proj"] == (h, 3 * h) and g["mlp.up_proj"] == (h, 4 * h) and g["lm_head"] == (h, vocab)


def test_hyphen_and_underscore_spellings_are_the_same():
    a = normalize(
        load_text('{"num-layers": 2, "hidden-size": 256, "num-attention-heads": 4, "pos-emb": "rotary"}', "a.yml")
    )
    b = normalize(
        load_text('{"num_layers": 2, "hidden_size": 256, "num_attention_heads": 4, "pos_emb": "rotary"}', "b.yml")
    )
    assert a.format == b.format == "gpt-neox"
    assert a.layer_kinds == b.layer_kinds and param_counts(a) == param_counts(b)
    assert a.sources["hidden_size"].key == "hidden-size" and b.sources["hidden_size"].key == "hidden_size"


def test_learned_positions_by_default_and_swiglu_width():
    s = normalize(
        load_text(
            '{"num-layers": 2, "hidden-size": 1024, "num-attention-heads": 8, "rotary-pct": 1,\n'
            ' "max-position-embeddings": 2048, "activation": "swiglu", "norm": "rmsnorm"}',
            "c.yml",
        )
    )
    assert s.position_embeddings == 2048  # NeoX's pos-emb default is "learned"
    assert s.intermediate_size == 2816 and s.kind_of(0).ffn.gated  # int(8h/3) rounded up to 256
    assert s.kind_of(0).other_params == 2 * 1024


def test_unreadable_json_with_comments_is_a_located_load_error(tmp_path, capsys):
    p = tmp_path / "broken.yml"
    p.write_text('{\n  # model\n  "num-layers": 6\n  "hidden-size": 512,\n}\n')
    with pytest.raises(LoadError) as e:
        load(str(p))
    assert (e.value.line, e.value.column) == (4, 16)  # where the missing comma bites
    assert main(["inspect", str(p)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"{p}:4:16: error: invalid YAML") and "\n" not in err

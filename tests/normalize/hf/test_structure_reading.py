"""Reading by structure (issue 30 item 3): a config whose model_type neither colint nor transformers knows, with its
own modelling code in auto_map, is read by its keys as the closest family colint reads.

Each case copies a corpus config, renames its model_type and architectures, and points auto_map at a module that
would leave a marker file (and fail) if it were ever imported; the reference is the real family's reading of the
same file, computed here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from colint.analysis.inventory import param_counts
from colint.errors import FormatNotRecognized
from colint.loading import load
from colint.normalize import normalize
from colint.normalize.hf import FAMILIES

from tests.rules.helpers import run

CORPUS = Path(__file__).resolve().parents[2] / "corpus" / "hf"

CASES = [  # (corpus file, what kind of model, the family it is read as)
    ("llama3__Meta-Llama-3.1-8B.json", "dense", "llama"),
    ("qwen3__Qwen3-32B.json", "GQA", "qwen3"),
    ("mistral__Mistral-7B-Instruct-v0.3.json", "GQA", "mistral"),
    ("mixtral__Mixtral-8x7B-v0.1.json", "MoE", "mixtral"),
    ("qwen3-moe__Qwen3-30B-A3B.json", "MoE", "qwen3_moe"),
    ("deepseek__DeepSeek-V3.json", "MLA+MoE", "deepseek_v2"),
    ("nemotron-h__NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.json", "hybrid Mamba", "nemotron_h"),
]

TRAP = """from pathlib import Path
Path(__file__).with_name("IMPORTED").write_text("auto_map code ran")
raise RuntimeError("colint must never import auto_map code")
"""


def _renamed(tmp_path: Path, name: str, **extra) -> Path:
    return _renamed_data(tmp_path, json.loads((CORPUS / name).read_text()), **extra)


def _renamed_data(tmp_path: Path, data: dict, **extra) -> Path:
    data["model_type"] = "acme_next"
    data["architectures"] = ["AcmeNextForCausalLM"]
    data["auto_map"] = {"AutoConfig": "acme_modeling.AcmeConfig", "AutoModelForCausalLM": "acme_modeling.AcmeModel"}
    data.update(extra)
    (tmp_path / "acme_modeling.py").write_text(TRAP)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data, indent=2))
    return path


@pytest.mark.parametrize("name,kind,family", CASES, ids=[c[0].split("__")[1] for c in CASES])
def test_a_renamed_config_reads_as_its_family(tmp_path, name, kind, family):
    reference = param_counts(normalize(load(str(CORPUS / name))))
    path = _renamed(tmp_path, name)
    spec = normalize(load(str(path)))
    got = param_counts(spec)
    assert abs(got.total - reference.total) <= 0.005 * reference.total, (kind, got.total, reference.total)
    assert abs(got.active_per_token - reference.active_per_token) <= 0.005 * reference.active_per_token
    assert spec.model_type == "acme_next"
    assert spec.notes[0].startswith(
        f"model_type 'acme_next' is one neither colint nor transformers knows; read by its structure as {family} "
        "(its auto_map code is not run)"
    )
    assert not (tmp_path / "IMPORTED").exists()  # auto_map's module was never imported
    # the check says it too: a CL007 info at model_type
    said = [f for f in run(spec, ["CL007"]) if "not a known family" in f.message]
    assert [(f.severity, f.line) for f in said] == [("info", _line(path, "model_type"))]
    assert said[0].message.startswith(
        f"model_type 'acme_next' is not a known family: read by its structure as {family} (its auto_map code is "
        "not run)"
    )


def _line(path: Path, key: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if f'"{key}"' in line)


def test_keys_the_family_does_not_read_are_cl007_findings(tmp_path):
    path = _renamed(
        tmp_path, "llama3__Meta-Llama-3.1-8B.json", acme_gate_rank=64, acme_router_jitter=0.1, num_hiden_layers=3
    )
    found = {f.key: (f.severity, f.message) for f in run(str(path), ["CL007"])}
    assert found == {
        "model_type": (
            "info",
            "model_type 'acme_next' is not a known family: read by its structure as llama (its auto_map code is not "
            "run): llama reads 6 of its 8 shape keys; 3 other key(s) it does not read (CL007)",
        ),
        "acme_gate_rank": (
            "warning",
            "'acme_gate_rank' is ignored by this model family (a shape key that llama, the closest family, neither "
            "reads nor knows: whatever it sizes is not counted)",
        ),
        "acme_router_jitter": (
            "info",
            "'acme_router_jitter' is not read by this model family (read by structure as llama, which has no such "
            "key: whatever it adds is not counted)",
        ),
        "num_hiden_layers": (
            "warning",
            "'num_hiden_layers' is not read by this model family; did you mean 'num_hidden_layers'? (model_type llama "
            "has no such key; its default applies)",
        ),
    }


def test_defaults_never_add_structure_the_file_does_not_state(tmp_path):
    """A dense Qwen3 is no Qwen3-MoE with its 128 default experts, though qwen3_moe reads every key it has."""
    spec = normalize(load(str(_renamed(tmp_path, "qwen3__Qwen3-8B.json"))))
    assert not spec.is_moe
    assert "as qwen3 " in spec.notes[0]


def test_a_config_no_family_can_size_is_refused_with_its_shape_keys(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(
        json.dumps(
            {
                "model_type": "acme_next",
                "auto_map": {"AutoConfig": "acme_modeling.AcmeConfig"},
                "d_model": 4096,
                "n_blocks": 32,
                "n_heads": 32,
                "ffn_mult": 4,
                "vocab_size": 32000,
                "dropout": 0.0,
            },
            indent=2,
        )
    )
    (tmp_path / "acme_modeling.py").write_text(TRAP)
    with pytest.raises(FormatNotRecognized) as info:
        normalize(load(str(path)))
    assert info.value.located() == (
        f"{path}:2:3: error: model_type 'acme_next' is not supported by colint (neither colint nor transformers "
        "knows it, and no family colint reads can size it from its keys; its shape keys: d_model, n_blocks, n_heads, "
        "ffn_mult, vocab_size; colint's design schema can describe it: `colint schema`); colint reads "
        f"{len(FAMILIES)} model types (`colint formats` lists them)"
    )
    assert not (tmp_path / "IMPORTED").exists()


def test_a_file_that_states_no_head_count_is_refused(tmp_path):
    """Gemma-3-4B's text_config states 4 keys and leans on its family's defaults: no reading of its keys alone."""
    data = json.loads((CORPUS / "llama3__Meta-Llama-3.1-8B.json").read_text())
    data = {k: v for k, v in data.items() if k not in ("num_attention_heads", "num_key_value_heads")}
    with pytest.raises(FormatNotRecognized, match="no family colint reads can size it from its keys"):
        normalize(load(str(_renamed_data(tmp_path, data))))


def test_a_model_type_transformers_knows_still_takes_its_config_class(tmp_path):
    """The generic transformers reading comes first: structure reading is for types nobody knows."""
    data = json.loads((CORPUS / "llama3__Meta-Llama-3.1-8B.json").read_text())
    data["model_type"] = "nanochat"  # a transformers family colint has no adapter for
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    spec = normalize(load(str(path)))
    assert spec.notes == [
        "read through transformers' generic config by the key conventions its families share (no colint adapter "
        "for this model type); parameter counts approximate"
    ]

"""CL011 (weights-disagree) and the witness behind it (colint.loading.weights): a checkpoint folder's safetensors
index and headers (never tensor data) against its config. Each test builds tiny fake safetensors files: an
8-byte little-endian header length, the JSON header, a few bytes standing for the data."""

from __future__ import annotations

import json
import struct
from pathlib import Path

from colint.analysis.checkpoint_format import checkpoint_format
from colint.analysis.inventory import param_counts
from colint.cli.main import main
from colint.loading import load
from colint.loading.weights import MAX_HEADER_BYTES, weights_witness
from colint.normalize import normalize

from tests.rules.helpers import run

ROOT = Path(__file__).resolve().parents[2]

LLAMA = {
    "model_type": "llama",
    "architectures": ["LlamaForCausalLM"],
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "num_hidden_layers": 2,
    "vocab_size": 1000,
    "tie_word_embeddings": False,
}


def write_safetensors(path: Path, tensors: dict[str, tuple[str, list[int]]], tail: bytes = b"\0" * 16) -> None:
    header = {n: {"dtype": d, "shape": s, "data_offsets": [0, 0]} for n, (d, s) in tensors.items()}
    header["__metadata__"] = {"format": "pt"}
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + tail)


def llama_tensors(layers: int = 2, vocab: int = 1000, dtype: str = "BF16") -> dict[str, tuple[str, list[int]]]:
    t = {"model.embed_tokens.weight": ("BF16", [vocab, 64]), "model.norm.weight": ("BF16", [64])}
    t["lm_head.weight"] = ("BF16", [vocab, 64])
    for i in range(layers):
        p = f"model.layers.{i}."
        for name, shape in (
            ("self_attn.q_proj", [64, 64]),
            ("self_attn.k_proj", [32, 64]),
            ("self_attn.v_proj", [32, 64]),
            ("self_attn.o_proj", [64, 64]),
            ("mlp.gate_proj", [128, 64]),
            ("mlp.up_proj", [128, 64]),
            ("mlp.down_proj", [64, 128]),
        ):
            t[p + name + ".weight"] = (dtype, shape)
        t[p + "input_layernorm.weight"] = ("BF16", [64])
        t[p + "post_attention_layernorm.weight"] = ("BF16", [64])
    return t


def checkpoint(tmp_path: Path, config: dict, tensors: dict, shards: int = 1) -> Path:
    (tmp_path / "config.json").write_text(json.dumps(config, indent=2))
    names = list(tensors)
    if shards == 1:
        write_safetensors(tmp_path / "model.safetensors", tensors)
        return tmp_path / "config.json"
    weight_map = {}
    for k in range(shards):
        part = {n: tensors[n] for n in names[k::shards]}
        f = f"model-{k + 1:05d}-of-{shards:05d}.safetensors"
        write_safetensors(tmp_path / f, part)
        weight_map.update(dict.fromkeys(part, f))
    index = {"metadata": {"total_size": 123456}, "weight_map": weight_map}
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(index))
    return tmp_path / "config.json"


def test_matching_weights_count_the_config_exactly_and_say_nothing(tmp_path):
    path = checkpoint(tmp_path, LLAMA, llama_tensors(), shards=3)
    spec = normalize(load(str(path)))
    w = spec.weights
    assert w is not None
    assert (w.files_read, w.total_size_bytes, w.layers, w.embedding_rows, w.experts, w.mtp_layers) == (
        3,
        123456,
        [0, 1],
        1000,
        0,
        0,
    )
    assert (
        w.params
        == param_counts(spec).total
        == 2 * 1000 * 64 + 64 + 2 * (4 * 64 * 64 + 3 * 128 * 64 + 2 * 64) - (2 * 2 * 32 * 64)
    )
    assert w.dtype_params == {"BF16": w.params}
    assert run(spec, ["CL011"]) == []
    assert checkpoint_format(spec) is None  # BF16 weights: the scenario's default format stands


def test_a_vocab_the_embedding_does_not_have_is_an_error_with_its_fix(tmp_path):
    path = checkpoint(tmp_path, LLAMA, llama_tensors(vocab=1024))
    found = run(str(path), ["CL011"])
    assert [(f.severity, f.message, f.key) for f in found] == [
        (
            "error",
            f"vocab_size 1000 but model.embed_tokens.weight has 1024 rows in the weights in {tmp_path}",
            "vocab_size",
        )
    ]
    assert [(e.key, e.old, e.new) for e in found[0].fixes[0].edits] == [("vocab_size", 1000, 1024)]


def test_a_layer_count_the_weights_do_not_have_is_an_error(tmp_path):
    path = checkpoint(tmp_path, LLAMA, llama_tensors(layers=3))
    found = run(str(path), ["CL011"])
    assert [(f.severity, f.message) for f in found] == [
        ("error", f"2 layers in the config but the weights in {tmp_path} hold 3 decoder layers (layers 0-2)")
    ]
    assert [(e.key, e.old, e.new) for e in found[0].fixes[0].edits] == [("num_hidden_layers", 2, 3)]


def _deepseek_index(tmp_path: Path, layers: int, experts: int) -> Path:
    """DeepSeek-V3's config beside an index of tensor names only (its shards not downloaded)."""
    config = json.loads((ROOT / "tests" / "corpus" / "hf" / "deepseek__DeepSeek-V3.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps(config, indent=2))
    names = ["model.embed_tokens.weight", "lm_head.weight"]
    for i in range(layers):
        names.append(f"model.layers.{i}.self_attn.kv_a_proj_with_mqa.weight")
        if i >= 3:
            names += [f"model.layers.{i}.mlp.experts.{e}.down_proj.weight" for e in range(experts)]
    index = {"metadata": {"total_size": 688586727753}, "weight_map": dict.fromkeys(names, "model-00001.safetensors")}
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(index))
    return tmp_path / "config.json"


def test_deepseek_keeps_its_mtp_layer_as_layer_61_and_missing_mtp_is_a_warning(tmp_path):
    ok = run(str(_deepseek_index(tmp_path, 62, 256)), ["CL011"])
    assert ok == []  # 61 layers + 1 MTP layer stored as model.layers.61
    spec = normalize(load(str(tmp_path / "config.json")))
    assert (spec.weights.params, spec.weights.files_read, spec.weights.problems) == (
        None,
        0,
        ["model-00001.safetensors: No such file or directory"],
    )
    missing = run(str(_deepseek_index(tmp_path, 61, 256)), ["CL011"])
    assert [(f.severity, f.message, f.key) for f in missing] == [
        (
            "warning",
            f"the config declares 1 MTP layer(s) but the weights in {tmp_path} hold none: MTP speculative decoding "
            "has no weights to run",
            "num_nextn_predict_layers",
        )
    ]
    quiet = run(str(tmp_path / "config.json"), ["CL011"], rules={"CL011": {"missing_mtp": False}})
    assert quiet == []


def test_an_expert_count_the_weights_do_not_have_is_an_error(tmp_path):
    found = run(str(_deepseek_index(tmp_path, 62, 128)), ["CL011"])
    assert [(f.severity, f.message) for f in found] == [
        ("error", f"256 routed experts in the config but the weights in {tmp_path} hold 128 per layer")
    ]


def test_headers_are_bounded_and_never_the_data(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(LLAMA))
    (tmp_path / "a.safetensors").write_bytes(struct.pack("<Q", MAX_HEADER_BYTES + 1) + b"{}")
    (tmp_path / "b.safetensors").write_bytes(struct.pack("<Q", 500) + b'{"x": 1}')
    (tmp_path / "c.safetensors").write_bytes(b"\x01")
    write_safetensors(tmp_path / "d.safetensors", llama_tensors(), tail=b"\xff" * 4096)  # data is never parsed
    w = weights_witness(str(tmp_path / "config.json"))
    assert w is not None
    assert w.problems == [
        f"a.safetensors: header of {MAX_HEADER_BYTES + 1:,} bytes, over the 100,000,000-byte limit",
        "b.safetensors: header cut short (8 of 500 bytes)",
        "c.safetensors: shorter than a safetensors header",
    ]
    assert (w.files_read, w.params, w.layers) == (1, None, [0, 1])  # a header unread: no parameter count


def test_fp8_and_fp4_weights_give_the_default_format(tmp_path):
    small = {**LLAMA, "vocab_size": 64}  # the projections hold most parameters, as in a real model
    fp8 = llama_tensors(vocab=64, dtype="F8_E4M3")
    for n in [n for n in fp8 if n.endswith("_proj.weight")]:
        fp8[n + "_scale_inv"] = ("F32", [1, 1])
    (tmp_path / "fp8").mkdir()
    spec = normalize(load(str(checkpoint(tmp_path / "fp8", small, fp8))))
    ck = checkpoint_format(spec)
    fp8_params = 2 * (2 * 64 * 64 + 2 * 32 * 64 + 3 * 128 * 64)
    assert spec.weights.params == param_counts(spec).total  # scales are formats, not parameters
    assert (fp8_params, spec.weights.params) == (73_728, 82_240)  # the rest: norms and the embedding in BF16
    assert (ck.weights, ck.why) == ("fp8_block", "the checkpoint's weights: 90% of parameters stored as F8_E4M3")

    fp4 = {n: (("U8", [s[0], s[1] // 2]) if d == "F8_E4M3" else (d, s)) for n, (d, s) in fp8.items() if d != "F32"}
    for n in [n for n in fp4 if n.endswith("_proj.weight")]:
        fp4[n + "_scale"] = ("F8_E4M3", [1, 1])
    (tmp_path / "fp4").mkdir()
    spec = normalize(load(str(checkpoint(tmp_path / "fp4", small, fp4))))
    assert checkpoint_format(spec).weights == "nvfp4"
    assert spec.weights.params == param_counts(spec).total  # two parameters a packed byte


def test_check_of_a_checkpoint_folder_reports_it(tmp_path, capsys):
    checkpoint(tmp_path, LLAMA, llama_tensors(layers=3))
    rc = main(["check", "--isolated", "--select", "CL011", "--format", "json", str(tmp_path)])
    files = json.loads(capsys.readouterr().out)["files"]
    assert rc == 1
    assert [(x["path"], [f["code"] for f in x["findings"]]) for x in files] == [
        (str(tmp_path / "config.json"), ["CL011"])
    ]


def test_inspect_shows_what_the_weights_say(tmp_path, capsys):
    checkpoint(tmp_path, LLAMA, llama_tensors(layers=3), shards=2)
    assert main(["inspect", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert (
        "  weights beside it: 239,040 parameters in 2 safetensors header(s) (BF16 100%), 3 decoder layers, "
        "embedding 1000 rows" in out
    )

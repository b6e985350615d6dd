import json

from colint.cli.main import main


def test_inspect_json_llama31_8b(capsys):
    assert main(["inspect", "examples/llama-3.1-8b.json", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["params"]["total"] == 8_030_261_248  # transformers 5.24 on the meta device
    assert out["kv_cache_bytes_per_token"] == 131_072  # 32 layers x 2 x 8 kv x 128 x 2 B
    assert {g["name"]: (g["k"], g["n"]) for g in out["gemms"]}["mlp.down_proj"] == (14336, 4096)


def test_missing_file_is_exit_2(capsys):
    assert main(["inspect", "does/not/exist.json"]) == 2
    assert capsys.readouterr().err.strip() == "does/not/exist.json: error: no such file"

"""CL010 (vocab-from-tokenizer): `check` says, once per file, that parameter counts exclude a vocabulary that comes
from a tokenizer (issue 30 item 5), on the condition `inspect` uses (ParamCounts.known_vocab)."""

from __future__ import annotations

import json
from pathlib import Path

from colint.analysis.inventory import param_counts
from colint.cli.main import main

from tests.rules.helpers import corpus, run

ROOT = Path(__file__).resolve().parents[2]
NEMO = str(ROOT / "tests" / "corpus" / "megatron" / "nemo-launcher__llama3_1_405b.yaml")
TORCHCHAT = str(ROOT / "tests" / "corpus" / "meta" / "torchchat__llama2-13B.json")
LLAMA = str(ROOT / "tests" / "corpus" / "hf" / "llama3__Meta-Llama-3.1-8B.json")

MESSAGE = (
    "the vocabulary size is not in the file (it comes from the tokenizer): parameter counts, memory and the "
    "LM head exclude the embedding and output layer"
)


def test_a_tokenizer_vocabulary_is_stated_once_as_an_info():
    for path in (NEMO, TORCHCHAT):
        assert param_counts(corpus(path)).known_vocab is False  # the condition inspect prints its line on
        found = run(path, ["CL010"])
        assert [(f.code, f.severity, f.message, f.line) for f in found] == [("CL010", "info", MESSAGE, None)]
        assert [fx.title for fx in found[0].fixes] == [
            "pass --vocab-size N (or vocab-size = N in [tool.colint]) to count them"
        ]


def test_a_stated_vocabulary_or_vocab_size_setting_says_nothing():
    assert run(LLAMA, ["CL010"]) == []
    from colint.loading import load
    from colint.normalize import normalize

    assert run(normalize(load(NEMO), vocab_size=128256), ["CL010"]) == []


def test_check_states_it_once_per_file_whatever_the_gpus(capsys):
    rc = main(["check", "--isolated", "--select", "CL010", "--gpu", "h100-sxm,b200", "--format", "json", NEMO, LLAMA])
    files = json.loads(capsys.readouterr().out)["files"]
    assert rc == 0  # an info: nothing blocks
    assert [[f["code"] for f in x["findings"]] for x in files] == [["CL010"], []]

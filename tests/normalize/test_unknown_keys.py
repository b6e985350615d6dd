"""CL007 (unknown-key) for every adapter (issue 17 item 5): a key the family does not read is reported, with
"did you mean" when a known key is one edit away; the published corpus gives no warning."""

from __future__ import annotations

import glob
import os

import pytest

from colint.errors import ColintError
from colint.loading import load_text
from colint.rules import Context, select_rules
from colint.normalize import normalize
from colint.normalize.unknown_keys import one_edit
from tests.scripts import load_script

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = sorted(
    glob.glob(os.path.join(TESTS, "corpus", "*", "*.json")) + glob.glob(os.path.join(TESTS, "corpus", "*", "*.yaml"))
)
FIELDS = (
    "num_kv_heads",
    "intermediate_size",
    "num_heads",
    "head_dim",
    "vocab_size",
    "hidden_size",
    "num_layers",
    "max_position_embeddings",
    "num_experts",
    "top_k",
)


def _cl007(spec):
    (rule,) = select_rules(["CL007"])
    return list(rule.check(Context(rule=rule, spec=spec)))


def _misspelled(name: str) -> str:
    return name[:-1] if len(name) > 3 else name + "x"  # num_key_value_heads -> num_key_value_head


def _typo_variants(path: str):
    """(original key path, misspelled text) for each key the adapter read from the file, in FIELDS order."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    syntax = "yaml" if path.endswith(".yaml") else "json"
    doc = load_text(text, path, syntax=syntax)
    spec = normalize(doc)
    for f in FIELDS:
        src = spec.sources.get(f)
        if src is None or src.default or src.line is None or src.derived:
            continue
        from colint.fixing.fix_text import parse_key

        p = parse_key(src.key)
        span = doc.span(p)
        if span is None:
            continue
        name = p[-1]
        bad = _misspelled(name)
        # the key's name starts at its recorded column on its line (quoted in JSON)
        lines = text.splitlines(keepends=True)
        at = sum(len(x) for x in lines[: span.line - 1]) + span.column - 1
        q = 1 if text[at] in "\"'" else 0
        assert text[at + q : at + q + len(name)] == name, (path, src.key)
        yield src.key, name, bad, text[: at + q] + bad + text[at + q + len(name) :], syntax


@pytest.mark.parametrize("path", CORPUS, ids=[os.path.basename(p) for p in CORPUS])
def test_one_misspelled_key_is_reported_with_the_key_meant(path):
    tried = []
    for key, _name, bad, text, syntax in _typo_variants(path):
        try:
            spec = normalize(load_text(text, path, syntax=syntax))
        except ColintError as exc:  # a required key: the located "missing key" error already names it
            tried.append((key, exc.message))
            continue
        found = [f for f in _cl007(spec) if f.key.endswith(bad)]
        assert [(f.severity, f"did you mean '{key}'?" in f.message) for f in found] == [("warning", True)], (
            key,
            [f.message for f in found],
        )
        return
    # a file of required keys only (torchchat's 3-key llama2-13B): every misspelling is a located load error
    assert tried and all(msg for _, msg in tried), path


def test_the_published_corpus_gives_no_cl007_warning():
    infos = 0
    for path in CORPUS:
        with open(path, encoding="utf-8") as fh:
            spec = normalize(load_text(fh.read(), path, syntax="yaml" if path.endswith(".yaml") else "json"))
        found = _cl007(spec)
        assert [f.message for f in found if f.severity != "info"] == [], path
        infos += len(found)
    # each info is a key transformers' class for the family does not define (Qwen3-Coder's
    # shared_expert_intermediate_size under qwen3_moe, gpt2's n_ctx, Neuron training flags, MLX's
    # quantization block on Helium, ...); keys serving engines read at their no-op values are not among them
    # (ENGINE_KEYS: DeepSeek's moe_layer_freq, scoring_func, topk_method and ep_size); GLM-5 adds 2
    # (indexer_rope_interleave, rope_interleave) and MiMo-V2-Flash 2 (attention_chunk_size, swa_rope_theta)
    assert infos == 51


def test_llama_num_key_value_head_typo():
    """The issue's case: the typo leaves 32 KV heads (MHA) in force; CL007 says so and names the key."""
    text = open(os.path.join(TESTS, "corpus", "hf", "llama3__Meta-Llama-3.1-8B.json"), encoding="utf-8").read()
    text = text.replace('"num_key_value_heads"', '"num_key_value_head"')
    spec = normalize(load_text(text, "c.json", syntax="json"))
    (f,) = _cl007(spec)
    assert (f.severity, f.key, f.message) == (
        "warning",
        "num_key_value_head",
        "'num_key_value_head' is not read by this model family; did you mean "
        "'num_key_value_heads'? (model_type llama has no such key; its default applies)",
    )


@pytest.mark.parametrize(
    "a,b,near",
    [
        ("num_key_value_head", "num_key_value_heads", True),
        ("hiden_size", "hidden_size", True),
        ("hidden_szie", "hidden_size", True),
        ("hidden_sizes", "hidden_size", True),
        ("hidden_sixe", "hidden_size", True),
        ("hidden", "hidden_size", False),
        ("bos_token_id", "eos_token_id", True),
        ("abc", "abc", False),
    ],
)
def test_one_edit(a, b, near):
    assert one_edit(a, b) is near and one_edit(b, a) is near


def test_committed_key_table_equals_installed_transformers():
    """colint/normalize/hf_keys.json is what scripts/gen_hf_keys.py makes from the installed transformers."""
    import json

    pytest.importorskip("transformers")
    root = os.path.dirname(TESTS)
    mod = load_script("gen_hf_keys")
    with open(os.path.join(root, "colint", "normalize", "hf_keys.json"), encoding="utf-8") as fh:
        assert json.load(fh) == mod.generate()


QWEN3_NEXT = {
    "model_type": "qwen3_next",
    "hidden_size": 2048,
    "intermediate_size": 5120,
    "num_hidden_layers": 48,
    "num_attention_heads": 16,
    "num_key_value_heads": 2,
    "head_dim": 256,
    "vocab_size": 151936,
    "num_experts": 512,
    "num_experts_per_tok": 10,
    "moe_intermediate_size": 512,
    "shared_expert_intermediate_size": 512,
}


def _spec_of(cfg: dict):
    import json

    return normalize(load_text(json.dumps(cfg, indent=1), "config.json", syntax="json"))


def test_keys_serving_engines_read_are_not_unused():
    # issue 29: Qwen3.5's attn_output_gate is read by vLLM and SGLang; at its default (True, what transformers' class
    # always builds) it changes nothing and CL007 is silent; DeepSeek's router keys likewise
    assert _cl007(_spec_of({**QWEN3_NEXT, "attn_output_gate": True})) == []
    dsv32 = os.path.join(TESTS, "corpus", "hf", "deepseek__DeepSeek-V3.2.json")
    with open(dsv32, encoding="utf-8") as fh:
        assert _cl007(normalize(load_text(fh.read(), dsv32, syntax="json"))) == []
    # set to what makes those engines build another shape, it is reported (advice: colint prices transformers' model)
    (f,) = _cl007(_spec_of({**QWEN3_NEXT, "attn_output_gate": False}))
    assert (f.severity, f.key) == ("info", "attn_output_gate")
    assert "read by vLLM and SGLang (Qwen3-Next/Qwen3.5 gated attention: doubles the q projection)" in f.message
    assert "at False those engines build another shape than the one colint prices" in f.message

"""Generate colint/normalize/hf_defaults.json from the installed transformers.

For every model_type colint reads (``colint.normalize.hf.FAMILIES`` plus the MoE families and the
text configs of the multimodal wrappers listed below), the table holds the class defaults of
the keys that shape the model (sizes, heads, biases, tying, windows, MoE/MLA/Mamba keys) and
the class ``attribute_map`` (canonical name -> the family's own key, e.g. gpt2
``{"hidden_size": "n_embd"}``). colint reads this table instead of importing transformers,
because the import dominates a lint run:

Measured on this 2-vCPU VM (transformers 5.24.0, .venv, ``unset PYTHONDONTWRITEBYTECODE``, .pyc warm,
load average 3-6 from other jobs, so absolute numbers are noisy; 7 runs after a warm-up each):
  - in one process, ``json.load`` of this table (48 model types, 43 kB): 0.36-0.39 ms warm (4.9 ms cold),
    vs ``from transformers import AutoConfig; AutoConfig.for_model("llama")``: 2.9-4.6 s;
  - per fresh process (wall, subprocess.run): ``python -c pass`` 102 ms best / 152 ms median;
    ``import json`` + load the table 132 / 155 ms; transformers + ``for_model`` 2,182 / 3,267 ms.
So reading the table costs ~0.4 ms against ~2-4 s for transformers: ~5,000x less, and keeps
transformers off the lint path (it is only imported by colint/normalize/hf/fallback.py).

Run: ``HF_HUB_OFFLINE=1 .venv/bin/python scripts/gen_hf_defaults.py`` (writes the table);
``--check`` exits 1 when the committed table differs from what the installed transformers gives.
"""

from __future__ import annotations

import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(ROOT, "colint", "normalize", "hf_defaults.json")

# MoE families (adapters written in other modules) and the text configs of multimodal wrappers.
EXTRA_TYPES = [
    "mixtral",
    "qwen2_moe",
    "qwen3_moe",
    "qwen3_next",
    "qwen3_5",
    "qwen3_5_text",
    "qwen3_5_moe",
    "qwen3_5_moe_text",
    "deepseek_v2",
    "deepseek_v3",
    "deepseek_v32",
    "kimi_k2",
    "glm4_moe",
    "dbrx",
    "gpt_oss",
    "jamba",
    "nemotron_h",
    "minimax",
    "minimax_m2",
    "llama4_text",
    "llama4",
    "qwen3_vl_moe",
    "qwen3_vl_moe_text",
    "gemma3_text",
    "gemma4_text",
    "ministral3",
    "qwen2_5_vl_text",
    "llava",
]

# Keys kept from a class's defaults: these exact names, or names matching SHAPE_PATTERN.
KEYS = {
    "hidden_size",
    "intermediate_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "vocab_size",
    "tie_word_embeddings",
    "attention_bias",
    "mlp_bias",
    "max_position_embeddings",
    "sliding_window",
    "use_sliding_window",
    "max_window_layers",
    "layer_types",
    "hidden_act",
    "hidden_activation",
    "activation_function",
    "model_type",
    "sliding_window_pattern",
}
SHAPE_PATTERN = re.compile(
    r"(expert|moe|lora|head_dim|mamba|ssm|conv|window|dense|shared|mtp|nextn|group|chunk|partial|ffn|inner|"
    r"embd|n_head|n_layer|kv|bias|vocab|position|tie|heads|intermediate|hidden|sparse|router|top_?k|attn|"
    r"attention|block|state|expand|linear|latent|mult|parallel|multi_query|alibi|new_decoder|project|"
    r"word_embed|d_model|layers|layer_freq|layer_step|pattern|norm|n_ctx|n_positions|topk)"
)
EXCLUDE_PATTERN = re.compile(
    r"(dropout|_token_id|initializer|^output_|^return_|^use_cache$|^_|eps$|"
    r"^id2label$|^label2id$|chunk_size_feed_forward|scale|^pruned_heads$|pdrop|epsilon|cross_attention)"
)


def _jsonable(v) -> bool:
    if v is None or isinstance(v, (bool, int, float, str)):
        return not (isinstance(v, float) and v != v)
    if isinstance(v, list):
        return all(_jsonable(x) for x in v)
    return False


def model_types() -> list[str]:
    sys.path.insert(0, ROOT)
    from colint.normalize.hf import FAMILIES

    return sorted(set(FAMILIES) | set(EXTRA_TYPES))


def generate() -> dict:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    import transformers
    from transformers import CONFIG_MAPPING

    known = set(CONFIG_MAPPING.keys())
    table: dict = {}
    for mt in model_types():
        if mt not in known:
            continue
        cls = CONFIG_MAPPING[mt]
        try:
            values = cls().to_dict()
        except Exception as exc:  # a class whose own defaults do not validate
            table[mt] = {
                "defaults": {},
                "attribute_map": dict(getattr(cls, "attribute_map", {}) or {}),
                "error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}",
            }
            continue
        defaults = {
            k: v
            for k, v in sorted(values.items())
            if (k in KEYS or SHAPE_PATTERN.search(k)) and not EXCLUDE_PATTERN.search(k) and _jsonable(v)
        }
        amap = {k: v for k, v in sorted((getattr(cls, "attribute_map", {}) or {}).items())}
        table[mt] = {"defaults": defaults, "attribute_map": amap}
    return {"transformers_version": transformers.__version__, "model_types": table}


def main(argv: list[str]) -> int:
    table = generate()
    text = json.dumps(table, indent=1, sort_keys=True) + "\n"
    if "--check" in argv:
        with open(OUT, encoding="utf-8") as fh:
            same = json.load(fh) == json.loads(text)
        print("hf_defaults.json is up to date" if same else "hf_defaults.json differs: rerun this script")
        return 0 if same else 1
    with open(OUT, "w", encoding="utf-8") as fh:
        fh.write(text)
    print(f"wrote {OUT}: {len(table['model_types'])} model types (transformers {table['transformers_version']})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Golden parameter oracle: build each HF corpus config with torch on the meta device.

For every ``tests/corpus/hf/*.json`` this writes ``tests/golden/<stem>.json``::

    {"model_type", "class", "transformers_version", "torch_version",
     "params_total",            # sum of numel over model.parameters() (tied weights once)
     "built_from",              # what was handed to transformers when it is not the file as-is
     "expert_layout",           # for fused 3-D expert tensors: "[E,out,in]" or "[E,in,out]" (gpt-oss)
     "weights": [{"name": "model.layers.*.self_attn.q_proj.weight", "module": "Linear",
                  "shape": [out, in], "in": in, "out": out, "count": layers_with_it}, ...]}

``weights`` lists every parameter with two or more dimensions (``nn.Linear`` weights are
``[out, in]``; ``Conv1D`` (GPT-2) ``[in, out]``; fused experts ``[E, out, in]`` unless
``is_transposed``) with the layer index replaced by ``*``. ``in``/``out`` are the canonical
GEMM dims (for experts: per expert; ``experts`` gives E). A file transformers cannot build
gets ``{"error": ...}``.

Needs torch, kept out of the project's venv:
    python3 -m venv .venv-oracle && .venv-oracle/bin/pip install torch==2.13.0 'transformers>=5,<5.25'
    .venv-oracle/bin/python scripts/gen_golden.py            # all corpus files
    .venv-oracle/bin/python scripts/gen_golden.py --count cfg.json   # print params_total of one config

Legacy files are translated the way the Hub's converted configs read (and the way colint's
adapters read them): the 2019 GPT-2 file without ``model_type`` -> gpt2; Falcon's
``RefinedWeb``/``RefinedWebModel`` (remote code) -> falcon with ``n_head``/``n_head_kv``/``n_layer``
renamed and ``new_decoder_architecture`` set for RefinedWeb; MiMo (remote code, a Qwen2
subclass plus MTP layers that colint reports apart) -> qwen2; multimodal wrappers -> their
language model built from the text config (the wrapper's top-level ``tie_word_embeddings``
applies when the text config has none).
"""

from __future__ import annotations

import glob
import json
import os
import re
import sys
import warnings

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
warnings.filterwarnings("ignore")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CORPUS = os.path.join(ROOT, "tests", "corpus", "hf")
GOLDEN = os.path.join(ROOT, "tests", "golden")

WRAPPER_KEYS = ("text_config", "llm_config", "language_config")
WRAPPER_TEXT_TYPES = {
    "gemma3": "gemma3_text",
    "gemma4": "gemma4_text",
    "mistral3": "mistral",
    "llava": "llama",
    "llava_next": "llama",
}
_LAYER_INDEX = re.compile(r"\.\d+(?=\.)")


def translate(d: dict) -> tuple[str, dict, list[str]]:
    """(model_type, kwargs for AutoConfig.for_model, notes) for one raw config."""
    d = dict(d)
    notes: list[str] = []
    mt = d.pop("model_type", None)
    for k in ("auto_map", "quantization_config", "transformers_version", "_name_or_path"):
        d.pop(k, None)
    if mt is None:
        archs = d.get("architectures") or []
        if "GPT2LMHeadModel" in archs or "n_embd" in d:
            mt = "gpt2"
            notes.append("no model_type: read as gpt2 (architectures / n_embd)")
    if mt in ("RefinedWeb", "RefinedWebModel"):
        notes.append(f"legacy {mt} (remote code) read as falcon")
        for old, new in (
            ("n_head", "num_attention_heads"),
            ("n_head_kv", "num_kv_heads"),
            ("n_layer", "num_hidden_layers"),
            ("n_embed", "hidden_size"),
        ):
            if old in d:
                d[new] = d.pop(old)
        if mt == "RefinedWeb":
            d["new_decoder_architecture"] = True
        mt = "falcon"
    if mt == "mimo":
        notes.append("mimo (remote code) built as qwen2; its MTP layers are not part of params_total")
        mt = "qwen2"
    return mt, d, notes


def build(raw: dict):
    """(model, model_type, notes) on the meta device."""
    import torch
    from transformers import AutoConfig, AutoModel, AutoModelForCausalLM

    mt, kwargs, notes = translate(raw)
    cfg = AutoConfig.for_model(mt, **kwargs)
    text_cfg = cfg
    for w in WRAPPER_KEYS:
        sub = getattr(cfg, w, None)
        if sub is not None and hasattr(sub, "to_dict"):
            text_cfg = sub
            notes.append(f"multimodal wrapper: language model built from {w} ({text_cfg.model_type})")
            raw_text = raw.get(w) if isinstance(raw.get(w), dict) else {}
            if "tie_word_embeddings" not in raw_text and "tie_word_embeddings" in raw:
                text_cfg.tie_word_embeddings = raw["tie_word_embeddings"]
            break
    lm_head_added = None
    with torch.device("meta"):
        try:
            model = AutoModelForCausalLM.from_config(text_cfg)
        except ValueError:
            model = AutoModel.from_config(text_cfg)
            if not getattr(text_cfg, "tie_word_embeddings", False):
                lm_head_added = (text_cfg.vocab_size, text_cfg.hidden_size)
            notes.append(
                "no CausalLM class for the text config: base model + lm_head "
                f"({'tied' if lm_head_added is None else 'untied'})"
            )
    return model, text_cfg.model_type, notes, lm_head_added


def describe(model, lm_head_added=None) -> dict:
    from torch import nn

    owners = {}
    for mname, mod in model.named_modules():
        for pname, _p in mod.named_parameters(recurse=False):
            owners[f"{mname}.{pname}" if mname else pname] = mod
    weights: dict[tuple, dict] = {}
    layouts = set()
    for name, p in model.named_parameters():
        if p.ndim < 2 or name.endswith("bias"):  # 1-D norms/biases; gpt-oss's 2-D expert biases [E, out]
            continue
        mod = owners.get(name)
        cls = type(mod).__name__ if mod is not None else "?"
        shape = list(p.shape)
        entry = {"name": _LAYER_INDEX.sub(".*", name), "module": cls, "shape": shape}
        if isinstance(mod, nn.Linear):
            entry.update({"in": shape[1], "out": shape[0]})
        elif isinstance(mod, nn.Embedding):
            entry.update({"rows": shape[0], "dim": shape[1]})
        elif cls == "Conv1D":
            entry.update({"in": shape[0], "out": shape[1]})
        elif p.ndim == 3 and hasattr(mod, "num_experts"):
            transposed = getattr(mod, "is_transposed", None)
            if transposed is None:  # not decorated (Llama4TextExperts is [E, in, out]): infer from H
                hidden = getattr(model.config, "hidden_size", None)
                transposed = (name.endswith("gate_up_proj") and shape[1] == hidden != shape[2]) or (
                    name.endswith("down_proj") and shape[2] == hidden != shape[1]
                )
            transposed = bool(transposed)
            layouts.add("[E,in,out]" if transposed else "[E,out,in]")
            e, a, b = shape
            entry.update({"experts": e, "in": a if transposed else b, "out": b if transposed else a})
        elif p.ndim == 2 and hasattr(mod, "moe_num_experts"):
            # DBRX's DbrxExpertGLU: w1/v1/w2 are [E*I, H]; w1, v1 act as [out, in] per expert, w2 as [in, out].
            e = mod.moe_num_experts
            rows = shape[0] // e
            layouts.add("dbrx [E*I,H]: w1/v1 [E,out,in], w2 [E,in,out]")
            if name.endswith("w2"):
                entry.update({"experts": e, "in": rows, "out": shape[1]})
            else:
                entry.update({"experts": e, "in": shape[1], "out": rows})
        elif p.ndim == 2 and name.endswith("weight"):  # routers etc.: [out, in] like Linear.weight
            # (state tensors such as Mamba's A_log [d_inner, d_state] are not GEMM weights: no in/out)
            entry.update({"in": shape[1], "out": shape[0]})
        key = (entry["name"], tuple(shape))
        if key in weights:
            weights[key]["count"] += 1
        else:
            entry["count"] = 1
            weights[key] = entry
    total = sum(p.numel() for p in model.parameters())
    out_weights = list(weights.values())
    if lm_head_added is not None:
        v, h = lm_head_added
        total += v * h
        out_weights.append(
            {
                "name": "lm_head.weight",
                "module": "Linear",
                "shape": [v, h],
                "in": h,
                "out": v,
                "count": 1,
                "added": True,
            }
        )
    res = {"params_total": int(total), "weights": out_weights}
    if layouts:
        res["expert_layout"] = sorted(layouts)[0] if len(layouts) == 1 else sorted(layouts)
    return res


def golden_for(path: str) -> dict:
    import torch
    import transformers

    with open(path, encoding="utf-8") as fh:
        raw = json.load(fh)
    base = {"transformers_version": transformers.__version__, "torch_version": torch.__version__.split("+")[0]}
    try:
        model, mt, notes, lm_head_added = build(raw)
    except Exception as exc:  # transformers cannot build it (unknown model_type, remote code only, ...)
        msg = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
        return {"model_type": raw.get("model_type"), **base, "error": f"{type(exc).__name__}: {msg}"}
    out = {"model_type": mt, "class": type(model).__name__, **base}
    if notes:
        out["built_from"] = notes
    out.update(describe(model, lm_head_added))
    return out


def main(argv: list[str]) -> int:
    if argv[:1] == ["--count"]:
        for p in argv[1:]:
            g = golden_for(p)
            print(p, g.get("params_total", g.get("error")))
        return 0
    os.makedirs(GOLDEN, exist_ok=True)
    files = argv or sorted(glob.glob(os.path.join(CORPUS, "*.json")))
    for p in files:
        g = golden_for(p)
        stem = os.path.splitext(os.path.basename(p))[0]
        with open(os.path.join(GOLDEN, stem + ".json"), "w", encoding="utf-8") as fh:
            json.dump(g, fh, indent=1)
            fh.write("\n")
        print(f"{stem}: {g.get('params_total', g.get('error'))}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

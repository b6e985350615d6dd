"""Every causal-LM family of the installed transformers: colint's parameter count against a meta-device build.

Two steps, two interpreters (torch stays out of colint's venv):

    .venv-oracle/bin/python scripts/sweep_families.py --oracle DIR   # default config of every model type with
                                                                      # a *ForCausalLM class -> DIR/<type>.json,
                                                                      # meta-device counts -> DIR/_oracle.json
    .venv/bin/python scripts/sweep_families.py DIR                    # colint on each file: exact / off by x % /
                                                                      # refused, and a summary

Families with a colint adapter must count exactly; the others go through the transformers fallback
(colint/normalize/hf/fallback.py + generic.py), whose counts are approximate by design. ``--geometry`` adds,
for every family, a published-style variant ``<type>__geometry.json`` with non-default attention geometry
(a sliding/full mix where the class has a window, fewer KV heads, another head_dim, v_head_dim and swa_*
sizes apart from the others where the class has them), so that the fallback's per-layer reading is
measured where defaults would hide it; each is reported as exact, approximate or refused. The oracle venv:
``python3 -m venv .venv-oracle && .venv-oracle/bin/pip install torch==2.13.0 'transformers>=5,<5.25'``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def geometry_variant(raw: dict) -> dict | None:
    """A non-default attention geometry of a default config (None when nothing in it can vary)."""
    v = dict(raw)
    heads = raw.get("num_attention_heads")
    n = raw.get("num_hidden_layers")
    changed = False
    if isinstance(heads, int) and heads >= 4 and isinstance(raw.get("num_key_value_heads"), int):
        kv = next(
            (d for d in (heads // 4, heads // 2, 1) if d and heads % d == 0 and d != raw["num_key_value_heads"]), None
        )
        if kv:
            v["num_key_value_heads"], changed = kv, True
    if isinstance(raw.get("head_dim"), int) and raw["head_dim"] >= 64:
        v["head_dim"], changed = raw["head_dim"] // 2 + 32, True  # 64 -> 64, 128 -> 96, 256 -> 160
    if isinstance(raw.get("v_head_dim"), int):
        v["v_head_dim"], changed = max(32, raw["v_head_dim"] // 2), True
    for k in [k for k in raw if k.startswith("swa_") and isinstance(raw[k], int) and not isinstance(raw[k], bool)]:
        v[k], changed = raw[k] * 2, True
    if ("sliding_window" in raw or "layer_types" in raw) and isinstance(n, int) and n >= 2:
        types = raw.get("layer_types")
        if not isinstance(types, list) or all(t in ("full_attention", "sliding_attention") for t in types):
            v["sliding_window"] = 512
            v["layer_types"] = ["full_attention" if (i + 1) % 3 == 0 else "sliding_attention" for i in range(n)]
            changed = True
    return v if changed else None


def _count(raw: dict, gen_golden) -> tuple:
    model, _, notes, lm_head_added = gen_golden.build(raw)
    total = sum(p.numel() for p in model.parameters())
    if lm_head_added:
        total += lm_head_added[0] * lm_head_added[1]
    return total, notes


def oracle(out: str, geometry: bool = False) -> int:
    import warnings

    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    warnings.filterwarnings("ignore")
    sys.path.insert(0, HERE)
    import gen_golden
    from transformers import AutoConfig
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    os.makedirs(out, exist_ok=True)
    result = {}
    for mt in sorted(MODEL_FOR_CAUSAL_LM_MAPPING_NAMES):
        try:
            raw = json.loads(json.dumps({**AutoConfig.for_model(mt).to_dict(), "model_type": mt}, default=str))
            raw.pop("transformers_version", None)
            model, _, notes, lm_head_added = gen_golden.build(raw)
            total = sum(p.numel() for p in model.parameters())
            if lm_head_added:
                total += lm_head_added[0] * lm_head_added[1]
            with open(os.path.join(out, f"{mt}.json"), "w") as fh:
                json.dump(raw, fh, indent=2)
            result[mt] = {"params_total": total, "notes": notes}
        except Exception as exc:  # noqa: BLE001 - a family transformers cannot build from its defaults
            result[mt] = {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
        print(mt, result[mt].get("params_total", result[mt].get("error")), flush=True)
        var = geometry_variant(raw) if geometry and "error" not in result[mt] else None
        if var is not None:
            name = f"{mt}__geometry"
            try:
                total, notes = _count(var, gen_golden)
                with open(os.path.join(out, f"{name}.json"), "w") as fh:
                    json.dump(var, fh, indent=2)
                result[name] = {"params_total": total, "notes": notes}
            except Exception as exc:  # noqa: BLE001 - transformers rejects the variant: not a config to compare
                result[name] = {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
            print(name, result[name].get("params_total", result[name].get("error")), flush=True)
    with open(os.path.join(out, "_oracle.json"), "w") as fh:
        json.dump(result, fh, indent=1)
    return 0


def compare(directory: str) -> int:
    sys.path.insert(0, ROOT)
    from colint.analysis.inventory import param_counts
    from colint.errors import ColintError
    from colint.loading import load
    from colint.normalize import normalize
    from colint.normalize.hf import FAMILIES

    with open(os.path.join(directory, "_oracle.json")) as fh:
        expected = json.load(fh)
    exact, off, refused, crashed = [], [], [], []
    for mt, o in sorted(expected.items()):
        if "error" in o:
            continue
        try:
            got = param_counts(normalize(load(os.path.join(directory, f"{mt}.json")))).total
        except ColintError as exc:
            refused.append((mt, mt.split("__")[0] in FAMILIES, exc.message.split(";")[0]))
            continue
        except Exception as exc:  # noqa: BLE001 - reported, never hidden
            crashed.append((mt, f"{type(exc).__name__}: {exc}"))
            continue
        want = o["params_total"]
        (exact if got == want else off).append((mt, mt.split("__")[0] in FAMILIES, want, got))
    for mt, known, want, got in off:
        print(f"{'adapter ' if known else 'fallback'} {mt:30s} {want:>17,} {got:>17,} {(got - want) / want:+8.2%}")
    for mt, known, why in refused:
        print(f"{'adapter ' if known else 'fallback'} {mt:30s} refused: {why}")
    for mt, why in crashed:
        print(f"CRASH    {mt:30s} {why}")
    errs = [abs(got - want) / want for _, _, want, got in off]
    n = len(exact) + len(off) + len(refused) + len(crashed)
    variants = sum("__" in mt for mt, *_ in exact + off + refused + crashed)
    if variants:
        for label, rows in (("exact", exact), ("approximate", off), ("refused", refused)):
            print(
                f"non-default geometry variants {label}: {sum('__' in r[0] for r in rows)} "
                f"(fallback {sum('__' in r[0] and not r[1] for r in rows)})"
            )
    print(
        f"\n{n} configs transformers builds ({variants} of them non-default geometry variants): {len(exact)} exact "
        f"({sum(k for _, k, *_ in exact)} with an adapter), {len(off)} approximate "
        f"({sum(e < 0.01 for e in errs)} within 1 %, {sum(e < 0.05 for e in errs)} within 5 %), "
        f"{len(refused)} refused with a located error, {len(crashed)} crashed"
    )
    adapter_off = [mt for mt, known, *_ in off if known]
    if adapter_off:
        print(f"families WITH an adapter that do not count exactly: {', '.join(adapter_off)}")
    return 1 if crashed or adapter_off else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("directory")
    ap.add_argument("--oracle", action="store_true", help="build the configs and counts (torch venv)")
    ap.add_argument(
        "--geometry",
        action="store_true",
        help="with --oracle: add a non-default attention geometry variant of every family",
    )
    args = ap.parse_args()
    return oracle(args.directory, args.geometry) if args.oracle else compare(args.directory)


if __name__ == "__main__":
    sys.exit(main())

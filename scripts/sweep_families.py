"""Every causal-LM family of the installed transformers: colint's parameter count against a meta-device build.

Two steps, two interpreters (torch stays out of colint's venv):

    .venv-oracle/bin/python scripts/sweep_families.py --oracle DIR   # default config of every model type with
                                                                      # a *ForCausalLM class -> DIR/<type>.json,
                                                                      # meta-device counts -> DIR/_oracle.json
    .venv/bin/python scripts/sweep_families.py DIR                    # colint on each file: exact / off by x % /
                                                                      # refused, and a summary

Families with a colint adapter must count exactly; the others go through the transformers fallback
(colint/spec/hf/fallback.py + generic.py), whose counts are approximate by design. The oracle venv:
``python3 -m venv .venv-oracle && .venv-oracle/bin/pip install torch==2.13.0 'transformers>=5,<5.25'``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def oracle(out: str) -> int:
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
    with open(os.path.join(out, "_oracle.json"), "w") as fh:
        json.dump(result, fh, indent=1)
    return 0


def compare(directory: str) -> int:
    sys.path.insert(0, ROOT)
    from colint.analysis.inventory import param_counts
    from colint.errors import ColintError
    from colint.loading import load
    from colint.spec import normalize
    from colint.spec.hf import FAMILIES

    with open(os.path.join(directory, "_oracle.json")) as fh:
        expected = json.load(fh)
    exact, off, refused, crashed = [], [], [], []
    for mt, o in sorted(expected.items()):
        if "error" in o:
            continue
        try:
            got = param_counts(normalize(load(os.path.join(directory, f"{mt}.json")))).total
        except ColintError as exc:
            refused.append((mt, mt in FAMILIES, exc.message.split(";")[0]))
            continue
        except Exception as exc:  # noqa: BLE001 - reported, never hidden
            crashed.append((mt, f"{type(exc).__name__}: {exc}"))
            continue
        want = o["params_total"]
        (exact if got == want else off).append((mt, mt in FAMILIES, want, got))
    for mt, known, want, got in off:
        print(f"{'adapter ' if known else 'fallback'} {mt:30s} {want:>17,} {got:>17,} {(got - want) / want:+8.2%}")
    for mt, known, why in refused:
        print(f"{'adapter ' if known else 'fallback'} {mt:30s} refused: {why}")
    for mt, why in crashed:
        print(f"CRASH    {mt:30s} {why}")
    errs = [abs(got - want) / want for _, _, want, got in off]
    n = len(exact) + len(off) + len(refused) + len(crashed)
    print(f"\n{n} families transformers builds from their defaults: {len(exact)} exact "
          f"({sum(k for _, k, *_ in exact)} with an adapter), {len(off)} approximate "
          f"({sum(e < 0.01 for e in errs)} within 1 %, {sum(e < 0.05 for e in errs)} within 5 %), "
          f"{len(refused)} refused with a located error, {len(crashed)} crashed")
    adapter_off = [mt for mt, known, *_ in off if known]
    if adapter_off:
        print(f"families WITH an adapter that do not count exactly: {', '.join(adapter_off)}")
    return 1 if crashed or adapter_off else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("directory")
    ap.add_argument("--oracle", action="store_true", help="build the configs and counts (torch venv)")
    args = ap.parse_args()
    return oracle(args.directory) if args.oracle else compare(args.directory)


if __name__ == "__main__":
    sys.exit(main())

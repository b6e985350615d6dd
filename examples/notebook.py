# %% [markdown]
# # colint in a notebook
#
# A notebook in the percent format (`# %%` cells): open it in VS Code or JupyterLab with jupytext, or
# run it as a script (`python examples/notebook.py [OUTPUT_DIR]`: the table prints as text and the
# charts are written as PNG files into OUTPUT_DIR, default the current directory).
# It needs `pip install 'colint-llm[report]'` for the charts; pandas is used for the table when installed.

# %%
import os
import sys

import colint

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else "."

try:
    from IPython import get_ipython
    from IPython.display import Image, display

    IN_NOTEBOOK = get_ipython() is not None
except ImportError:
    IN_NOTEBOOK = False

# %% [markdown]
# ## The config a training script is about to launch
# A dict of config.json keys (a transformers `PretrainedConfig`, a path, a checkpoint folder or a Hub
# id `org/name` work the same).

# %%
config = {
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 11008,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 32,
    "vocab_size": 32000,
    "max_position_embeddings": 4096,
    "tie_word_embeddings": False,
}
findings = colint.check(config, gpu="b200", tp=8)

# %% [markdown]
# ## Findings as a table
# Each finding is the record `colint check --format json` writes (`f.public()`).

# %%
COLUMNS = ("code", "severity", "key", "message", "estimated_loss_pct")
rows = [
    {**{k: f.public()[k] for k in COLUMNS[:4]}, "estimated_loss_pct": f.impact.estimated_loss_pct} for f in findings
]
try:
    import pandas as pd

    table = pd.DataFrame(rows, columns=COLUMNS)
except ImportError:
    widths = [max(len(c), *(len(str(r[c])) for r in rows)) for c in COLUMNS]
    table = "\n".join(
        " | ".join(str(v).ljust(w) for v, w in zip(row, widths))
        for row in [COLUMNS, *[[r[c] for c in COLUMNS] for r in rows]]
    )
if IN_NOTEBOOK:
    display(table)
else:
    print(table)

# %% [markdown]
# ## What the fixes would be

# %%
for f in findings:
    for fx in f.fixes:
        print(f"{f.code} {fx.safety:>7}: {fx.title}")

# %% [markdown]
# ## The report charts, inline
# `report_data` holds what `colint report` draws; `chart` renders one chart as PNG (or SVG) bytes.

# %%
data = colint.report_data(config, gpu="b200", tp=8)
for name in ("roofline", "time", "pipeline"):
    png = colint.chart(data, name)
    if IN_NOTEBOOK:
        display(Image(png))
    else:
        path = os.path.join(OUT, f"notebook-{name}.png")
        with open(path, "wb") as fh:
            fh.write(png)
        print(f"wrote {path} ({len(png):,} bytes)")

# %% [markdown]
# ## Better variants within 2 % of the parameters

# %%
result = colint.suggest(config, gpu="b200", tp=8, top=3)
for c in result.candidates:
    print(f"{c.params_delta_pct:+.2f}% params  {c.edits}")

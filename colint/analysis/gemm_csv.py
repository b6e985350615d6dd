"""`colint gemm --from-csv`: the GEMM time model over a CSV of shapes (numpy, vectorized).

Input: a header row with at least ``dtype, m, n, k`` (any order; other columns are passed
through); lines starting with ``#`` before the header are copied to the output. Output: the same
rows with ``sol_s, estimate_s, bound, tile_efficiency, wave_efficiency, arithmetic_intensity,
math_s, memory_s, ridge`` appended (``estimate_s`` is the model's estimate, ``sol_s`` the plain
roofline). 100,000 rows take about a second.
"""

from __future__ import annotations

import csv
import io
import sys

from colint.analysis.gemm_model import ALIASES, FORMATS, estimate_arrays
from colint.errors import ProfileError, UsageError

OUT_COLUMNS = ("sol_s", "estimate_s", "bound", "tile_efficiency", "wave_efficiency", "arithmetic_intensity",
               "math_s", "memory_s", "ridge")


def _read(path: str) -> tuple[list[str], list[str], list[list[str]], int]:
    """(comment lines, header, rows, line number of the header)."""
    try:
        fh = sys.stdin if path == "-" else open(path, newline="", encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read: {exc.strerror or exc}", path=path) from None
    with fh:
        text = fh.read()
    comments: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines) and (lines[i].startswith("#") or not lines[i].strip()):
        if lines[i].strip():
            comments.append(lines[i])
        i += 1
    reader = csv.reader(io.StringIO("\n".join(lines[i:])))
    header = next(reader, None)
    if header is None:
        raise UsageError("no header row (need columns dtype,m,n,k)", path=path, line=i + 1)
    return comments, [h.strip() for h in header], list(reader), i + 1


def estimate_csv(path: str, profile, out_dtype: str | None = None) -> str:
    import numpy as np

    comments, header, rows, header_line = _read(path)
    lower = [h.lower() for h in header]
    idx = {}
    for col in ("dtype", "m", "n", "k"):
        if col not in lower:
            raise UsageError(f"missing column '{col}' (need dtype,m,n,k)", path=path, line=header_line, key=col)
        idx[col] = lower.index(col)
    width = len(header)
    dims = np.zeros((len(rows), 3), dtype=np.int64)
    dtypes: list[str] = []
    for r, row in enumerate(rows):
        line = header_line + 1 + r
        if len(row) < width:
            raise UsageError(f"expected {width} columns, found {len(row)}", path=path, line=line)
        d = row[idx["dtype"]].strip().lower()
        d = ALIASES.get(d, d)
        if d not in FORMATS:
            raise UsageError(f"unknown dtype '{row[idx['dtype']]}'; known: {', '.join(FORMATS)}", path=path,
                             line=line, key="dtype")
        dtypes.append(d)
        for j, col in enumerate(("m", "n", "k")):
            try:
                v = int(row[idx[col]])
            except ValueError:
                raise UsageError(f"'{row[idx[col]]}' is not an integer", path=path, line=line, key=col) from None
            if v < 1:
                raise UsageError(f"must be a positive integer (got {v})", path=path, line=line, key=col)
            dims[r, j] = v
    dt = np.array(dtypes)
    results: dict[str, np.ndarray] = {c: np.empty(len(rows), dtype=object) for c in OUT_COLUMNS}
    for d in sorted(set(dtypes)):
        sel = np.nonzero(dt == d)[0]
        try:
            out = estimate_arrays(dims[sel, 0], dims[sel, 1], dims[sel, 2], d, profile, out_dtype)
        except ProfileError as exc:
            raise UsageError(exc.message, path=path, line=header_line + 1 + int(sel[0]), key="dtype") from None
        for c in OUT_COLUMNS:
            results[c][sel] = out[c]
    buf = io.StringIO()
    for c in comments:
        buf.write(c + "\n")
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header + list(OUT_COLUMNS))
    cols = [results[c] for c in OUT_COLUMNS]
    fmt_cols = []
    for c, name in zip(cols, OUT_COLUMNS):
        if name == "bound":
            fmt_cols.append([str(x) for x in c])
        else:
            fmt_cols.append([f"{float(x):.6g}" for x in c])
    for r, row in enumerate(rows):
        w.writerow(row[:width] + [fc[r] for fc in fmt_cols])
    return buf.getvalue()

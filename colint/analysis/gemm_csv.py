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
from colint.util.fileio import read_limited

MAX_GEMM_DIM = 1 << 31  # larger dims overflow the vectorized model's int64 products (1 << 40 gave NaN)

MAX_CSV_BYTES = 64 * 1024 * 1024  # about 2 million rows (a second per 100,000); refused unread beyond
OUT_COLUMNS = (
    "sol_s",
    "estimate_s",
    "bound",
    "tile_efficiency",
    "wave_efficiency",
    "arithmetic_intensity",
    "math_s",
    "memory_s",
    "ridge",
)


def read_csv_sections(path: str) -> tuple[list[str], str, list[str], int]:
    """(comment lines, header line, data lines, line number of the header)."""
    if path == "-":
        raw = sys.stdin.buffer.read(MAX_CSV_BYTES + 1)
        if len(raw) > MAX_CSV_BYTES:
            raise UsageError(f"input is over the {MAX_CSV_BYTES:,}-byte limit for a CSV", path=path, line=1, column=1)
    else:
        raw = read_limited(path, MAX_CSV_BYTES, UsageError, limit_for=" for a CSV")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise UsageError(
            f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})",
            path=path,
            line=line,
            column=exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1,
        ) from None
    lines = text.splitlines()
    comments: list[str] = []
    i = 0
    while i < len(lines) and (lines[i].startswith("#") or not lines[i].strip()):
        if lines[i].strip():
            comments.append(lines[i])
        i += 1
    if i >= len(lines):
        raise UsageError("no header row (need columns dtype,m,n,k)", path=path, line=i + 1)
    data = [ln for ln in lines[i + 1 :] if ln.strip()]
    return comments, lines[i], data, i + 1


def estimate_csv(path: str, profile, out_dtype: str | None = None) -> str:
    """The input CSV with the model's columns appended (each input line kept verbatim)."""
    import numpy as np

    comments, header_line, lines, header_line_no = read_csv_sections(path)
    header = [h.strip() for h in next(csv.reader([header_line]))]
    lower = [h.lower() for h in header]
    idx: dict[str, int] = {}
    for col in ("dtype", "m", "n", "k"):
        if col not in lower:
            raise UsageError(f"missing column '{col}' (need dtype,m,n,k)", path=path, line=header_line_no, key=col)
        idx[col] = lower.index(col)
    width = len(header)
    rows = list(csv.reader(lines))
    short = next((r for r, row in enumerate(rows) if len(row) < width), None)
    if short is not None:
        raise UsageError(
            f"expected {width} columns, found {len(rows[short])}", path=path, line=header_line_no + 1 + short
        )
    dims = np.zeros((len(rows), 3), dtype=np.int64)
    for j, col in enumerate(("m", "n", "k")):
        values = [row[idx[col]] for row in rows]
        try:
            dims[:, j] = np.array(values, dtype=np.int64) if values else 0
        except (ValueError, OverflowError):
            bad = next(r for r, v in enumerate(values) if not v.strip().lstrip("+").isdigit() or len(v.strip()) > 19)
            shown = values[bad] if len(values[bad]) <= 40 else values[bad][:37] + "..."
            why = "is not an integer" if not values[bad].strip().lstrip("+").isdigit() else "is too large"
            raise UsageError(f"'{shown}' {why}", path=path, line=header_line_no + 1 + bad, key=col) from None
        if values and dims[:, j].max() > MAX_GEMM_DIM:
            bad = int(np.argmax(dims[:, j]))
            raise UsageError(
                f"{dims[bad, j]:,} is beyond the {MAX_GEMM_DIM:,} a GEMM dimension may be",
                path=path,
                line=header_line_no + 1 + bad,
                key=col,
            )
        if values and dims[:, j].min() < 1:
            bad = int(np.argmin(dims[:, j]))
            raise UsageError(
                f"must be a positive integer (got {dims[bad, j]})", path=path, line=header_line_no + 1 + bad, key=col
            )
    raw = [row[idx["dtype"]] for row in rows]
    names = {d: ALIASES.get(d.strip().lower(), d.strip().lower()) for d in set(raw)}
    for d, fmt in names.items():
        if fmt not in FORMATS:
            bad = raw.index(d)
            raise UsageError(
                f"unknown dtype '{d}'; known: {', '.join(FORMATS)}",
                path=path,
                line=header_line_no + 1 + bad,
                key="dtype",
            )
    dt = np.array([names[d] for d in raw]) if raw else np.array([], dtype=str)
    text_cols = {c: np.empty(len(rows), dtype=object) for c in OUT_COLUMNS}
    for d in sorted(set(names.values())):
        sel = np.nonzero(dt == d)[0]
        if not len(sel):
            continue
        try:
            out = estimate_arrays(dims[sel, 0], dims[sel, 1], dims[sel, 2], d, profile, out_dtype)
        except ProfileError as exc:
            raise UsageError(exc.message, path=path, line=header_line_no + 1 + int(sel[0]), key="dtype") from None
        for c in OUT_COLUMNS:
            text_cols[c][sel] = out[c].astype(str) if c == "bound" else np.char.mod("%.6g", out[c])
    buf = io.StringIO()
    for c in comments:
        buf.write(c + "\n")
    buf.write(header_line + "," + ",".join(OUT_COLUMNS) + "\n")
    extra = zip(*(text_cols[c] for c in OUT_COLUMNS))
    buf.write("".join(f"{line},{','.join(e)}\n" for line, e in zip(lines, extra)))
    return buf.getvalue()

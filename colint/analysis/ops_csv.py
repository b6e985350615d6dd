"""`colint ops --from-csv`: the op models over a CSV of measured-kernel rows (issue 12).

Input: the columns of the aiconfigurator-core measurement files, as they are (names and units:
``latency`` in ms, ``message_size`` in elements, MoE dispatch/combine ``latency`` in µs);
``op_name`` picks the model. Lines starting with ``#`` before the header are copied. Output: the
same rows with ``estimate_ms`` (the model's ESTIMATE) and ``sol_ms`` (plain roofline) appended;
rows whose ``op_name`` has no model get empty values and one note per name on stderr.
"""

from __future__ import annotations

import csv
import io

from colint.analysis import collectives
from colint.analysis import ops_attention as att
from colint.analysis.gemm_csv import read_csv_sections
from colint.analysis.ops_moe import moe_layer
from colint.errors import UsageError

MLA_KV_LORA, MLA_ROPE, MLA_QK_NOPE, MLA_V = 512, 64, 128, 128  # DeepSeek-V3 MLA (the measured kernels' shapes)
OP_FAMILY = {
    "generation_attention": "generation_attention",
    "context_attention": "context_attention",
    "mla_generation": "mla_generation",
    "mla_context": "mla_context",
    "moe": "moe",
    "all_reduce": "collective",
    "all_gather": "collective",
    "reduce_scatter": "collective",
    "alltoall": "collective",
    "moe_a2a": "moe_a2a",
    "moe_dispatch": "moe_a2a",
    "moe_combine": "moe_a2a",
}
REQUIRED = {
    "generation_attention": ("batch_size", "step", "num_heads", "num_key_value_heads", "head_dim"),
    "context_attention": ("batch_size", "isl", "num_heads", "num_key_value_heads", "head_dim"),
    "mla_generation": ("batch_size", "step", "num_heads"),
    "mla_context": ("batch_size", "isl", "num_heads"),
    "moe": ("num_tokens", "hidden_size", "inter_size", "topk", "num_experts"),
    "collective": ("message_size", "num_gpus"),
    "moe_a2a": ("num_tokens", "hidden_size", "topk", "ep_size"),
}


def _int(row: dict, key: str, default: int | None = None) -> int:
    v = row.get(key, "")
    if v in ("", None):
        if default is None:
            raise KeyError(key)
        return default
    return int(float(v))


def family(op_name: str) -> str | None:
    return OP_FAMILY.get((op_name or "").strip().lower())


def row_estimate(row: dict, profile, model=None) -> tuple[float, float] | None:
    """(estimate_s, sol_s) of one measurement row, or None when its op has no model."""
    fam = family(row.get("op_name", ""))
    if fam is None:
        return None
    return _ROW_ESTIMATORS[fam](row, profile, model)


def _kv_dtype(row: dict) -> str:
    return (row.get("kv_cache_dtype") or "bfloat16").strip().lower()


def _decode_attention_row(row: dict, profile, model) -> tuple[float, float]:
    return att.decode_attention(
        _int(row, "batch_size"),
        _int(row, "step") + 1,
        _int(row, "num_heads"),
        _int(row, "num_key_value_heads"),
        _int(row, "head_dim"),
        _int(row, "window_size", 0),
        _kv_dtype(row),
        profile,
        model,
        q_dtype=(row.get("attn_dtype") or "bfloat16").lower(),
        backend="flashinfer" if "flashinfer" in (row.get("kernel_source") or "") else None,
    )


def _context_attention_row(row: dict, profile, model) -> tuple[float, float]:
    return att.context_attention(
        _int(row, "batch_size"),
        _int(row, "isl"),
        _int(row, "num_heads"),
        _int(row, "num_key_value_heads"),
        _int(row, "head_dim"),
        _int(row, "window_size", 0),
        (row.get("attn_dtype") or "bfloat16").lower(),
        _kv_dtype(row),
        profile,
        model,
    )


def _mla_decode_row(row: dict, profile, model) -> tuple[float, float]:
    return att.mla_decode(
        _int(row, "batch_size"),
        _int(row, "step") + 1,
        _int(row, "num_heads"),
        MLA_KV_LORA,
        MLA_ROPE,
        _kv_dtype(row),
        profile,
        model,
    )


def _mla_prefill_row(row: dict, profile, model) -> tuple[float, float]:
    return att.mla_prefill(
        _int(row, "batch_size"),
        _int(row, "isl"),
        _int(row, "num_heads"),
        MLA_QK_NOPE + MLA_ROPE,
        MLA_V,
        _kv_dtype(row),
        profile,
        model,
        rope=MLA_ROPE,
        kv_lora=MLA_KV_LORA,
    )


def _moe_row(row: dict, profile, model) -> tuple[float, float]:
    source = row.get("kernel_source") or ""
    return moe_layer(
        _int(row, "num_tokens"),
        _int(row, "hidden_size"),
        _int(row, "inter_size"),
        _int(row, "topk"),
        _int(row, "num_experts"),
        _int(row, "moe_tp_size", 1),
        _int(row, "moe_ep_size", 1),
        row.get("distribution") or "balanced",
        row.get("moe_dtype") or "bfloat16",
        profile,
        gated="nongated" not in source,
        model=model,
        fused="min_latency" in source,
        masked=source.strip().lower() == "deepgemm",
    )


def _collective_row(row: dict, profile, model) -> tuple[float, float]:
    dt = (row.get("allreduce_dtype") or row.get("nccl_dtype") or "bfloat16").strip().lower()
    nbytes = _int(row, "message_size") * collectives.ELEM_BYTES.get(dt, 2.0)
    impl = "nccl" if (row.get("kernel_source") or "").strip().upper() == "NCCL" else "custom"
    return collectives.collective(
        row["op_name"].strip().lower(), nbytes, _int(row, "num_gpus"), profile, model, implementation=impl
    )


def _dispatch_combine_row(row: dict, profile, model) -> tuple[float, float]:
    """moe_a2a: latency in µs in these files; the estimate is in seconds like every other."""
    phase = (row.get("phase") or ("combine" if "combine" in row.get("op_name", "") else "dispatch")).lower()
    return collectives.moe_dispatch_combine(
        phase,
        _int(row, "num_tokens"),
        _int(row, "hidden_size"),
        _int(row, "topk"),
        _int(row, "ep_size"),
        (row.get("comm_dtype") or "bfloat16").lower(),
        profile,
        model,
        backend=(row.get("comm_backend") or "deepep_ht").lower(),
        experts=_int(row, "num_experts", 0) or None,
    )


_ROW_ESTIMATORS = {
    "generation_attention": _decode_attention_row,
    "context_attention": _context_attention_row,
    "mla_generation": _mla_decode_row,
    "mla_context": _mla_prefill_row,
    "moe": _moe_row,
    "collective": _collective_row,
    "moe_a2a": _dispatch_combine_row,
}


def read_rows(path: str) -> tuple[list[str], str, list[str], int]:

    return read_csv_sections(path)


def estimate_csv(path: str, profile, warn=None) -> str:
    """The input CSV with ``estimate_ms`` and ``sol_ms`` appended (each input line kept verbatim)."""
    comments, header_line, lines, header_no = read_rows(path)
    header = [h.strip() for h in next(csv.reader([header_line]))]
    if "op_name" not in header:
        raise UsageError("missing column 'op_name'", path=path, line=header_no, key="op_name")
    rows = list(csv.reader(lines))
    unknown: dict[str, int] = {}
    out = io.StringIO()
    for c in comments:
        out.write(c + "\n")
    out.write(header_line + ",estimate_ms,sol_ms\n")
    for i, (line, values) in enumerate(zip(lines, rows)):
        if len(values) < len(header):
            raise UsageError(f"expected {len(header)} columns, found {len(values)}", path=path, line=header_no + 1 + i)
        row = dict(zip(header, values))
        fam = family(row["op_name"])
        try:
            r = row_estimate(row, profile) if fam else None
        except (KeyError, ValueError) as exc:
            missing = exc.args[0] if isinstance(exc, KeyError) else None
            msg = f"missing value for '{missing}'" if missing else f"bad value: {exc}"
            raise UsageError(msg, path=path, line=header_no + 1 + i, key=missing) from None
        if r is None:
            unknown[row["op_name"]] = unknown.get(row["op_name"], 0) + 1
            out.write(line + ",,\n")
            continue
        out.write(f"{line},{r[0] * 1e3:.6g},{r[1] * 1e3:.6g}\n")
    if warn is not None:
        for name, n in unknown.items():
            warn(
                f"colint ops: no model for op_name '{name}' ({n} rows left without an estimate); known: "
                f"{', '.join(OP_FAMILY)}"
            )
    return out.getvalue()

"""Text rendering of an inspection (the dict built by colint.design.inspecting)."""

from __future__ import annotations


def _si(n: float) -> str:
    for unit, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.2f}{unit}"
    return str(n)


def render(info: dict) -> str:
    s = info["spec"]
    p = info["params"]
    lines = [
        f"{info['path']}: {info['format']} / {info['model_type'] or 'unknown model_type'}"
        + (f" ({s['architecture']})" if s.get("architecture") else "")
    ]
    lines.append(
        f"  hidden {s['hidden_size']}, layers {s['num_layers']}, heads {s['num_heads']} "
        f"(kv {s['num_kv_heads']}, head_dim {s['head_dim']}), ffn {s['intermediate_size']}, "
        f"vocab {s['vocab_size']}" + (" (tied)" if s["tie_word_embeddings"] else "")
    )
    kinds = s["layer_kinds"]
    counts = [0] * len(kinds)
    for i in s["layer_pattern"]:
        counts[i] += 1
    for k, c in zip(kinds, counts):
        f = k["ffn"]
        routed = ""
        if f["groups_per_token"] < f["expert_groups"]:  # FFN.group_limited: the readers keep groups_per_token >= 1
            routed = f" (top-{f['top_k']} within {f['groups_per_token']} of {f['expert_groups']} expert groups)"
        lines.append(f"  {c:4d} x {k['name']}{routed}")
    if s.get("mtp_layers"):
        lines.append(f"  + {s['mtp_layers']} MTP layer(s), not counted in the total")
    lines.append(
        f"  params: total {p['total']:,} ({_si(p['total'])}), embedding {p['embedding']:,}, "
        f"lm_head {p['lm_head']:,}, active/token {p['active_per_token']:,} ({_si(p['active_per_token'])})"
    )
    if not p.get("counts_include_vocab", True):
        lines.append("  (vocab size not in the file: counts exclude embedding and LM head; pass --vocab-size)")
    w = s.get("weights")
    if w:  # the checkpoint's safetensors beside the file (colint.loading.weights; CL011 compares them)
        stored = w["dtype_params"]
        total = sum(stored.values()) or 1
        formats = ", ".join(f"{d} {n / total:.0%}" for d, n in sorted(stored.items(), key=lambda x: -x[1]))
        count = f"{w['params']:,} parameters" if w["params"] is not None else "parameters not all known"
        lines.append(
            f"  weights beside it: {count} in {w['files_read']} safetensors header(s)"
            + (f" ({formats})" if formats else "")
            + f", {len(w['layers'])} decoder layers"
            + (f", {w['mtp_layers']} MTP" if w["mtp_layers"] else "")
            + (f", {w['experts']} experts" if w["experts"] else "")
            + (f", embedding {w['embedding_rows']} rows" if w["embedding_rows"] is not None else "")
        )
        lines.extend(f"  weights: {problem}" for problem in w["problems"])
    lines.append(f"  KV cache: {info['kv_cache_bytes_per_token']:,} bytes/token (bf16)")
    lines.append("  weight GEMMs (K x N):")
    w = max((len(g["name"]) for g in info["gemms"]), default=10)
    for g in info["gemms"]:
        extra = f" x{g['count']} experts, M = {g['m_per_token']:.4g}/token" if g["count"] > 1 else ""
        lines.append(f"    {g['name']:<{w}}  {g['k']:>7} x {g['n']:<7} layers {g['layers']:>3}{extra}")
    for n in info.get("notes", []):
        lines.append(f"  note: {n}")
    return "\n".join(lines)

"""CL0xx consistency: values that cannot load, or contradict each other.

These rules depend on the spec alone (no GPU): they run once per file.
"""

from __future__ import annotations

from colint.findings import Severity
from colint.rules.fix_builders import divisors, edit_key
from colint.rules.base import Context, Family, Option, RuleDoc, edit, fix, rule

FAMILY = Family(name="consistency", number=0)


def _attention_kinds(spec):
    return [k for k in spec.layer_kinds if k.mixer.kind == "attention"]


@rule(
    code="CL001",
    fields=("num_heads",),
    name="head-dim-not-integral",
    severity="error",
    summary="hidden_size is not divisible by the head count and no head_dim is given.",
    doc=RuleDoc(
        what="With no explicit head_dim, transformers derives it as hidden_size // num_attention_heads; "
        "when the division has a remainder the projections silently lose columns.",
        why="q/k/v widths become heads x floor(H/heads) != H, so the model is not the one designed, and "
        "several families (Llama, Gemma-3) refuse to load it.",
        example="hidden_size 4000, num_attention_heads 48 → head_dim 83.33",
        fix="Pick a head count that divides hidden_size (head_dim 128 ideally), or give head_dim explicitly.",
        sources=("transformers LlamaConfig validation (hidden_size % num_attention_heads)",),
    ),
    needs_workload=False,
)
def head_dim_not_integral(ctx: Context):
    s = ctx.spec
    src = s.sources.get("head_dim")
    if not _attention_kinds(s):
        return  # MLA (and attention-free stacks): the head widths come from their own keys, not H / heads
    if s.num_heads and (src is None or src.default) and s.hidden_size % s.num_heads:
        hd = 128
        new_heads = max(1, s.hidden_size // hd) if s.hidden_size % hd == 0 else None
        fixes = []
        if new_heads:
            fixes.append(
                fix(
                    f"use {new_heads} heads of head_dim {hd}",
                    "unsafe",
                    edit(edit_key(s, "num_heads", "num_attention_heads"), s.num_heads, new_heads),
                )
            )
        yield ctx.finding(
            "error",
            f"hidden_size {s.hidden_size} is not divisible by {s.num_heads} attention heads and no "
            f"head_dim is given (head_dim would be {s.hidden_size / s.num_heads:.2f})",
            field="num_heads",
            evidence={"hidden_size": s.hidden_size, "num_heads": s.num_heads},
            fixes=fixes,
        )


@rule(
    code="CL002",
    fields=("num_kv_heads",),
    name="kv-heads-not-divisor",
    severity="error",
    summary="The KV head count must divide the query head count.",
    doc=RuleDoc(
        what="Grouped-query attention shares each KV head among num_heads / num_kv_heads query heads.",
        why="With a remainder the groups are unequal: attention kernels (FlashAttention, TRT-LLM) reject it "
        "and transformers' repeat_kv produces the wrong shapes.",
        example="num_attention_heads 32, num_key_value_heads 12",
        fix="Use a KV head count that divides the query heads (8 of 32, say).",
        sources=("GQA, Ainslie et al. 2023 (arXiv 2305.13245)",),
    ),
    needs_workload=False,
)
def kv_heads_not_divisor(ctx: Context):
    seen = set()
    for k in _attention_kinds(ctx.spec):
        m = k.mixer
        key = (m.num_heads, m.num_kv_heads)
        if key in seen or not m.num_kv_heads:
            continue
        seen.add(key)
        if m.num_kv_heads > m.num_heads or m.num_heads % m.num_kv_heads:
            divs = divisors(m.num_heads)
            below = max((d for d in divs if d <= m.num_kv_heads), default=1)
            above = min((d for d in divs if d >= m.num_kv_heads), default=m.num_heads)
            key_name = edit_key(ctx.spec, "num_kv_heads", "num_key_value_heads")
            yield ctx.finding(
                "error",
                f"{m.num_kv_heads} KV heads do not divide {m.num_heads} query heads",
                field="num_kv_heads",
                evidence={"num_heads": m.num_heads, "num_kv_heads": m.num_kv_heads},
                fixes=[
                    fix(f"use {v} KV heads", "unsafe", edit(key_name, m.num_kv_heads, v))
                    for v in sorted({below, above})
                    if v != m.num_kv_heads
                ],
            )


@rule(
    code="CL003",
    fields=("top_k",),
    name="top-k-exceeds-experts",
    severity="error",
    summary="A token cannot be routed to more experts than exist.",
    doc=RuleDoc(
        what="num_experts_per_tok (top-k) must be between 1 and the number of routed experts.",
        why="The router's top-k over E scores fails (torch.topk raises) when k > E.",
        example="num_local_experts 8, num_experts_per_tok 10",
        fix="Lower top-k or add experts.",
        sources=("Shazeer et al. 2017, sparsely-gated MoE",),
    ),
    needs_workload=False,
)
def top_k_exceeds_experts(ctx: Context):
    seen = set()
    for k in ctx.spec.layer_kinds:
        f = k.ffn
        if f.kind != "moe" or (f.num_experts, f.top_k) in seen:
            continue
        seen.add((f.num_experts, f.top_k))
        if f.top_k > f.num_experts or f.top_k < 1:
            yield ctx.finding(
                "error",
                f"top-k {f.top_k} is outside 1..{f.num_experts} routed experts",
                field="top_k",
                evidence={"top_k": f.top_k, "num_experts": f.num_experts},
            )


@rule(
    code="CL004",
    name="layer-list-length",
    severity="error",
    summary="A per-layer list must have one entry per layer.",
    doc=RuleDoc(
        what="Lists such as layer_types, block_configs or a hybrid pattern describe each layer in turn.",
        why="A list longer or shorter than num_hidden_layers leaves layers undefined or ignored; transformers "
        "either raises or silently uses a prefix, so the model built is not the one described.",
        example="num_hidden_layers 16 with 17 layer_types entries (ExecuTorch LFM2-1.2B as published)",
        fix="Make the list length equal the layer count (or the layer count equal the list length).",
        sources=("transformers layer_types validation (v5)",),
    ),
    needs_workload=False,
)
def layer_list_length(ctx: Context):
    s = ctx.spec
    for name, length in sorted(s.per_layer_lists.items()):
        if length != s.num_layers:
            src = s.sources.get(name)
            yield ctx.finding(
                "error",
                f"{name} has {length} entries for {s.num_layers} layers",
                field=name,
                evidence={"entries": length, "num_layers": s.num_layers},
                fixes=[
                    fix(
                        f"set the layer count to {length}",
                        "unsafe",
                        edit(edit_key(s, "num_layers", "num_hidden_layers"), s.num_layers, length),
                    )
                ]
                if src
                else [],
            )


@rule(
    code="CL005",
    name="duplicate-key",
    severity="warning",
    summary="A key appears twice in the same mapping.",
    doc=RuleDoc(
        what="JSON readers keep the last value of a duplicated key; some tools keep the first.",
        why="Two readers of the same file then build two different models, and a reviewer reading the first "
        "occurrence sees a value that is not used.",
        example='"intermediate_size": 11008, ..., "intermediate_size": 14336',
        fix="Delete the occurrence that is not meant.",
        sources=("RFC 8259 §4: names within an object SHOULD be unique",),
    ),
    needs_workload=False,
)
def duplicate_key(ctx: Context):
    for issue in ctx.spec.key_issues:
        if issue.kind == "duplicate":
            yield ctx.finding("warning", f"duplicate key '{issue.source.key}': {issue.detail}", source=issue.source)


@rule(
    code="CL006",
    name="non-standard-literal",
    severity="info",
    summary="A bare Infinity or NaN is not valid JSON.",
    doc=RuleDoc(
        what="Python's json module accepts Infinity/NaN, strict JSON parsers (JavaScript, Rust serde, Go) "
        "reject the whole file.",
        why="Serving stacks and tooling outside Python may fail to read the config.",
        example='"time_step_limit": [0.0, Infinity] (Nemotron-H as published)',
        fix="Use a large finite number, null, or a string the model code understands.",
        sources=("RFC 8259 §6: numeric values that cannot be represented (Infinity, NaN) are not permitted",),
    ),
    needs_workload=False,
)
def non_standard_literal(ctx: Context):
    for issue in ctx.spec.key_issues:
        if issue.kind == "nonstandard":
            yield ctx.finding(
                "info",
                f"'{issue.source.key}' holds bare {issue.detail}, which strict JSON parsers reject",
                source=issue.source,
            )


@rule(
    code="CL007",
    name="unknown-key",
    severity="warning",
    summary="A key the model family does not read (often a typo).",
    doc=RuleDoc(
        what="Keys that the family's config class neither defines nor aliases, and that colint's adapter does "
        "not read, are ignored silently. Warning when a known key is one edit away (a typo: 'did you "
        "mean'), info otherwise (the key is a no-op for the model built). Training-framework formats "
        "(Megatron/NeMo, MaxText, NeoX, OLMo, Meta) report only the typos: their sections hold many keys "
        "that do not shape the model.",
        why="A typo such as 'hiden_size' leaves the default in force: the model built differs from the "
        "one written, with no error anywhere.",
        example='"num_key_value_head": 8 (missing s) → 32 KV heads are built',
        fix="Correct the key name.",
        sources=("transformers PreTrainedConfig accepts unknown kwargs as attributes",),
    ),
    needs_workload=False,
)
def unknown_key(ctx: Context):
    for issue in ctx.spec.key_issues:
        if issue.kind == "structure":  # an unknown model_type read as a known family (normalize/hf/structure.py)
            yield ctx.finding(
                "info", f"model_type {ctx.spec.model_type!r} is not a known family: {issue.detail}", source=issue.source
            )
        if issue.kind in ("unknown", "ignored"):
            msg = (
                f"'{issue.source.key}' is {'not read' if issue.kind == 'unknown' else 'ignored'} by this "
                f"model family"
                + (f"; did you mean '{issue.suggestion}'?" if issue.suggestion else "")
                + (f" ({issue.detail})" if issue.detail else "")
            )
            # a near-miss of a known key is a typo that leaves a default in force; a key no one reads is a no-op
            sev: Severity = "warning" if issue.suggestion or issue.kind == "ignored" else "info"
            yield ctx.finding(sev, msg, source=issue.source)


@rule(
    code="CL008",
    fields=("hidden_size",),
    name="loader-rejects",
    severity="error",
    summary="A value combination that the family's loader rejects.",
    doc=RuleDoc(
        what="Some families validate their config when it is built (e.g. LlamaConfig requires hidden_size "
        "divisible by num_attention_heads even when head_dim is given).",
        why="The checkpoint cannot be loaded by the standard library for the family.",
        example="llama with hidden_size 5120, 48 heads, head_dim 128",
        fix="Change the values so the family's validation passes, or use a family that allows them.",
        sources=("transformers 5.24 config validation",),
    ),
    needs_workload=False,
)
def loader_rejects(ctx: Context):
    for msg in ctx.spec.loader_rejects:
        yield ctx.finding("error", msg, field="hidden_size")


@rule(
    code="CL009",
    fields=("sliding_window",),
    name="window-covers-context",
    severity="info",
    summary="A sliding window as long as the context never slides.",
    doc=RuleDoc(
        what="Sliding-window attention limits each token to the last W positions.",
        why="With W ≥ max_position_embeddings the window layers cost exactly what full attention costs: "
        "the KV-cache and attention savings the design expects do not exist.",
        example="sliding_window 131072 with max_position_embeddings 131072",
        fix="Shrink the window (1k–8k in Gemma/Mistral designs) or declare the layers full attention.",
        sources=("Beltagy et al. 2020 (Longformer); Gemma 2/3 reports",),
    ),
    needs_workload=False,
)
def window_covers_context(ctx: Context):
    s = ctx.spec
    if not s.max_position_embeddings:
        return
    windows = {
        k.mixer.window
        for k in s.layer_kinds
        if k.mixer.kind in ("attention", "mla") and k.mixer.attention == "sliding" and k.mixer.window
    }
    for w in sorted(windows):
        if w >= s.max_position_embeddings:
            yield ctx.finding(
                "info",
                f"sliding window {w} ≥ max_position_embeddings {s.max_position_embeddings}: "
                "the window layers are full attention in practice",
                field="sliding_window",
                evidence={"window_tokens": w, "max_position_tokens": s.max_position_embeddings},
            )


@rule(
    code="CL010",
    fields=("vocab_size",),
    name="vocab-from-tokenizer",
    severity="info",
    summary="The vocabulary comes from a tokenizer: parameter counts exclude embedding and LM head.",
    doc=RuleDoc(
        what="Megatron-LM/NeMo model sections and torchchat/ExecuTorch parameter files name a tokenizer instead "
        "of a vocabulary size (or write -1), so the file alone does not say how many rows the embedding and the "
        "LM head have. colint then counts neither: every parameter count, memory figure and LM-head GEMM of the "
        "check leaves them out, and the vocabulary alignment rules (CL202) cannot judge it. Stated once per file "
        "(`colint inspect` says the same under its counts).",
        why="A 128k vocabulary at hidden 8192 is 2 × 1.05 B parameters (untied): a count or a memory fit that "
        "leaves them out is low by that much, and nothing else in the output says so.",
        example="nemo-launcher llama3_1_405b.yaml: tokenizer.model names the vocabulary; no vocab_size",
        fix="Pass --vocab-size N (or vocab-size = N in [tool.colint]): colint pads it as the framework does "
        "(Megatron: to a multiple of make_vocab_size_divisible_by × tp).",
        sources=("Megatron-LM _vocab_size_with_padding (megatron/training/tokenizer)",),
    ),
    needs_workload=False,
)
def vocab_from_tokenizer(ctx: Context):
    s = ctx.spec
    if s.vocab_size is not None:
        return
    yield ctx.finding(
        "info",
        "the vocabulary size is not in the file (it comes from the tokenizer): parameter counts, memory and the "
        "LM head exclude the embedding and output layer",
        field="vocab_size" if "vocab_size" in s.sources else None,
        evidence={"hidden_size": s.hidden_size},
        fixes=[fix("pass --vocab-size N (or vocab-size = N in [tool.colint]) to count them", "display")],
    )


def _moe_experts(spec) -> int:
    return max((k.ffn.num_experts for k in spec.layer_kinds if k.ffn.kind == "moe"), default=0)


@rule(
    code="CL011",
    fields=("vocab_size", "num_layers", "mtp_layers", "num_experts"),
    name="weights-disagree",
    severity="error",
    summary="The config disagrees with the checkpoint's own weights (vocabulary, layers, experts, MTP).",
    doc=RuleDoc(
        what="In a checkpoint folder, the safetensors index and file headers name every tensor and its shape "
        "(colint reads the headers only, never tensor data). The embedding's rows are the vocabulary, the "
        "model.layers.N names the decoder layers, the experts.N names each layer's routed experts, and mtp "
        "names (or layers past num_hidden_layers, DeepSeek's layout) the multi-token-prediction layers. A config "
        "that states other numbers describes a model the weights are not: an error. A config that declares MTP "
        "layers whose weights were left out of the release is a warning (it loads; MTP speculative decoding has "
        "nothing to run).",
        why="transformers refuses an embedding of the wrong shape, and silently leaves layers or experts that have "
        "no weights at their random initialisation (or drops weights it has no layer for): the model served is "
        "not the one trained, and every estimate made from the config is of another model.",
        example="num_hidden_layers 32 beside weights model.layers.0-39; vocab_size 128256 beside an embedding of "
        "131072 rows",
        fix="State the numbers the weights have (or take the config that was shipped with them).",
        sources=(
            "safetensors format: 8-byte little-endian header length, then a JSON header of dtype and shape per "
            "tensor (huggingface/safetensors README)",
        ),
    ),
    options=(
        Option(
            name="missing_mtp",
            type=bool,
            default=True,
            doc="report MTP layers the config declares and the weights lack (bool)",
        ),
    ),
    needs_workload=False,
)
def weights_disagree(ctx: Context):
    s = ctx.spec
    w = s.weights
    if w is None:
        return
    where = f"the weights in {w.directory}"
    if w.embedding_rows is not None and s.vocab_size is not None and w.embedding_rows != s.vocab_size:
        yield ctx.finding(
            "error",
            f"vocab_size {s.vocab_size} but {w.embedding_name} has {w.embedding_rows} rows in {where}",
            field="vocab_size",
            evidence={"vocab_size": s.vocab_size, "weights_vocab_rows": w.embedding_rows},
            fixes=[
                fix(
                    f"vocab_size {w.embedding_rows}, as the weights have",
                    "unsafe",
                    edit(edit_key(s, "vocab_size"), s.vocab_size, w.embedding_rows),
                )
            ],
        )
    found = len(w.layers)
    if found:
        inside_mtp = found - s.num_layers if s.mtp_layers and found == s.num_layers + s.mtp_layers else 0
        if found != s.num_layers and not inside_mtp:
            yield ctx.finding(
                "error",
                f"{s.num_layers} layers in the config but {where} hold {found} decoder layers "
                f"(layers {w.layers[0]}-{w.layers[-1]})",
                field="num_layers",
                evidence={"num_layers": s.num_layers, "weights_layers": found},
                fixes=[
                    fix(
                        f"{found} layers, as the weights have",
                        "unsafe",
                        edit(edit_key(s, "num_layers", "num_hidden_layers"), s.num_layers, found),
                    )
                ]
                if not s.mtp_layers
                else [],
            )
        elif s.mtp_layers and not inside_mtp and not w.mtp_layers and ctx.option("missing_mtp"):
            yield ctx.finding(
                "warning",
                f"the config declares {s.mtp_layers} MTP layer(s) but {where} hold none: MTP speculative "
                "decoding has no weights to run",
                field="mtp_layers",
                evidence={"mtp_layers": s.mtp_layers, "weights_mtp_layers": 0},
            )
    expected = _moe_experts(s)
    if expected and w.experts and w.experts != expected:
        yield ctx.finding(
            "error",
            f"{expected} routed experts in the config but {where} hold {w.experts} per layer",
            field="num_experts" if "num_experts" in s.sources else None,
            evidence={"num_experts": expected, "weights_experts": w.experts},
        )

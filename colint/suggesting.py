"""`colint suggest`: search the neighbourhood of a design for variants that pass every rule.

Not a rule. The search varies the dimensions a designer owns — hidden size H, FFN width H′,
layers L, query heads, KV heads, routed experts E and expert width H′ₑ — on aligned grids
around the original (H and H′ by the tile width times the tensor-parallel size, heads keeping
head_dim, KV heads dividing the heads, experts on EP-friendly counts), keeps the variants
within ``budget_pct`` of the original's parameters, ranks them by an ESTIMATE of their step
time per parameter (so a variant does not win by being smaller), then verifies the best few
for real: its edits are spliced into the original text (colint.fix_text.apply_edits), the
result is loaded, normalized and checked (colint.checking.check_spec) at the same settings,
and only variants with no errors and no warnings are kept. Their parameter counts and
estimates come from the real spec and ``analyse``; the search model only orders them.

How the search stays fast without a per-family formula: every quantity the search needs —
parameter count, each weight GEMM's per-shard N and K, its layer count, expert count and
top-k, each attention core's FLOPs and bytes, the non-GEMM remainder of each step — is a
polynomial of low degree in the varied dimensions (multilinear; quadratic in H, since q/o
scale as H·heads·head_dim). The module builds a small tensor grid of probe variants
(2–3 values per dimension), runs each through the real adapter and ``analyse``, and
evaluates every candidate by tensor-product Lagrange interpolation of the probes (exact for
such polynomials; candidates lie on aligned values where the per-shard ceilings are exact).
GEMM times then come from ``gemm_model.estimate_arrays`` over the unique (M, N, K) of all
candidates. numpy is imported only here.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from itertools import product
from typing import Any, Optional

from colint.analysis.vector_pricing import estimate_unique
from colint.errors import ColintError, UsageError

OBJECTIVES = ("throughput", "latency", "frontier")
DEFAULT_INTERACTIVITY = 50.0  # tok/s/user the frontier objective ranks at unless told
FRONTIER_POOL = 3  # the frontier objective verifies top x this many variants, then ranks them by their frontiers
DEFAULT_BUDGET_PCT = 2.0
DEFAULT_TOP = 5
MAX_VERIFY = 64  # finalists checked for real (each a load + normalize + check, ~10-30 ms)
INTERP_CHUNK = 8192  # points per interpolation block (bounds memory: chunk x probes floats)
GIVE_UP_AFTER = 16  # ... fewer when every one of them keeps a warning of the original's
TILE = 128  # the tile width every rule aligns to (alignment rules: multiple of 128 per shard)
H_STEPS = 3  # grid points on each side of the original
FFN_STEPS = 3
LAYER_STEPS = 3
HEAD_STEPS = 2
EXPERT_STEPS = 2


@dataclass
class Axis:
    field: str  # ModelSpec field ("hidden_size", ...)
    key: str  # the file's own key for it
    original: int
    values: list[int]  # candidate values, the original among them
    degree: int = 1  # polynomial degree of the searched quantities in this dimension
    step: int = 1  # the grid: probe nodes are multiples of it (an off-grid original is never a node)


@dataclass
class Candidate:
    edits: dict[str, int]  # file key -> new value
    params_total: int
    params_delta_pct: float
    estimates: dict[str, Any]
    search_params_total: int  # the search model's count (equals params_total when the model is exact)
    search_steps_s: tuple[float, float] = (0.0, 0.0)  # the search model's (prefill, decode) step estimates
    findings: dict[str, int] = field(default_factory=dict)  # infos left (errors/warnings are 0)


@dataclass
class SuggestResult:
    path: str
    gpu: str
    label: str
    objective: str
    budget_pct: float
    original: dict[str, Any]
    candidates: list[Candidate]
    searched: int
    within_budget: int
    verified: int
    seconds: float
    axes: list[str]
    notes: list[str] = field(default_factory=list)
    at_interactivity: Optional[float] = None  # the frontier objective's tok/s/user

    def public(self) -> dict:
        return {
            "original": self.original,
            "candidates": [
                {
                    "edits": c.edits,
                    "params_total": c.params_total,
                    "params_delta_pct": round(c.params_delta_pct, 3),
                    "estimates": c.estimates,
                    "findings": c.findings,
                }
                for c in self.candidates
            ],
            "search": {
                "gpu": self.gpu,
                "label": self.label,
                "objective": self.objective,
                "at_interactivity": self.at_interactivity,
                "budget_pct": self.budget_pct,
                "axes": self.axes,
                "candidates_searched": self.searched,
                "within_budget": self.within_budget,
                "verified": self.verified,
                "seconds": round(self.seconds, 3),
                "notes": self.notes,
            },
        }


# ------------------------------------------------------------------------------ helpers
SPLIT_PP = (2, 4, 8)  # pipeline sizes a suggested layer count should split over evenly (issue 17 item 8)


def _is_prime(n: int) -> bool:
    return n > 1 and all(n % d for d in range(2, int(n**0.5) + 1))


def _pp_splits(layers: int) -> int:
    """How many of the common pipeline sizes (2, 4, 8) split ``layers`` evenly."""
    return sum(layers % p == 0 for p in SPLIT_PP)


def _lcm(a: int, b: int) -> int:
    return a * b // math.gcd(a, b)


def _grid(original: int, step: int, steps: int, lo: int = 1) -> list[int]:
    """Multiples of ``step`` nearest the original (``steps`` each side), plus the original."""
    base = round(original / step) * step
    vals = {original}
    for i in range(-steps, steps + 1):
        v = base + i * step
        if v >= lo:
            vals.add(v)
    return sorted(vals)


def _file_key(spec, doc, field_name: str) -> Optional[str]:
    """The key of ``field_name`` in this file, when the file holds the spec's value there."""
    from colint.fix_text import parse_key

    src = spec.sources.get(field_name)
    if src is None or src.default:
        return None
    value = doc.get(parse_key(src.key))
    expected = getattr(spec, field_name, None) if field_name != "num_experts" else None
    if not isinstance(value, int) or isinstance(value, bool):
        return None
    if expected is not None and value != expected:
        return None
    return src.key


def _main_kinds(spec):
    return [k for k, n in zip(spec.layer_kinds, spec.layer_counts()) if n]


def _axes(spec, doc, scenario, pad_vocab: bool = False) -> tuple[list[Axis], Optional[tuple[str, str, int]], list[str]]:
    """The dimensions to vary, and the heads tie (heads key, H key, head_dim) when the file derives
    head_dim as H / heads (heads then follow H so that head_dim stays)."""
    notes: list[str] = []
    tp, ep, pp = scenario.tp, scenario.ep, scenario.pp
    kinds = _main_kinds(spec)
    mixers = {k.mixer.kind for k in kinds}
    moe = [k.ffn for k in kinds if k.ffn.kind == "moe"]
    dense = [k.ffn for k in kinds if k.ffn.kind == "dense"]
    axes: list[Axis] = []
    tie = None

    h_key = _file_key(spec, doc, "hidden_size")
    heads_key = _file_key(spec, doc, "num_heads") if mixers & {"attention", "mla"} else None
    hd_src = spec.sources.get("head_dim")
    head_dim_in_file = hd_src is not None and not hd_src.default
    tied = (
        "attention" in mixers
        and not head_dim_in_file
        and spec.head_dim
        and spec.num_heads
        and spec.num_heads * spec.head_dim == spec.hidden_size
    )
    if h_key:
        h = spec.hidden_size
        if tied:
            if heads_key is None:
                notes.append("hidden_size kept: head_dim is derived from it and the head count has no key")
            else:
                step = _lcm(TILE, spec.head_dim * tp)
                vals = [v for v in _grid(h, step, H_STEPS, lo=step) if v % spec.head_dim == 0]
                axes.append(Axis("hidden_size", h_key, h, vals, degree=2, step=step))
                tie = (heads_key, h_key, spec.head_dim)
        else:
            axes.append(
                Axis("hidden_size", h_key, h, _grid(h, 2 * TILE, H_STEPS, lo=2 * TILE), degree=2, step=2 * TILE)
            )
    if heads_key and not tie:
        nh = spec.num_heads
        base = 8 if nh >= 32 else (4 if nh >= 8 else 1)
        step = _lcm(base, tp)
        vals = [v for v in _grid(nh, step, HEAD_STEPS, lo=step) if v % tp == 0]
        axes.append(Axis("num_heads", heads_key, nh, vals, step=step))
    if "attention" in mixers:
        kv_key = _file_key(spec, doc, "num_kv_heads")
        if kv_key:
            nkv = spec.num_kv_heads
            top = max(spec.num_heads * 2, nkv)
            # at least tp KV heads (fewer replicate the KV cache: CL701), so KV bytes per GPU stay linear
            kv_vals = ({nkv} if nkv >= tp else set()) | {
                1 << i for i in range(0, 12) if max(tp, nkv // 4) <= (1 << i) <= min(top, max(nkv * 4, tp))
            }
            axes.append(Axis("num_kv_heads", kv_key, nkv, sorted(kv_vals), step=tp))
    if dense:
        i_key = _file_key(spec, doc, "intermediate_size")
        if i_key and spec.intermediate_size:
            step = TILE * tp
            axes.append(
                Axis(
                    "intermediate_size",
                    i_key,
                    spec.intermediate_size,
                    _grid(spec.intermediate_size, step, FFN_STEPS, lo=step),
                    step=step,
                )
            )
    if moe:
        f = moe[0]
        e_key = _file_key(spec, doc, "num_experts")
        if e_key and doc.get(_parse(e_key)) == f.num_experts:
            e = f.num_experts
            step = max(8, ep, 1 << max(0, (e // 4).bit_length() - 1))
            step = _lcm(step, ep)
            vals = [v for v in _grid(e, step, EXPERT_STEPS, lo=step) if v > f.top_k and v % ep == 0]
            axes.append(Axis("num_experts", e_key, e, vals, step=step))
        ie_key = _file_key(spec, doc, "moe_intermediate_size")
        if ie_key and doc.get(_parse(ie_key)) == f.expert_intermediate_size and f.expert_intermediate_size:
            step = TILE * (tp if ep == 1 else 1)
            axes.append(
                Axis(
                    "moe_intermediate_size",
                    ie_key,
                    f.expert_intermediate_size,
                    _grid(f.expert_intermediate_size, step, FFN_STEPS, lo=step),
                    step=step,
                )
            )
    v_key = _file_key(spec, doc, "vocab_size")
    v_step = TILE * tp
    if pad_vocab and v_key and spec.vocab_size and spec.vocab_size % v_step:
        # not a searched dimension: when the original's vocabulary draws a CL202 warning or error, the
        # zero-padding it asks for goes into every variant (safe on a trained checkpoint), so that an
        # unaligned vocabulary does not reject them all
        padded = -(-spec.vocab_size // v_step) * v_step
        axes.append(Axis("vocab_size", v_key, spec.vocab_size, [spec.vocab_size, padded]))  # both are nodes
    l_key = _file_key(spec, doc, "num_layers")
    prefix, period = _pattern_period(spec.layer_pattern)
    if l_key and not spec.per_layer_lists and period > max(4, spec.num_layers // 4):
        notes.append("num_layers kept: the layer pattern does not repeat")
    elif l_key and not spec.per_layer_lists:
        n = spec.num_layers
        # whole periods of the layer pattern (interleaved MoE / global-attention layers), on pp
        # layer counts that split over pipeline stages: never a prime (issue 17: 80 -> 79 layers for -0.04%)
        # unless --pp asks for multiples of it; the ranking prefers counts that split over more common pp sizes
        vals = sorted(
            {n}
            | {
                v
                for v in (n + i * period for i in range(-2 * LAYER_STEPS * pp, 2 * LAYER_STEPS * pp + 1))
                if v > prefix + period and v % pp == 0 and (pp > 1 or not _is_prime(v))
            }
        )
        near = sorted(vals, key=lambda v: (abs(v - n), v))[: 2 * LAYER_STEPS + 1]
        axes.append(Axis("num_layers", l_key, n, sorted(near), step=pp))
    elif l_key:
        notes.append("num_layers kept: the file lists per-layer values")
    axes = [a for a in axes if len(a.values) > 1]
    return axes, tie, notes


def _parse(key: str):
    from colint.fix_text import parse_key

    return parse_key(key)


def _edits_for(axes: list[Axis], tie, values: tuple[int, ...]) -> dict[str, int]:
    """File edits (key -> value) of one point of the grid; unchanged keys are left out."""
    out: dict[str, int] = {}
    for a, v in zip(axes, values):
        if v != a.original:
            out[a.key] = int(v)
        if tie and a.key == tie[1]:
            heads_orig = a.original // tie[2]
            if v // tie[2] != heads_orig:
                out[tie[0]] = int(v // tie[2])
    return out


def _variant(doc, edits: dict[str, int], input_format, vocab_size):
    """Load + normalize the original text with ``edits`` applied: (text, doc, spec). A YAML variant is
    built in memory from the loaded original (colint.fix_text.edited_document: no second ruamel parse,
    which took ~0.3 s per variant of a 185 kB file); a JSON one, or one the splice cannot express,
    is parsed from the edited text."""
    from colint.findings import Edit
    from colint.fix_text import apply_edits, edited_document
    from colint.loading import load_text
    from colint.normalize import normalize

    edit_list = [Edit(key=k, old=doc.get(_parse(k)), new=v) for k, v in edits.items()]
    vdoc = edited_document(doc, edit_list)
    if vdoc is None:
        vdoc = load_text(apply_edits(doc, edit_list), doc.path, syntax=doc.syntax)
    return vdoc.text, vdoc, normalize(vdoc, input_format=input_format, vocab_size=vocab_size)


# ------------------------------------------------------------------------------ search model
def _probe_quantities(spec, workload, param_total: int) -> dict[str, float]:
    """Every number the search model interpolates, read off one probe variant."""
    q: dict[str, float] = {"params": float(param_total)}
    for row in workload.gemms["decode"]:
        p = f"g|{row.kind}|{row.name}|"
        q[p + "n"], q[p + "k"], q[p + "layers"] = row.n, row.k, row.layers
        q[p + "count"] = row.gemm.count
        q[p + "topk"] = round(row.gemm.m_per_token * row.gemm.count)
    for regime in ("decode", "prefill"):
        for a in workload.attention[regime]:
            p = f"a|{regime}|{a.kind}|{a.mixer}|"  # a kind with a parallel mixer has two cores
            q[p + "flops"], q[p + "bytes"], q[p + "layers"] = a.flops, a.bytes, a.layers
            q[p + "est"] = a.estimate_s  # the op model's estimate (ops_attention), interpolated as is
        s = workload.steps[regime]
        q[f"r|{regime}"] = s.estimate_s - s.gemm_s - s.attention_core_s
    return q


def _lagrange(values, nodes):
    """Lagrange basis weights (len(values) x len(nodes)) at ``values`` for the given nodes."""
    import numpy as np

    x = np.asarray(values, dtype=np.float64)
    nd = np.asarray(nodes, dtype=np.float64)
    w = np.ones((x.size, nd.size))
    for j in range(nd.size):
        for m in range(nd.size):
            if m != j:
                w[:, j] *= (x - nd[m]) / (nd[j] - nd[m])
    return w


def _pattern_period(pattern: list[int]) -> tuple[int, int]:
    """(prefix, period): the layer pattern repeats with ``period`` after ``prefix`` leading layers
    (DeepSeek's first dense layers: (3, 1); Llama-4's MoE every 2nd and global attention every 4th
    layer: (0, 4)). Layer counts per kind are linear in L only along L ≡ L₀ (mod period)."""
    n = len(pattern)
    for period in range(1, min(n, 16) + 1):
        for prefix in range(0, min(n - period, 8) + 1):
            if all(pattern[i] == pattern[i - period] for i in range(prefix + period, n)):
                return prefix, period
    return 0, n


def _nodes(a: Axis) -> list[int]:
    on_grid = [v for v in a.values if v % a.step == 0]
    vals = on_grid if len(on_grid) >= min(a.degree + 1, len(a.values)) else a.values
    n = min(a.degree + 1, len(vals))
    if n == len(vals):
        return list(vals)
    idx = sorted({round(i * (len(vals) - 1) / (n - 1)) for i in range(n)})
    return [vals[i] for i in idx]


class SearchModel:
    """Interpolates the probe quantities at any grid point, then estimates step times vectorized."""

    def __init__(self, axes, tie, doc, spec, profile, scenario, input_format, vocab_size):
        import numpy as np

        from colint.analysis.inventory import param_counts
        from colint.analysis.workload import analyse

        self.axes, self.profile, self.scenario = axes, profile, scenario
        self.nodes = [_nodes(a) for a in axes]
        shape = tuple(len(n) for n in self.nodes)
        table: list[dict[str, float]] = []
        for point in product(*self.nodes):
            edits = _edits_for(axes, tie, point)
            _, _, pspec = _variant(doc, edits, input_format, vocab_size) if edits else (None, None, spec)
            table.append(_probe_quantities(pspec, analyse(pspec, profile, scenario), param_counts(pspec).total))
        self.keys = list(table[0])
        for t in table[1:]:
            if list(t) != self.keys:
                raise ColintError("the layer structure changes across the searched dimensions")
        self.values = np.array([[t[k] for k in self.keys] for t in table]).reshape(shape + (len(self.keys),))
        self.col = {k: i for i, k in enumerate(self.keys)}
        self.rows = sorted(
            {k.rsplit("|", 1)[0] for k in self.keys if k.startswith("g|")}, key=lambda p: self.keys.index(p + "|n")
        )
        self.attn = sorted(
            {k.rsplit("|", 1)[0] for k in self.keys if k.startswith("a|")}, key=lambda p: self.keys.index(p + "|flops")
        )
        self.row_info = {f"g|{r.kind}|{r.name}": r for r in analyse(spec, profile, scenario).gemms["decode"]}

    def interpolate(self, points, columns: Optional[list[str]] = None):
        """(len(points) x len(columns)) interpolated quantities; ``points`` is an int array (N x axes).

        The tensor-product Lagrange weights of a chunk of points (chunk x probes) times the probe table."""
        import numpy as np

        idx = [self.col[c] for c in (columns or self.keys)]
        table = self.values[..., idx].reshape(-1, len(idx))  # probes (C order over the axes) x quantities
        out = np.empty((points.shape[0], len(idx)))
        for lo in range(0, points.shape[0], INTERP_CHUNK):
            chunk = points[lo : lo + INTERP_CHUNK]
            w = np.ones((chunk.shape[0], 1))
            for j in range(len(self.axes)):
                wj = _lagrange(chunk[:, j], self.nodes[j])
                w = (w[:, :, None] * wj[:, None, :]).reshape(chunk.shape[0], -1)
            out[lo : lo + INTERP_CHUNK] = w @ table
        return out

    def interpolate_grid(self, columns: list[str]):
        """The quantities at every point of the full candidate grid (all axis values, meshgrid "ij"
        order, flattened): one small contraction per axis instead of per-point weights."""
        import numpy as np

        g = self.values[..., [self.col[c] for c in columns]]
        for j, a in enumerate(self.axes):
            w = _lagrange(a.values, self.nodes[j])  # len(values) x len(nodes)
            g = np.moveaxis(np.tensordot(w, g, axes=([1], [j])), 0, j)
        return g.reshape(-1, len(columns))

    def estimate(self, points) -> dict[str, Any]:
        """Vectorized decode / prefill step estimates (s) and params for grid points (N x axes)."""
        import numpy as np

        from colint.analysis.workload import _prefill_shape, routed_expert_rows

        sc, profile = self.scenario, self.profile
        q = self.interpolate(points)
        col = self.col

        def get(name):
            return q[:, col[name]]

        n_pts = points.shape[0]
        out = {"params": np.rint(get("params")).astype(np.int64)}
        for regime in ("decode", "prefill"):
            tokens = sc.decode_concurrency if regime == "decode" else sc.prefill_tokens
            jobs = []  # (dtype, m, n, k, weight per point, grouped n or None)
            for r in self.rows:
                info = self.row_info[r]
                n = np.rint(get(r + "|n")).astype(np.int64)
                k = np.rint(get(r + "|k")).astype(np.int64)
                layers = np.rint(get(r + "|layers"))
                m_tokens = tokens
                if info.name == "lm_head" and regime == "prefill":
                    m_tokens = _prefill_shape(sc)[1]
                if info.parallel == "expert":
                    count = np.rint(get(r + "|count"))
                    topk = np.rint(get(r + "|topk"))
                    inst = np.ceil(count / sc.ep) if sc.ep > 1 else count
                    t_global = m_tokens * sc.attention_dp_groups  # as workload._gemm_rows
                    # workload's formula once per distinct (top-k, experts) pair, read back at every point
                    # (np.unique, not a dense table indexed by top-k x experts: 2^20 experts made it 8 TiB)
                    base = int(count.max()) + 1
                    key = topk.astype(np.int64) * base + count.astype(np.int64)
                    pairs, at = np.unique(key, return_inverse=True)
                    touched_at, m_at = np.zeros(len(pairs)), np.zeros(len(pairs), dtype=np.int64)
                    for i_pair, p in enumerate(pairs.tolist()):
                        pair_topk, pair_experts = divmod(p, base)
                        touched_at[i_pair], m_at[i_pair] = routed_expert_rows(t_global, pair_topk, pair_experts, sc.ep)
                    touched, m = touched_at[at.reshape(key.shape)], m_at[at.reshape(key.shape)]
                    inst = inst * touched
                    grouped_n = np.rint(n * inst).astype(np.int64)
                    jobs.append((info.dtype, m, n, k, layers, np.where(inst > 1, grouped_n, n), True))
                else:
                    m = np.full(n_pts, m_tokens, dtype=np.int64)
                    jobs.append((info.dtype, m, n, k, layers, n, False))
            total = np.zeros(n_pts)
            for dtype, expert in {(j[0], j[6]) for j in jobs}:
                sel = [j for j in jobs if j[0] == dtype and j[6] == expert]
                m_all = np.concatenate([j[1] for j in sel])
                n_all = np.concatenate([j[5] for j in sel])  # grouped N for touched experts, else N
                k_all = np.concatenate([j[3] for j in sel])
                t = estimate_unique(m_all, n_all, k_all, dtype, profile, sc.outputs, grouped=expert)
                for i, j in enumerate(sel):
                    total += t[i * n_pts : (i + 1) * n_pts] * j[4]
            for a in self.attn:
                if not a.startswith(f"a|{regime}|"):
                    continue
                fl, by, layers = get(a + "|flops"), get(a + "|bytes"), np.rint(get(a + "|layers"))
                est = np.maximum(get(a + "|est"), 0.0)  # the attention op models' estimate at the nodes
                total += np.where((fl > 0) | (by > 0), est, 0.0) * layers
            total += get(f"r|{regime}")
            out[regime + "_s"] = total
        return out


def _build_model(axes, tie, doc, spec, target, opts, result) -> Optional[SearchModel]:
    """The search model over ``axes``; an axis whose probe variants do not load alone (or that changes
    the layer structure) is dropped with a note."""
    args = (doc, spec, target.profile, target.scenario, opts.input_format, opts.vocab_size)
    try:
        return SearchModel(axes, tie, *args)
    except ColintError:
        pass
    kept = []
    for a in axes:
        try:
            SearchModel([a], tie, *args)
            kept.append(a)
        except ColintError as exc:
            result.notes.append(f"{a.key} kept: its variants do not load ({exc.message})")
    result.axes = [a.key for a in kept]
    if not kept:
        return None
    try:
        return SearchModel(kept, tie, *args)
    except ColintError as exc:
        result.notes.append(f"no search: {exc.message}")
        return None


# ------------------------------------------------------------------------------ the command
def _estimates(w) -> dict[str, Any]:
    d, p = w.steps["decode"], w.steps["prefill"]
    return {
        "prefill_step_s": p.estimate_s,
        "prefill_tokens_per_s": p.tokens_per_s,
        "ftl_s": p.ftl_s,
        "decode_step_s": d.estimate_s,
        "decode_tokens_per_s": d.tokens_per_s,
        # sequences of the scenario's context that fit per GPU next to weights and activations (an estimate)
        "max_decode_concurrency": min(w.max_decode_concurrency, 10**9),
    }


def _with_deltas(est: dict, base: dict) -> dict:
    out = dict(est)
    for k in ("prefill_tokens_per_s", "decode_step_s"):
        if base.get(k):
            out[k + "_delta_pct"] = round((est[k] / base[k] - 1.0) * 100.0, 3)
    return out


def _counts(findings) -> dict[str, int]:
    return {s: sum(f.severity == s for f in findings) for s in ("error", "warning", "info")}


def suggest(
    path: str,
    opts,
    *,
    budget_pct: float = DEFAULT_BUDGET_PCT,
    objective: str = "throughput",
    top: int = DEFAULT_TOP,
    max_verify: int = MAX_VERIFY,
    at_interactivity: Optional[float] = None,
) -> SuggestResult:
    """Search, rank and verify variants of the design in ``path`` (CheckOptions ``opts``: the
    settings `colint check` uses; the first GPU ranks, every GPU verifies). Objective ``frontier``
    (or an ``at_interactivity``): the verified variants are ranked by the tok/s/GPU their
    throughput–interactivity frontier (colint.analysis.frontier) reaches at ``at_interactivity``
    tok/s/user on the first GPU; the search model pre-ranks by decode step time."""
    import numpy as np

    from colint.analysis.inventory import param_counts
    from colint.analysis.workload import analyse
    from colint.checking import build_targets, check_spec
    from colint.loading import load
    from colint.rules import select_rules
    from colint.normalize import normalize

    if objective not in OBJECTIVES:
        raise UsageError(f"unknown objective {objective!r}; choose from {', '.join(OBJECTIVES)}")
    if budget_pct < 0:
        raise UsageError("--budget-pct must be at least 0")
    if at_interactivity is not None:
        if at_interactivity <= 0:
            raise UsageError("--at-interactivity must be a positive tok/s/user")
        objective = "frontier"
    elif objective == "frontier":
        at_interactivity = DEFAULT_INTERACTIVITY
    t0 = time.perf_counter()
    try:
        doc = load(path)
        spec = normalize(doc, input_format=opts.input_format, vocab_size=opts.vocab_size)
    except ColintError as exc:
        if exc.path is None:
            exc.path = path
        raise
    from colint.analysis.scenario import fit_to_model
    from colint.checking import Target

    targets = [Target(t.gpu, t.profile, fit_to_model(t.scenario, spec)) for t in build_targets(opts)]
    target = targets[0]
    rules = select_rules(opts.select, opts.ignore, opts.extend_select)
    base_w = analyse(spec, target.profile, target.scenario)
    base_params = param_counts(spec).total
    base_est = _estimates(base_w)
    base_findings = check_spec(spec, targets, opts, rules)
    pad_vocab = any(f.code == "CL202" and f.severity in ("error", "warning") for f in base_findings)
    axes, tie, notes = _axes(spec, doc, target.scenario, pad_vocab)
    original: dict[str, Any] = {
        "path": path,
        "params_total": base_params,
        "values": {a.key: a.original for a in axes},
        "estimates": base_est,
        "findings": _counts(base_findings),
    }
    if tie:
        original["values"][tie[0]] = spec.num_heads
    result = SuggestResult(
        path,
        target.gpu,
        base_w.label(),
        objective,
        budget_pct,
        original,
        [],
        0,
        0,
        0,
        0.0,
        [a.key for a in axes],
        notes,
        at_interactivity,
    )
    mem = [f for f in base_findings if f.code.startswith("CL8") and f.severity in ("error", "warning")]
    if mem:
        result.notes.append(
            f"the original does not fit this scenario ({mem[0].code}: {mem[0].message}); variants are "
            "judged on the other rules, each with the same deployment"
        )
    if not axes:
        result.notes.append("nothing to vary: the file holds none of the searched dimensions as plain integers")
        result.seconds = time.perf_counter() - t0
        return result

    model = _build_model(axes, tie, doc, spec, target, opts, result)
    if model is None:
        result.seconds = time.perf_counter() - t0
        return result
    axes = model.axes
    grids = np.meshgrid(*[np.asarray(a.values, dtype=np.int64) for a in axes], indexing="ij")
    points = np.stack([g.reshape(-1) for g in grids], axis=1)
    params = np.rint(model.interpolate_grid(["params"])[:, 0]).astype(np.int64)
    orig_pt = np.array([a.original for a in axes])
    mask = _feasible(points, axes, tie, spec, target.scenario) & ~np.all(points == orig_pt, axis=1)
    result.searched = int(mask.sum())
    limit = base_params * budget_pct / 100.0
    points = points[mask & (np.abs(params - base_params) <= limit)]
    result.within_budget = int(points.shape[0])
    if not points.shape[0]:
        result.seconds = time.perf_counter() - t0
        return result
    est = model.estimate(points)
    score = _score(est["prefill_s"] / est["params"], est["decode_s"] / est["params"], base_est, base_params, objective)
    order = np.argsort(score, kind="stable")
    verified = 0
    rejected: dict[str, int] = {}
    base_codes = {f.code for f in base_findings if f.severity in ("error", "warning")}
    stuck: Optional[set] = None  # codes every rejected finalist so far shares with the original
    shapes: set[frozenset] = set()
    pool = top * FRONTIER_POOL if objective == "frontier" else top
    specs = []  # the verified variants' specs (the frontier objective prices them)
    for i in order:
        if len(result.candidates) >= pool or verified >= max_verify:
            break
        edits = _edits_for(axes, tie, tuple(int(v) for v in points[i]))
        shape = frozenset(edits)
        if shape in shapes:  # one variant per set of changed keys: the best of each kind of change
            continue
        verified += 1
        try:
            _, vdoc, vspec = _variant(doc, edits, opts.input_format, opts.vocab_size)
            findings = check_spec(vspec, targets, opts, rules)
        except ColintError:
            continue
        # the memory fit (CL8xx) depends on the deployment more than on the searched dimensions: a variant that
        # shares the original's memory finding is judged on everything else (the note says the original's stands)
        findings = [f for f in findings if not (f.code.startswith("CL8") and f.code in base_codes)]
        counts = _counts(findings)
        if counts["error"] or counts["warning"]:
            codes = {f.code for f in findings if f.severity in ("error", "warning")}
            for code in codes:
                rejected[code] = rejected.get(code, 0) + 1
            stuck = stuck & codes if stuck is not None else base_codes & codes
            if not result.candidates and stuck and verified >= GIVE_UP_AFTER:
                result.notes.append(
                    f"stopped after {verified} finalists: each keeps the original's "
                    f"{', '.join(sorted(stuck))}, which no searched dimension fixes"
                )
                break
            continue
        total = param_counts(vspec).total
        if abs(total - base_params) > limit:
            continue
        w = analyse(vspec, target.profile, target.scenario)
        need = min(target.scenario.decode_concurrency, base_w.max_decode_concurrency)
        if w.max_decode_concurrency < need:
            # capacity: fewer sequences fit than in the original (or than the scenario asks): its step estimates
            # assume a concurrency it cannot hold
            rejected["memory capacity"] = rejected.get("memory capacity", 0) + 1
            continue
        shapes.add(shape)
        specs.append(vspec)
        result.candidates.append(
            Candidate(
                edits,
                total,
                (total / base_params - 1.0) * 100.0,
                _with_deltas(_estimates(w), base_est),
                int(est["params"][i]),
                search_steps_s=(float(est["prefill_s"][i]), float(est["decode_s"][i])),
                findings={"info": counts["info"]},
            )
        )
    result.verified = verified
    if rejected:
        result.notes.append("finalists rejected by " + ", ".join(f"{c} ({n})" for c, n in sorted(rejected.items())))
    if objective == "frontier":
        _rank_by_frontier(result, spec, specs, target, at_interactivity, top)
        result.seconds = time.perf_counter() - t0
        return result
    for c in result.candidates:
        c.estimates["score_delta_pct"] = round(
            (
                float(
                    _score(
                        c.estimates["prefill_step_s"] / c.params_total,
                        c.estimates["decode_step_s"] / c.params_total,
                        base_est,
                        base_params,
                        objective,
                    )
                )
                - 1.0
            )
            * 100.0,
            3,
        )
    worse = [c for c in result.candidates if c.estimates["score_delta_pct"] > 0]
    if worse:  # a suggestion is never worse than what the user has (issue 17)
        result.candidates = [c for c in result.candidates if c.estimates["score_delta_pct"] <= 0]
        result.notes.append(
            f"{len(worse)} verified variant{'s' if len(worse) != 1 else ''} dropped: estimated worse than the original"
        )
    l_key = next((a.key for a in axes if a.field == "num_layers"), None)

    def rank_key(c):
        # estimated score first (to 0.1%); among equals, layer counts that split over more common pp sizes
        layers = c.edits.get(l_key, spec.num_layers) if l_key else spec.num_layers
        return (round(c.estimates["score_delta_pct"], 1), -_pp_splits(layers), c.estimates["score_delta_pct"])

    result.candidates.sort(key=rank_key)
    result.seconds = time.perf_counter() - t0
    return result


def _rank_by_frontier(result: SuggestResult, spec, specs, target, at: float, top: int) -> None:
    """Rank the verified variants by the tok/s/GPU of their frontier at ``at`` tok/s/user (estimates);
    score_delta_pct is minus the throughput gain over the original's, in % (lower is better, as for
    the other objectives); a variant whose frontier does not reach ``at`` ranks last."""
    from colint.analysis.frontier import frontier

    def at_level(s) -> Optional[float]:
        return frontier(s, target.profile, target.scenario).throughput_at(at)

    base = at_level(spec)
    result.original["estimates"]["frontier_tokens_per_s_per_gpu"] = base
    for c, vspec in zip(result.candidates, specs):
        t = at_level(vspec)
        c.estimates["frontier_tokens_per_s_per_gpu"] = t
        if t is None:
            c.estimates["score_delta_pct"] = None
        elif base:
            c.estimates["score_delta_pct"] = round((1.0 - t / base) * 100.0, 3)
        else:  # the original does not reach the level: any variant that does is better
            c.estimates["score_delta_pct"] = -100.0
    if base is None:
        result.notes.append(f"the original's frontier does not reach {at:g} tok/s/user on {target.gpu}")
    result.candidates.sort(
        key=lambda c: (c.estimates["score_delta_pct"] is None, -(c.estimates["frontier_tokens_per_s_per_gpu"] or 0.0))
    )
    del result.candidates[top:]


# objective -> weight of the prefill step in the score (the decode step takes the rest); the frontier
# objective pre-ranks by decode (the frontier is the decode step's), then ranks by the frontier itself
PREFILL_WEIGHT = {"throughput": 0.5, "latency": 0.25, "frontier": 0.0}


def _score(prefill_s_per_param, decode_s_per_param, base_est: dict, base_params: int, objective: str):
    """Step time per parameter relative to the original's (1.0 = as good; lower is better): the
    weighted geometric mean of the prefill and decode ratios (throughput: equal weights; latency:
    decode weighs three times prefill)."""
    wp = PREFILL_WEIGHT[objective]
    rp = prefill_s_per_param / (base_est["prefill_step_s"] / base_params)
    rd = decode_s_per_param / (base_est["decode_step_s"] / base_params)
    return rp**wp * rd ** (1.0 - wp)


def _feasible(points, axes, tie, spec, scenario):
    """Cheap constraints every rule family enforces (the real check verifies the finalists)."""
    import numpy as np

    ok = np.ones(points.shape[0], dtype=bool)
    col = {a.field: i for i, a in enumerate(axes)}
    tp = scenario.tp
    if tie and "hidden_size" in col:
        heads = points[:, col["hidden_size"]] // tie[2]
    elif "num_heads" in col:
        heads = points[:, col["num_heads"]]
    else:
        heads = np.full(points.shape[0], spec.num_heads)
    if "vocab_size" in col:  # the padded vocabulary only (see _axes)
        ok &= points[:, col["vocab_size"]] == max(axes[col["vocab_size"]].values)
    if "num_kv_heads" in col:
        kv = points[:, col["num_kv_heads"]]
        ok &= (kv <= heads) & (heads % np.maximum(kv, 1) == 0)
    if tp > 1 and ("num_heads" in col or tie):
        ok &= heads % tp == 0
    if "num_heads" in col and not tie:
        hd_src = spec.sources.get("head_dim")
        if hd_src is None or hd_src.default:  # CL001: H must split into the heads when head_dim is derived
            h = points[:, col["hidden_size"]] if "hidden_size" in col else np.full(points.shape[0], spec.hidden_size)
            ok &= h % heads == 0
    return ok

"""The search model of `colint suggest`: step-time and parameter estimates at every point of the grid
(colint.suggesting.axes), without loading each variant.

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

from itertools import product
from typing import Any, Optional

from colint.analysis.inventory import param_counts
from colint.analysis.vector_pricing import estimate_unique
from colint.analysis.gemm_rows import prefill_shape, routed_expert_rows
from colint.analysis.workload import analyse
from colint.errors import ColintError
from colint.suggesting.axes import Axis, edits_for, variant

INTERP_CHUNK = 8192  # points per interpolation block (bounds memory: chunk x probes floats)


def probe_quantities(spec, workload, param_total: int) -> dict[str, float]:
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
        if s.comm_hidden_s:
            # two micro-batches run some layers (colint.analysis.overlap): the step's GEMMs and cores are the
            # halves', while the search prices the whole batch's rows and cores; the remainder takes the difference
            rows = sum(row.layer_s * row.layers for row in workload.gemms[regime])
            cores = sum(a.estimate_s * a.layers for a in workload.attention[regime])
            q[f"r|{regime}"] = s.estimate_s - rows - cores
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

        self.axes, self.profile, self.scenario = axes, profile, scenario
        self.nodes = [_nodes(a) for a in axes]
        shape = tuple(len(n) for n in self.nodes)
        table: list[dict[str, float]] = []
        for point in product(*self.nodes):
            edits = edits_for(axes, tie, point)
            _, _, pspec = variant(doc, edits, input_format, vocab_size) if edits else (None, None, spec)
            table.append(probe_quantities(pspec, analyse(pspec, profile, scenario), param_counts(pspec).total))
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
                    m_tokens = prefill_shape(sc)[1]
                if info.parallel == "expert":
                    count = np.rint(get(r + "|count"))
                    topk = np.rint(get(r + "|topk"))
                    inst = np.ceil(count / sc.moe_ep) if sc.ep > 1 else count  # as gemm_rows._shards
                    t_global = m_tokens * sc.attention_dp_groups  # as gemm_rows._gemm_rows
                    # workload's formula once per distinct (top-k, experts) pair, read back at every point
                    # (np.unique, not a dense table indexed by top-k x experts: 2^20 experts made it 8 TiB)
                    base = int(count.max()) + 1
                    key = topk.astype(np.int64) * base + count.astype(np.int64)
                    pairs, at = np.unique(key, return_inverse=True)
                    touched_at, m_at = np.zeros(len(pairs)), np.zeros(len(pairs), dtype=np.int64)
                    for i_pair, p in enumerate(pairs.tolist()):
                        pair_topk, pair_experts = divmod(p, base)
                        touched_at[i_pair], m_at[i_pair] = routed_expert_rows(
                            t_global, pair_topk, pair_experts, sc.moe_ep
                        )
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


def build_model(axes, tie, doc, spec, target, opts, result) -> Optional[SearchModel]:
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

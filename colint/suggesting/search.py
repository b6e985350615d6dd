"""`colint suggest`: search the neighbourhood of a design for variants that pass every rule.

Not a rule. The search varies the dimensions a designer owns — hidden size H, FFN width H′,
layers L, query heads, KV heads, routed experts E and expert width H′ₑ — on aligned grids
around the original (H and H′ by the tile width times the tensor-parallel size, heads keeping
head_dim, KV heads dividing the heads, experts on EP-friendly counts), keeps the variants
within ``budget_pct`` of the original's parameters, ranks them by an ESTIMATE of their step
time per parameter (so a variant does not win by being smaller), then verifies the best few
for real: its edits are spliced into the original text (colint.fixing.fix_text.apply_edits), the
result is loaded, normalized and checked (colint.engine.checking.check_spec) at the same settings,
and only variants with no errors and no warnings are kept. Their parameter counts and
estimates come from the real spec and ``analyse``; the search model only orders them.

The grid of variants is colint.suggesting.axes; the search model that orders them, colint.suggesting.model.
"""

from __future__ import annotations

import time
from dataclasses import field
from typing import Any, Optional

from colint.analysis.frontier import frontier
from colint.analysis.serving import default_serving
from colint.analysis.inventory import param_counts
from colint.analysis.scenario import fit_to_model
from colint.analysis.workload import analyse
from colint.engine.checking import Target, build_targets, check_spec
from colint.errors import ColintError, UsageError
from colint.loading import load
from colint.normalize import normalize
from colint.rules import select_rules
from colint.suggesting.axes import design_axes, edits_for, feasible, variant
from colint.suggesting.model import build_model
from colint.util.records import dataclass

OBJECTIVES = ("throughput", "latency", "frontier")
DEFAULT_INTERACTIVITY = 50.0  # tok/s/user the frontier objective ranks at unless told
FRONTIER_POOL = 3  # the frontier objective verifies top x this many variants, then ranks them by their frontiers
DEFAULT_BUDGET_PCT = 2.0
DEFAULT_TOP = 5
MAX_VERIFY = 64  # finalists checked for real (each a load + normalize + check, ~10-30 ms)
GIVE_UP_AFTER = 16  # ... fewer when every one of them keeps a warning of the original's


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


def _pp_splits(layers: int) -> int:
    """How many of the common pipeline sizes (2, 4, 8) split ``layers`` evenly."""
    return sum(layers % p == 0 for p in SPLIT_PP)


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
    """Search, rank and verify variants of the design in ``path`` (``opts``: the Settings
    `colint check` uses; the first GPU ranks, every GPU verifies). Objective ``frontier``
    (or an ``at_interactivity``): the verified variants are ranked by the tok/s/GPU their
    throughput–interactivity frontier (colint.analysis.frontier) reaches at ``at_interactivity``
    tok/s/user on the first GPU; the search model pre-ranks by decode step time."""
    objective, at_interactivity = _objective(objective, budget_pct, at_interactivity)
    t0 = time.perf_counter()
    base = _original_design(path, opts)
    pad_vocab = any(f.code == "CL202" and f.severity in ("error", "warning") for f in base.findings)
    axes, tie, notes = design_axes(base.spec, base.doc, base.target.scenario, pad_vocab)
    result = _start_result(base, axes, tie, notes, objective, budget_pct, at_interactivity)
    if axes:
        _search(base, result, axes, tie, top, max_verify)
    else:
        result.notes.append("nothing to vary: the file holds none of the searched dimensions as plain integers")
    result.seconds = time.perf_counter() - t0
    return result


def _objective(objective: str, budget_pct: float, at_interactivity: Optional[float]) -> tuple[str, Optional[float]]:
    """The objective and the interactivity it ranks at, checked (an ``at_interactivity`` means the frontier)."""
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
    return objective, at_interactivity


@dataclass
class _Base:
    """The original design as the search judges its variants: its file, spec, targets, rules and estimates."""

    path: str
    doc: Any
    spec: Any
    opts: Any
    targets: list[Target]
    rules: Any
    workload: Any  # on the first target, which ranks
    params: int
    estimates: dict[str, Any]
    findings: list

    @property
    def target(self) -> Target:
        return self.targets[0]


def _original_design(path: str, opts) -> _Base:
    """Load, analyse and check the original design at ``opts``."""
    try:
        doc = load(path)
        spec = normalize(doc, input_format=opts.input_format, vocab_size=opts.vocab_size)
    except ColintError as exc:
        if exc.path is None:
            exc.path = path
        raise

    targets = [Target(t.gpu, t.profile, fit_to_model(t.scenario, spec)) for t in build_targets(opts)]
    rules = select_rules(opts.select, opts.ignore, opts.extend_select)
    base_w = analyse(spec, targets[0].profile, targets[0].scenario)
    return _Base(
        path,
        doc,
        spec,
        opts,
        targets,
        rules,
        base_w,
        param_counts(spec).total,
        _estimates(base_w),
        check_spec(spec, targets, opts, rules),
    )


def _start_result(base: _Base, axes, tie, notes, objective, budget_pct, at_interactivity) -> SuggestResult:
    """The result before any variant: the original's values, estimates and findings, and its notes."""
    original: dict[str, Any] = {
        "path": base.path,
        "params_total": base.params,
        "values": {a.key: a.original for a in axes},
        "estimates": base.estimates,
        "findings": _counts(base.findings),
    }
    if tie:
        original["values"][tie[0]] = base.spec.num_heads
    result = SuggestResult(
        base.path,
        base.target.gpu,
        base.workload.label(),
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
    mem = [f for f in base.findings if f.code.startswith("CL8") and f.severity in ("error", "warning")]
    if mem:
        result.notes.append(
            f"the original does not fit this scenario ({mem[0].code}: {mem[0].message}); variants are "
            "judged on the other rules, each with the same deployment"
        )
    return result


def _search(base: _Base, result: SuggestResult, axes, tie, top: int, max_verify: int) -> None:
    """Enumerate the grid within the budget, order it by the search model, verify the best and rank them."""
    import numpy as np

    model = build_model(axes, tie, base.doc, base.spec, base.target, base.opts, result)
    if model is None:
        return
    axes = model.axes
    grids = np.meshgrid(*[np.asarray(a.values, dtype=np.int64) for a in axes], indexing="ij")
    points = np.stack([g.reshape(-1) for g in grids], axis=1)
    params = np.rint(model.interpolate_grid(["params"])[:, 0]).astype(np.int64)
    orig_pt = np.array([a.original for a in axes])
    mask = feasible(points, axes, tie, base.spec, base.target.scenario) & ~np.all(points == orig_pt, axis=1)
    result.searched = int(mask.sum())
    limit = base.params * result.budget_pct / 100.0
    points = points[mask & (np.abs(params - base.params) <= limit)]
    result.within_budget = int(points.shape[0])
    if not points.shape[0]:
        return
    est = model.estimate(points)
    score = _score(
        est["prefill_s"] / est["params"], est["decode_s"] / est["params"], base.estimates, base.params, result.objective
    )
    order = np.argsort(score, kind="stable")
    pool = top * FRONTIER_POOL if result.objective == "frontier" else top
    specs = _verify(base, result, axes, tie, points, est, order, limit, pool, max_verify)
    if result.objective == "frontier":
        assert result.at_interactivity is not None  # set whenever the objective is the frontier
        _rank_by_frontier(result, base.spec, specs, base.target, result.at_interactivity, top)
    else:
        _rank_by_score(result, axes, base)


def _verify(
    base: _Base, result: SuggestResult, axes, tie, points, est, order, limit: float, pool: int, max_verify: int
):
    """Check the variants in ``order`` for real until ``pool`` pass (or ``max_verify`` were tried): each is kept
    with no error or warning, within the budget and holding the original's concurrency. Returns their specs."""
    target = base.target
    verified = 0
    rejected: dict[str, int] = {}
    base_codes = {f.code for f in base.findings if f.severity in ("error", "warning")}
    stuck: Optional[set] = None  # codes every rejected finalist so far shares with the original
    shapes: set[frozenset] = set()
    specs = []  # the verified variants' specs (the frontier objective prices them)
    for i in order:
        if len(result.candidates) >= pool or verified >= max_verify:
            break
        edits = edits_for(axes, tie, tuple(int(v) for v in points[i]))
        shape = frozenset(edits)
        if shape in shapes:  # one variant per set of changed keys: the best of each kind of change
            continue
        verified += 1
        try:
            _, vdoc, vspec = variant(base.doc, edits, base.opts.input_format, base.opts.vocab_size)
            findings = check_spec(vspec, base.targets, base.opts, base.rules)
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
        if abs(total - base.params) > limit:
            continue
        w = analyse(vspec, target.profile, target.scenario)
        need = min(target.scenario.decode_concurrency, base.workload.max_decode_concurrency)
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
                (total / base.params - 1.0) * 100.0,
                _with_deltas(_estimates(w), base.estimates),
                int(est["params"][i]),
                search_steps_s=(float(est["prefill_s"][i]), float(est["decode_s"][i])),
                findings={"info": counts["info"]},
            )
        )
    result.verified = verified
    if rejected:
        result.notes.append("finalists rejected by " + ", ".join(f"{c} ({n})" for c, n in sorted(rejected.items())))
    return specs


def _rank_by_score(result: SuggestResult, axes, base: _Base) -> None:
    """Rank the verified variants by their estimated score against the original's (throughput or latency),
    dropping those estimated worse; among equals, layer counts that split over more common pp sizes first."""
    for c in result.candidates:
        c.estimates["score_delta_pct"] = round(
            (
                float(
                    _score(
                        c.estimates["prefill_step_s"] / c.params_total,
                        c.estimates["decode_step_s"] / c.params_total,
                        base.estimates,
                        base.params,
                        result.objective,
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
    spec = base.spec

    def rank_key(c):
        # estimated score first (to 0.1%); among equals, layer counts that split over more common pp sizes
        layers = c.edits.get(l_key, spec.num_layers) if l_key else spec.num_layers
        return (round(c.estimates["score_delta_pct"], 1), -_pp_splits(layers), c.estimates["score_delta_pct"])

    result.candidates.sort(key=rank_key)


def _rank_by_frontier(result: SuggestResult, spec, specs, target, at: float, top: int) -> None:
    """Rank the verified variants by the tok/s/GPU of their frontier at ``at`` tok/s/user (estimates);
    score_delta_pct is minus the throughput gain over the original's, in % (lower is better, as for
    the other objectives); a variant whose frontier does not reach ``at`` ranks last."""

    def at_level(s) -> Optional[float]:
        # served as `colint pareto` serves by default: aggregated, each request's prefill charged (issue 31)
        sv = default_serving(target.scenario.context)
        return frontier(s, target.profile, target.scenario, serving=sv).throughput_at(at)

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

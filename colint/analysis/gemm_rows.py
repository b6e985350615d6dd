"""The weight GEMMs of one step, per GPU shard (docs/design.md §5): one ``WorkloadGemm`` row per GEMM (or
fused q/k/v, gate/up group) of each layer kind and regime, with per-shard M/N/K under the scenario's
tp/ep, routed experts' rows under balanced routing (``routed_expert_rows``) and the time of one
instance and of the whole layer (a grouped GEMM for experts) from the GEMM time model
(colint.analysis.gemm_model): ESTIMATES. Also the step's shape that every part of the analysis reads:
tokens per forward of a regime and the prefill chunk shape. ``colint.analysis.workload.analyse`` sums
these rows; ``colint.analysis.footprint.memory_at`` reads their shards without the time model.
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import NamedTuple

from colint.analysis.gemm_model import GemmTime, estimate, estimate_s
from colint.analysis.inventory import Gemm, is_gate, kind_gemms, layer_counts, lm_head_gemm
from colint.analysis.moe import busiest_rank_factor, touched_share
from colint.analysis.ops_moe import expert_k_padded, grouped_model
from colint.analysis.scenario import Scenario
from colint.hardware_profiles import time_model
from colint.util.memo import keep, per_spec
from colint.normalize.model_spec import ModelSpec
from colint.util.records import dataclass

REGIMES = ("decode", "prefill")
ROUTER_FORMAT = "bf16"  # routers stay in high precision (docs/design.md §9.6)
SPEC_MEMO_MAX = (
    512  # specs kept by the per-spec memos (these GEMM entries, analyse's workloads): a bulk run's recent files
)


@dataclass(frozen=True)
class WorkloadGemm:
    """One weight GEMM (or fused group) of one layer kind in one regime, per GPU shard."""

    name: str  # "attn.qkv_proj" for a fused q/k/v group, else the inventory name
    members: tuple[str, ...]  # inventory names fused into it
    kind: str  # LayerKind name ("" for the LM head)
    regime: str  # "decode" | "prefill"
    layers: int  # layers of this kind
    parallel: str  # column | row | expert | replicated
    component: str  # "attention" | "ffn" | "other" (LM head)
    m: int  # rows per GEMM instance (tokens; per expert for routed experts)
    n: int  # per shard
    k: int  # per shard
    instances: float  # GEMM instances per layer per GPU (routed experts touched per GPU; else 1)
    dtype: str
    time: GemmTime  # roofline + estimate of ONE instance (AI, bound, ridge, m_star, efficiencies)
    layer_s: float  # estimate for all instances in one layer (a grouped GEMM for experts)
    gemm: Gemm  # the (first) inventory entry

    @property
    def total_s(self) -> float:
        return self.layer_s * self.layers

    @property
    def bound(self) -> str:
        return self.time.bound

    @property
    def arithmetic_intensity(self) -> float:
        return self.time.arithmetic_intensity

    @property
    def m_star(self) -> float:
        return self.time.m_star


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


_COMPONENTS: dict[str, str] = {}  # GEMM name -> its component (a few dozen names; _shards asks per GEMM and layout)


def _component(g: Gemm) -> str:
    got = _COMPONENTS.get(g.name)
    return got if got is not None else keep(_COMPONENTS, g.name, _component_of(g.name), 4096)


def _component_of(name: str) -> str:
    if name == "lm_head":
        return "other"
    if name.startswith(("attn.", "mla.", "linear_attn.", "mamba.")):
        return "attention"
    return "ffn"


def _fuse(rows: list[Gemm]) -> list[tuple[str, tuple[str, ...], Gemm, int]]:
    """Fuse q/k/v and gate/up groups as serving engines do: (name, members, first, N total)."""
    out: list[tuple[str, tuple[str, ...], Gemm, int]] = []
    groups: dict[tuple, int] = {}
    for g in rows:
        if g.group and g.count == 1:
            key = (g.group, g.k, g.parallel)
            if key in groups:
                i = groups[key]
                name, members, first, n = out[i]
                out[i] = (name, members + (g.name,), first, n + g.n)
                continue
            groups[key] = len(out)
            prefix = g.name.rsplit(".", 1)[0]
            name = f"{prefix}.qkv_proj" if g.group == "qkv" else f"{prefix}.gate_up"
            out.append((name, (g.name,), g, g.n))
        else:
            out.append((g.name, (g.name,), g, g.n))
    return [(name if len(m) > 1 else m[0], m, f, n) for name, m, f, n in out]


def _shard(g: Gemm, n: int, sc: Scenario) -> tuple[int, int, float]:
    """(n, k, GEMM instances per GPU) of one layer's copy of g under the scenario's parallelism: the readable form of
    what _shards computes inline for many GEMMs at once (tests/analysis/test_memo.py holds the two equal)."""
    k = g.k
    tp = sc.tp if _component(g) != "ffn" else sc.group_gpus  # Helix: the FFN over tp x kvp GPUs
    if g.parallel == "column":
        return ceil_div(n, tp), k, 1.0
    if g.parallel == "row":
        return n, ceil_div(k, tp), 1.0
    if g.parallel == "expert":
        if sc.ep > 1:
            # experts over moe_ep groups of moe_tp GPUs, each expert split moe_tp ways: gate/up on N, down on K
            inst, mtp = float(ceil_div(g.count, sc.moe_ep)), sc.moe_tp
            return (n, ceil_div(k, mtp), inst) if "down" in g.name else (ceil_div(n, mtp), k, inst)
        # experts tensor-parallel (moe_tp = tp): gate/up split N, down split K
        if "down" in g.name:
            return n, ceil_div(k, tp), float(g.count)
        return ceil_div(n, tp), k, float(g.count)
    return n, k, 1.0


def _shards(items, sc: Scenario) -> list[tuple[int, int, float]]:
    """``[_shard(g, n, sc) for g, n in items]``, the same steps inlined (every GEMM of a spec at each layout)."""
    tp, group, ep, moe_ep, mtp = sc.tp, sc.group_gpus, sc.ep, sc.moe_ep, sc.moe_tp
    out: list[tuple[int, int, float]] = []
    for g, n in items:
        k = g.k
        t = tp if _component(g) != "ffn" else group
        parallel = g.parallel
        if parallel == "column":
            out.append((-(-n // t), k, 1.0))
        elif parallel == "row":
            out.append((n, -(-k // t), 1.0))
        elif parallel == "expert":
            if ep > 1:
                inst = float(-(-g.count // moe_ep))
                out.append((n, -(-k // mtp), inst) if "down" in g.name else (-(-n // mtp), k, inst))
            elif "down" in g.name:
                out.append((n, -(-k // t), float(g.count)))
            else:
                out.append((-(-n // t), k, float(g.count)))
        else:
            out.append((n, k, 1.0))
    return out


def regime_tokens(sc: Scenario, regime: str) -> int:
    return sc.decode_concurrency if regime == "decode" else sc.prefill_tokens


def prefill_shape(sc: Scenario) -> tuple[int, int, int]:
    """(sequence chunk length S, sequences per step, chunks per prompt)."""
    s = min(sc.context, sc.prefill_tokens)
    return s, max(1, sc.prefill_tokens // s), ceil_div(sc.context, sc.prefill_tokens)


@functools.lru_cache(maxsize=1 << 14, typed=True)  # pure; a check asks for the same few again and again
def routed_expert_rows(t_global: int, topk: int, experts: int, ep: int = 1) -> tuple[float, int]:
    """(share of the ``experts`` that get >= 1 of ``t_global`` tokens' top-``topk`` picks, rows of a
    touched expert's GEMM) under balanced routing (an estimate): of the mean rank, or with ``ep`` > 1 of the
    busiest of the ``ep`` ranks, which sets the layer's time. The busiest rank holds ``busiest`` times the mean
    rank's picks (colint.analysis.moe.busiest_rank_factor), and more picks touch more of its experts: the share
    its picks touch is that of ``t_global · busiest`` tokens (at 4 tokens, top-8 of 256 experts over 8 ranks:
    6.8 picks on 6.2 of the busiest rank's 32 experts, against 3.8 touched on the mean rank). suggest's search
    and the frontier price with it too."""
    busiest = busiest_rank_factor(t_global, topk, experts, ep)
    touched = touched_share(t_global * busiest, topk, experts)
    # round() drops float noise (32.00000000000024 is 32)
    return touched, max(1, math.ceil(round(t_global * topk / experts / max(touched, 1e-12) * busiest, 6)))


_ENTRIES_MEMO: dict = {}  # id(spec) -> (spec, entries): analyse and memory_at of one spec at many scenarios


class PlanGroup(NamedTuple):
    """One fused group of a used kind's GEMMs as the rows' plan holds it: its value (every field but ``gid``)
    and ``gid``, the id of that value (a row depends on it alone, with the scenario: _GROUP_ROWS)."""

    kind: str  # the layer kind's name ("" for the LM head)
    layers: int
    name: str  # the row's name: the fused GEMM's (attn.qkv_proj, mlp.gate_up) or the GEMM's own
    members: tuple[str, ...]  # the GEMMs fused into it
    first: Gemm  # the first of them: its K, parallelism, expert count and routing
    n_total: int  # N of the fused GEMM
    component: str  # attention, ffn or other (the LM head): which tp splits it (_shard)
    router: bool  # a routing gate (inventory.is_gate): it runs in BF16
    lm_head: bool
    experts: bool  # routed experts: a grouped GEMM over the touched ones
    topk: int  # the experts each token picks (0 unless routed experts)
    gid: int


class KindEntry(NamedTuple):
    """A used layer kind's GEMMs, the same for every regime and scenario (read-only)."""

    name: str  # the kind's name ("" for the LM head)
    gemms: list[Gemm]
    layers: int
    fused: list[tuple[str, tuple[str, ...], Gemm, int]]  # _fuse: (name, members, first, N total)
    plan: tuple[int, list[PlanGroup]]  # its part of the rows' plan (_kind_plan): the kind's id, its groups


def gemm_entries(spec: ModelSpec) -> list[KindEntry]:
    """The entry of each used layer kind, then the LM head's (kind ""); the same for every regime and scenario,
    so it is built once per spec object (read-only)."""
    return per_spec(_ENTRIES_MEMO, id(spec), spec, lambda: _build_gemm_entries(spec), SPEC_MEMO_MAX)


# A used kind's entry depends on its value, the hidden size and its layer count alone: the closure's edited specs
# keep most kinds of the file they edit, and one family's files share kinds. (layer kind, h, layers and their
# types: weights.kind_gemms' key) -> the entry (read-only); the LM head's by (its Gemm). Cleared when full.
_KIND_ENTRIES: dict[tuple, KindEntry] = {}
KIND_ENTRIES_MAX = 8192  # entries kept: the 1,000-config large-MoE mix with its closure builds 1,810 (one process)


def _build_gemm_entries(spec: ModelSpec) -> list[KindEntry]:
    entries: list[KindEntry] = []
    h = spec.hidden_size
    for kind, n_layers in zip(spec.layer_kinds, layer_counts(spec)):
        if n_layers:
            key = (kind, h, n_layers, type(h), type(n_layers))
            entries.append(
                _KIND_ENTRIES.get(key) or _kept_entry(key, kind.name, kind_gemms(kind, h, n_layers), n_layers)
            )
    if spec.vocab_size:
        head = lm_head_gemm(spec)  # gemms(spec)'s last entry, without building every kind's
        entries.append(_KIND_ENTRIES.get((head,)) or _kept_entry((head,), "", [head], 1))
    return entries


def _kept_entry(key: tuple, name: str, kg: list[Gemm], n_layers: int) -> KindEntry:
    """The entry of a kind (or the LM head) not met before, kept in _KIND_ENTRIES under ``key``."""
    fused = _fuse(kg)
    entry = KindEntry(name, kg, n_layers, fused, _kind_plan(name, n_layers, fused))
    return keep(_KIND_ENTRIES, key, entry, KIND_ENTRIES_MAX)


# The per-spec part of regime_gemm_rows, once per entries list (itself once per spec object): the rows' plan, each
# entry's part of it (_kind_plan: the kind's id and its fused groups, each a PlanGroup), and the shards of each
# (tp, kvp, ep) asked (decode, prefill and the EP overlap's half batch share them). id(entries) -> (entries,
# (plan, shards by parallelism)); bounded like the entries.
_PLAN_MEMO: dict = {}
# A kind's rows depend on its value (name, layers, fused GEMMs), not on the spec object: the advice closure's
# edited specs keep most kinds of the file they edit, and files of one family share kinds (in the 1,000-config
# MoE mix's analyses with the closure, 25,929 kinds' rows were asked, 10,937 distinct). Each distinct value
# gets an id once, when its entry is built (_KIND_ENTRIES: hashing GEMMs costs), and _KIND_ROWS holds the rows per
# (value id, regime, the scenario fields the rows read, profile). Both cleared when full; ids are not reused.
_KIND_IDS: dict[tuple, int] = {}
_NEXT_KIND_ID = itertools.count()
_KIND_ROWS: dict[tuple, tuple] = {}
KIND_ROWS_MAX = 8192
# A row itself depends on its fused group's value alone (kind name, layers, name, members, first GEMM, N total and
# what follows from them) and the same scenario fields: a kind asked for the first time builds only the rows of
# groups not seen before. An edit of one width keeps the kind's other groups (a CL201 fix of intermediate_size:
# the attention projections), and one family's variants share theirs (the large-MoE mix's DeepSeek-V3 variants:
# every attention, router and LM-head row). Ids and rows as for kinds; rows per (group id, the scenario fields).
_GROUP_IDS: dict[tuple, int] = {}
_NEXT_GROUP_ID = itertools.count()
_GROUP_ROWS: dict[tuple, tuple] = {}
GROUP_ROWS_MAX = 4 * KIND_ROWS_MAX


def _value_id(ids: dict[tuple, int], counter, limit: int, value: tuple) -> int:
    """The id ``ids`` gives ``value``, a new one from ``counter`` the first time (ids are never reused; ``ids``
    is cleared when it holds ``limit``)."""
    got = ids.get(value)
    return got if got is not None else keep(ids, value, next(counter), limit)


def _kind_id(value: tuple) -> int:
    return _value_id(_KIND_IDS, _NEXT_KIND_ID, KIND_ROWS_MAX, value)


def _group_id(value: tuple) -> int:
    return _value_id(_GROUP_IDS, _NEXT_GROUP_ID, GROUP_ROWS_MAX, value)


def _row_plan(entries: list[KindEntry]) -> tuple[list[tuple[int, list[PlanGroup]]], dict[tuple, list]]:
    """(each kind's id and fused groups, a memo of their shards by layout) of ``entries``, built once per
    entries object (read-only)."""
    return per_spec(_PLAN_MEMO, id(entries), entries, lambda: _build_row_plan(entries), SPEC_MEMO_MAX)


def _kind_plan(kind_name: str, n_layers: int, fused) -> tuple[int, list[PlanGroup]]:
    """One used kind's part of the rows' plan: the id of its value and its fused groups, each with its own id."""
    groups = []
    for name, members, g, n_total in fused:
        experts = g.parallel == "expert" and bool(g.count)
        router = is_gate(g.name)
        topk = round(g.m_per_token * g.count) if experts else 0
        value = (
            kind_name,
            n_layers,
            name,
            members,
            g,
            n_total,
            _component(g),
            router,
            g.name == "lm_head",
            experts,
            topk,
        )
        groups.append(PlanGroup(*value, _group_id(value)))
    # the kind's value is its groups' (each holds the kind name and layers): their ids stand for them
    return _kind_id(tuple(group.gid for group in groups)), groups


def _build_row_plan(entries: list[KindEntry]) -> tuple[list[tuple[int, list[PlanGroup]]], dict[tuple, list]]:
    plan = [entry.plan for entry in entries]
    shards: dict[tuple, list] = {}  # (tp, kvp, ep) -> the rows' shards per kind; ("kinds", tp, kvp, ep) -> kind_shards
    return plan, shards


def kind_shards(entries: list[KindEntry], sc: Scenario) -> list[list[tuple[Gemm, int, int, float]]]:
    """Per used layer kind of ``entries`` (the LM head's last), its unfused GEMMs with their (n, k, instances)
    shards under ``sc`` (``_shard(g, g.n, sc)``): what analyse's per-layer costs read. Built once per entries
    list and (tp, kvp, ep), beside the rows' plan."""
    _plan, shard_memo = _row_plan(entries)
    key = ("kinds", sc.tp, sc.kvp, sc.ep, sc.moe_tp)
    got = shard_memo.get(key)
    if got is None:
        got = shard_memo[key] = [
            [(g, *shard) for g, shard in zip(kg, _shards([(g, g.n) for g in kg], sc))]
            for kg in (entry.gemms for entry in entries)
        ]
    return got


def row_shards(
    entries: list[KindEntry], sc: Scenario
) -> tuple[list[tuple[int, list[PlanGroup]]], list[list[tuple[int, int, float]]]]:
    """The rows' plan of ``entries`` (``_row_plan``) and, per used layer kind (the LM head's last), the (n, k,
    instances) shard of each fused group under ``sc`` (``_shard(first GEMM, N total, sc)``): what the GEMM rows
    and the footprint's activation rows read. Built once per entries list and (tp, kvp, ep)."""
    plan, shard_memo = _row_plan(entries)
    shards = shard_memo.get((sc.tp, sc.kvp, sc.ep, sc.moe_tp))  # _shard reads tp, tp x kvp, ep and moe_tp only
    if shards is None:
        shards = shard_memo[(sc.tp, sc.kvp, sc.ep, sc.moe_tp)] = [
            _shards([(p.first, p.n_total) for p in groups], sc) for _, groups in plan
        ]
    return plan, shards


def regime_gemm_rows(spec: ModelSpec, profile, sc: Scenario, regime: str, entries=None, kinds=None) -> GemmRows:
    """The GEMM rows of one regime, kind by kind in ``entries``' order (the LM head's last); ``kinds``: only the
    rows of the layer kinds so named (the EP overlap's half batch prices the MoE kinds alone)."""
    tokens = regime_tokens(sc, regime)
    head_tokens = prefill_shape(sc)[1] if regime == "prefill" else tokens  # logits of each sequence's last token
    rows: list[WorkloadGemm] = []
    if entries is None:
        entries = gemm_entries(spec)
    plan, shards = row_shards(entries, sc)
    at = (
        regime,
        tokens,
        type(tokens),
        head_tokens,
        sc.tp,
        sc.kvp,
        sc.ep,
        sc.moe_tp,
        sc.gemm_format,
        sc.outputs,
        id(profile),
    )
    sums: dict[str, tuple[dict[str, float], int]] = {}
    repeated: set[str] = set()
    for (kind_id, groups), kind_shards_, entry in zip(plan, shards, entries):
        if kinds is not None and entry.name not in kinds:
            continue
        key = (kind_id, *at)
        hit = _KIND_ROWS.get(key)
        if hit is None or hit[0] is not profile:
            kind_rows = _kind_rows(groups, kind_shards_, profile, sc, regime, tokens, head_tokens, at)
            hit = keep(_KIND_ROWS, key, (profile, kind_rows, _kind_sums(kind_rows)), KIND_ROWS_MAX)
        rows += hit[1]
        if hit[1]:  # (a kind with no rows has no sums: the step finds none)
            if entry.name in sums:
                repeated.add(entry.name)
            sums[entry.name] = hit[2]
    for name in repeated:  # two entries of one kind name: their sums run over both, in row order
        sums[name] = _kind_sums([row for row in rows if row.kind == name])
    return GemmRows(rows, sums)


class GemmRows(list):
    """A regime's GEMM rows (a list of WorkloadGemm, read-only), with ``kind_sums``: per kind name, the sums that
    colint.analysis.workload's step reads of that kind's rows (``_kind_sums``), kept with the kind's rows in the
    memo (summed again over both where two entries share a kind name)."""

    def __init__(self, rows: list[WorkloadGemm], kind_sums: dict[str, tuple[dict[str, float], int]]) -> None:
        super().__init__(rows)
        self.kind_sums = kind_sums


def _kind_sums(rows: list[WorkloadGemm]) -> tuple[dict[str, float], int]:
    """One kind's rows summed as the step reads them (in row order from 0.0): GEMM time by component and the
    plain roofline time ("gemm_sol"), and the count of rows. Read-only: shared by every step that reads these
    rows."""
    out = {"attention": 0.0, "ffn": 0.0, "gemm_sol": 0.0}
    for row in rows:
        out[row.component] = out.get(row.component, 0.0) + row.layer_s
        out["gemm_sol"] += row.time.sol_s * row.instances
    return out, len(rows)


def _kind_rows(
    groups, shards, profile, sc: Scenario, regime: str, tokens: int, head_tokens: int, at: tuple
) -> list[WorkloadGemm]:
    """The rows of one kind's fused groups (``_row_plan``) at their ``shards``: each from the group rows' memo
    (``_GROUP_ROWS``, keyed by the group's id and ``at``, regime_gemm_rows' scenario fields), else built."""
    rows: list[WorkloadGemm] = []
    models: list = []  # (time model, grouped model) of the profile, looked up on the first row built
    for group, shard in zip(groups, shards):
        key = (group.gid, *at)
        hit = _GROUP_ROWS.get(key)
        if hit is None or hit[0] is not profile:
            if not models:
                models += (time_model(profile), None)
            hit = keep(
                _GROUP_ROWS,
                key,
                (profile, _row(group, shard, profile, sc, regime, tokens, head_tokens, models)),
                GROUP_ROWS_MAX,
            )
        if hit[1] is not None:
            rows.append(hit[1])
    return rows


def _row(group, shard, profile, sc: Scenario, regime: str, tokens: int, head_tokens: int, models: list):
    """One fused group's row at its (n, k, instances) ``shard``; None for a group with no work on this GPU.
    ``models``: [the profile's time model, its grouped-GEMM model or None until a routed-expert row asks]."""
    kind_name, n_layers, name, members, g, _n_total, component, router, lm_head, experts, topk, _gid = group
    n, k, inst = shard
    if n <= 0 or k <= 0:
        return None
    fmt = sc.gemm_format
    out_fmt = sc.outputs
    dtype = ROUTER_FORMAT if router else fmt
    m_tokens = head_tokens if lm_head else tokens
    k_time = k  # the K the GEMM runs at: an expert's down GEMM pads its K (I/tp) to whole tiles (ops_moe)
    if experts:
        t_global = m_tokens * sc.attention_dp_groups  # tokens of the EP domain's attention groups
        touched, m = routed_expert_rows(t_global, topk, g.count)
        # the layer waits for the busiest EP rank: its touched experts and their rows set the grouped GEMM's time
        touched_step, m_step = routed_expert_rows(t_global, topk, g.count, sc.moe_ep)
        inst_step = inst * touched_step
        inst = inst * touched
        # routed experts run in the fused MoE's grouped GEMM (ops_moe: moe_gemm_efficiency)
        if models[1] is None:
            models[1] = grouped_model(profile)
        model = models[1]
        if "down" in g.name:
            k_time = expert_k_padded(k, dtype)
    else:
        m = m_step = m_tokens
        inst_step = inst
        model = models[0]
    t = estimate(m, n, k_time, dtype, profile, out_fmt, standalone=False, model=model)
    if inst_step > 1:
        # a grouped GEMM: one kernel, every touched expert's tiles in one grid
        layer_s = estimate_s(
            m_step, int(round(n * inst_step)), k_time, dtype, profile, out_fmt, standalone=False, model=model
        )
    elif m_step != m:
        layer_s = estimate_s(m_step, n, k_time, dtype, profile, out_fmt, standalone=False, model=model)
    else:
        layer_s = t.estimate_s  # one GEMM (a GPU holding one expert waits for it when touched)
    return WorkloadGemm(
        name, members, kind_name, regime, n_layers, g.parallel, component, m, n, k, inst, dtype, t, layer_s, g
    )

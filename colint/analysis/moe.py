"""MoE routing arithmetic (docs/design.md §5, §9.1, §9.3).

Pure functions, no rules. Routing is balanced in expectation (a trained router with load
balancing); the step waits for the busiest EP rank, whose share of one step's picks is above the mean
by the balls-into-bins spread (:func:`busiest_rank_factor`: the expected maximum of the ranks' binomial
loads), and whose extra picks touch more of its experts (gemm_rows.routed_expert_rows).

* tokens per routed expert per step (grouped-GEMM M): ``C · k / E`` where C is the global
  concurrency of the EP domain: tokens per attention data-parallel group × the groups in the
  domain, ``max(1, ep // tp)`` (:func:`attention_dp_groups`);
* the global concurrency (and the EP width at a per-rank concurrency) at which an expert GEMM
  with compute-bound threshold M* stops being memory-bound: ``C* = M* · E / k``;
* expected experts touched by B tokens in one step: ``E · (1 − (1 − k/E)^B)``;
* experts held per GPU at an EP width: ``ceil(E / ep)`` (with redundant slots: ``(E + r) / ep``).

Sources: NVIDIA co-design blog, Guideline 5 (GEMM-M = global concurrency × top-k / #experts);
docs/design.md §9.4 (experts touched); DeepSeek-V3 report §3.4 and open-infra-index day 6
(EP32/EP144 with 32 redundant experts).
"""

from __future__ import annotations

import functools
import math


def attention_dp_groups(ep: int, tp: int = 1) -> int:
    """Attention data-parallel groups whose tokens meet in one EP domain of ``ep`` GPUs.

    Serving engines run attention (and dense layers) tensor-parallel over ``tp`` GPUs and
    data-parallel across groups, and spread the routed experts over all GPUs of the groups:
    vLLM ``--enable-expert-parallel`` gives EP = DP × TP; SGLang ``--enable-dp-attention`` splits
    its ``--tp`` GPUs into ``--dp`` attention groups of tp/dp GPUs under one EP of all of them;
    TensorRT-LLM ``enable_attention_dp`` makes every rank its own group (attention TP 1), without
    it the whole TP group is one group. So an EP domain holds ``ep / tp`` groups (at least one;
    each GPU of a group sees the group's tokens, not its own)."""
    return max(1, ep // max(1, tp))


def tokens_per_expert(concurrency_per_rank: float, ep: int, top_k: int, num_experts: int, tp: int = 1) -> float:
    """Mean rows of one routed expert's GEMM per step (uniform routing); ``concurrency_per_rank``
    is the tokens of one attention data-parallel group (a rank when ``tp`` = 1)."""
    groups = attention_dp_groups(ep, tp)
    return concurrency_per_rank * groups * top_k / num_experts if num_experts else 0.0


def concurrency_for_m(m_target: float, top_k: int, num_experts: int) -> float:
    """Global concurrency (tokens per step over the EP group) at which experts see m_target rows."""
    return m_target * num_experts / top_k if top_k else math.inf


def ep_for_m(m_target: float, concurrency_per_rank: float, top_k: int, num_experts: int, tp: int = 1) -> int:
    """Smallest EP width whose attention groups (``tp`` GPUs each, ``concurrency_per_rank``
    tokens each) give every expert ``m_target`` rows (uniform routing): groups needed × tp."""
    if concurrency_per_rank <= 0 or not math.isfinite(m_target):
        return 0
    groups = max(1, math.ceil(concurrency_for_m(m_target, top_k, num_experts) / concurrency_per_rank - 1e-9))
    return groups * max(1, tp)


def touched_share(tokens: float, top_k: int, num_experts: int) -> float:
    """Expected share of the experts that receive at least one of ``tokens`` tokens' top-``top_k`` picks
    under uniform routing (an estimate). top-k > E (reported by CL003) counts as every expert."""
    return 1.0 - (1.0 - min(1.0, top_k / num_experts)) ** tokens


def experts_touched(tokens: float, top_k: int, num_experts: int) -> float:
    """Expected distinct experts that receive at least one of ``tokens`` tokens."""
    if not num_experts:
        return 0.0
    return num_experts * touched_share(tokens, top_k, num_experts)


@functools.lru_cache(maxsize=1 << 12)
def busiest_rank_factor(tokens: float, top_k: int, num_experts: int, ep: int) -> float:
    """Rows on the busiest of ``ep`` ranks over the mean rank's, for ``tokens`` tokens routed top-``top_k``
    by a balanced router (an estimate). A trained router balances the experts' load in expectation
    (DeepSeek-V3's bias balancing, auxiliary losses; EPLB spreads what is left), but one step's picks still
    land like balls in bins: each of the n = tokens·k picks lands on a rank with probability 1/ep, so a rank
    holds Binomial(n, 1/ep) picks and the step waits for the busiest, whose expected load is
    sum over m of P(max > m) = sum of 1 − F(m)^ep (the ranks taken as independent; F the binomial CDF).
    At most every token's picks of the rank's local experts."""
    if ep <= 1 or tokens <= 0 or not num_experts:
        return 1.0
    k = min(top_k, num_experts)
    local = max(1, num_experts // ep)
    cap = ep * min(k, local) / k  # busiest rank: each token's picks of its local experts
    n = max(1, round(tokens * k))
    return min(cap, _expected_max_binomial(n, 1.0 / ep, ep) / (n / ep))


NORMAL_SD = 6.0  # picks: the binomial standard deviation past which its normal limit is used (_expected_max_binomial)


@functools.lru_cache(maxsize=256)
def _expected_max_normal(count: int) -> float:
    """E[max of ``count`` independent standard normals]: the integral of x · count · phi(x) · Phi(x)^(count−1),
    by the midpoint rule over [−8, 8] in steps of 1/256 (1.4236 for 8, 2.3437 for 64)."""
    step = 1.0 / 256.0
    total = 0.0
    for i in range(-8 * 256, 8 * 256):
        x = (i + 0.5) * step
        phi = math.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)
        total += x * count * phi * (0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))) ** (count - 1)
    return total * step


def _expected_max_binomial(n: int, p: float, count: int) -> float:
    """E[max of ``count`` independent Binomial(n, p)]: the sum over m >= 0 of 1 − F(m)^count, over the
    binomial's support within 12 standard deviations of its mean (the terms beyond are 1 below, 0 above); past
    ``NORMAL_SD`` standard deviations' width, mean + sd × the expected maximum of ``count`` standard normals
    (the binomial's normal limit: at sd 6 within 0.3% of the sum for 8 ranks, 1.5% low for 72; no loop over a wide support)."""
    mu = n * p
    sd = math.sqrt(n * p * (1.0 - p))
    if sd > NORMAL_SD:
        return mu + sd * _expected_max_normal(count)
    lo = max(0, int(mu - 12.0 * sd))
    hi = min(n, int(mu + 12.0 * sd) + 2)
    log_pmf = (
        math.lgamma(n + 1)
        - math.lgamma(lo + 1)
        - math.lgamma(n - lo + 1)
        + lo * math.log(p)
        + (n - lo) * math.log1p(-p)
    )
    pmf = math.exp(log_pmf)
    ratio = p / (1.0 - p)
    cdf = 0.0
    total = float(lo)
    for m in range(lo, hi):
        cdf += pmf
        total += 1.0 - min(1.0, cdf) ** count
        pmf *= (n - m) / (m + 1) * ratio
    return total


@functools.lru_cache(maxsize=1 << 10)
def parts_touched(parts: int, picks: int, groups: int = 1, groups_per_token: int = 1) -> float:
    """Expected distinct parts holding any of one token's ``picks`` routed experts (an estimate), where the experts
    lie in ``parts`` equal contiguous blocks (EP ranks, NVLink domains): under uniform routing ``P·(1 − (1 − 1/P)^k)``.
    A group-limited router (``groups`` contiguous groups, each token's picks within its ``groups_per_token`` best:
    DeepSeek-V3 report §2.1.2, node-limited routing, "each token will be sent to at most M nodes") concentrates
    them: with whole groups per part (``groups`` a multiple of ``parts``) a part holds X of the token's chosen groups,
    X hypergeometric, and is missed with probability (1 − X/groups_per_token)^k; with each group spread over ``s``
    parts (``parts`` a multiple of ``groups``) the chosen groups span groups_per_token·s parts. Picks are taken
    independently (with replacement), as the uniform formula takes them; a layout that is neither is priced as
    uniform (more parts, an upper bound). DeepSeek-V3 (8 groups, 4 a token, top-8) over 8 ranks: 3.6 parts, not 5.3."""
    parts = max(1, parts)
    if 1 <= groups_per_token < groups:
        tg = groups_per_token
        if groups % parts == 0:
            g = groups // parts
            total = math.comb(groups, tg)
            missed = 0.0
            for x in range(0, min(g, tg) + 1):
                weight = math.comb(g, x) * math.comb(groups - g, tg - x) / total
                missed += weight * (1.0 - x / tg) ** picks
            return parts * (1.0 - missed)
        if parts % groups == 0:
            span = tg * (parts // groups)
            return span * (1.0 - (1.0 - 1.0 / span) ** picks)
    return parts * (1.0 - (1.0 - 1.0 / parts) ** picks)


def group_limit_share(parts: int, picks: int, groups: tuple[int, int]) -> float:
    """The share of the ``parts`` (equal contiguous blocks of the experts: EP ranks, NVLink domains) one token's
    ``picks`` reach under a group-limited router (``groups``: (expert groups, groups a token may pick)), of what
    uniform routing reaches (:func:`parts_touched`); 1.0 where the limit does not bind."""
    g, per_token = groups
    if not 1 <= per_token < g or picks < 1 or parts <= 1:
        return 1.0
    return parts_touched(parts, picks, g, per_token) / parts_touched(parts, picks)


def experts_per_gpu(num_experts: int, ep: int, redundant: int = 0) -> int:
    """Expert slots on the busiest GPU at an EP width."""
    return math.ceil((num_experts + redundant) / ep)


def redundant_to_fill(num_experts: int, ep: int) -> int:
    """Redundant expert copies that make E + r divisible by ep (DeepSeek EPLB style)."""
    return (-num_experts) % ep

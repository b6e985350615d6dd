"""How requests are served on the frontier (`colint pareto --serving`), an ESTIMATE built on colint's step
model: what one output token costs the GPUs once each request's prefill is charged too.

A request brings ``isl`` input tokens and takes ``osl`` output tokens (the workload as aiconfigurator and
InferenceMAX name it). Three modes:

* ``decode`` — the decode step alone (the frontier before serving modes): tokens/s per user = 1 / ITL(B),
  prefill never charged (its FTL reported beside).
* ``aggregated`` — in-flight batching on the same GPUs (TensorRT-LLM, vLLM, SGLang): a new request's
  prompt rides in the decode steps, chunked by ``prefill_tokens`` per forward (chunked prefill), so a step
  that carries a chunk of ``c = min(isl, prefill_tokens)`` tokens is the decode step at ``B + c`` tokens
  (its weight GEMMs at M = B + c, its per-token passes, all-reduces and EP exchange at B + c tokens) whose
  attention is the B sequences' decode attention plus the chunk's prefill attention. In steady state each
  of the B sequences finishes after ``osl`` steps, so B / osl prompts start per step, each of
  ``ceil(isl / prefill_tokens)`` chunks: per step the group pays, on average,

      T(B) = ITL(B) + (B / osl) · ceil(isl / prefill_tokens) · (mixed(B, c) − ITL(B))

  and tokens/s per GPU = B / T(B) / GPUs of the group. A user's time per output token (TPOT: from its first
  token to its last) carries the prefills of the other B − 1 sequences, which restart once each while it
  decodes; its own prompt rode in the steps before its first token (its TTFT):

      TPOT(B) = ITL(B) + ((B − 1) / osl) · ceil(isl / prefill_tokens) · (mixed(B, c) − ITL(B))

  and tokens/s per user = 1 / TPOT(B) (one sequence alone decodes at 1 / ITL). The time to first token is the
  steps its chunks ride in: ceil(isl / prefill_tokens) · mixed(B, c) (no queueing).
* ``disaggregated`` — separate prefill and decode pools (Dynamo, llm-d, SGLang PD): decode instances of
  the deployment at B, prefill instances of the deployment with the most prefill tokens/s per GPU of its
  size, whole counts chosen within ``total_gpus`` to serve the most tokens/s (:func:`choose_pools`); the pool
  that falls short sets the served tokens/s, which is divided by all ``total_gpus`` GPUs: those the two
  pools leave idle are the user's too (aiconfigurator's ``tokens/s/gpu_cluster``). A prefill forward carries
  the whole prompts that fit in its token budget (``prefill_shape``: two of 4,000 tokens in 8,192). Each
  prefill GPU then sends the KV cache the forward left on it to the decode pool over its own link (NVLink where
  --total-gpus fit in one scale-up domain, else the link past it: PCIe inside a server of NVLink-bridged cards, the
  scale-out NIC beyond; the pools may sit in different domains), the
  next forward running meanwhile: TTFT = the prefill deployment's FTL + that transfer (no queueing), and a prefill
  instance forwards no faster than its links carry the KV away (:func:`with_kv_transfer`).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Optional

from colint.analysis.gemm_rows import ceil_div, prefill_shape
from colint.errors import UsageError
from colint.util.records import dataclass

SERVING_MODES = ("aggregated", "disaggregated", "decode")
DEFAULT_OSL = 1024  # output tokens when --osl is not given (InferenceMAX's 1k-output workloads)


@dataclass(frozen=True)
class Serving:
    """How the frontier serves requests: ``mode`` (SERVING_MODES), ``isl``/``osl`` input and output tokens
    per request, ``total_gpus`` (None: one scale-up domain), ``ttft_limit_s`` (None: no limit)."""

    mode: str = "decode"
    isl: int = 0
    osl: int = 0
    total_gpus: Optional[int] = None
    ttft_limit_s: Optional[float] = None

    def charged(self) -> str:
        """What each output token is charged, in words (the text, JSON and chart say it)."""
        if self.mode == "aggregated":
            return (
                f"decode step + the {self.isl}-token prefill of each request in the same steps (chunked "
                f"prefill), 1/{self.osl} of a prefill per output token; a user's TPOT carries the other "
                "sequences' prefills, not its own"
            )
        if self.mode == "disaggregated":
            return (
                f"decode pool + a prefill pool sized to prefill {self.isl} tokens per {self.osl} output tokens; "
                "tokens/s per GPU over all the GPUs, those the pools leave idle too"
            )
        return "decode step only (prefill not charged)"


@dataclass(frozen=True)
class PrefillCost:
    """One deployment's prefill at ``isl`` tokens of context (analyse's prefill step there)."""

    step_s: float  # one prefill forward of ``tokens`` tokens per attention group
    tokens: int  # prompt tokens one forward prefills per attention group (whole prompts within prefill_tokens)
    ftl_s: float  # one prompt of isl tokens
    group_gpus: int  # GPUs of one attention group
    instance_gpus: int  # GPUs of one instance (the EP domain, or the group)
    attention_core_per_token_s: float  # prefill attention cores per prompt token
    kv_bytes_per_gpu: float = 0.0  # KV cache one forward's prompt tokens leave on each GPU (sent to the decode pool)
    kv_transfer_s: float = 0.0  # sending it (with_kv_transfer; 0: not priced)

    @property
    def tokens_per_s_per_gpu(self) -> float:
        """Prompt tokens/s per GPU: one forward's tokens per step, or per KV transfer where the link is slower."""
        t = max(self.step_s, self.kv_transfer_s)
        return self.tokens / t / self.group_gpus if t > 0 else 0.0

    @property
    def ttft_s(self) -> float:
        """A prompt's first token at the decode pool: its prefill, then its KV cache's transfer."""
        return self.ftl_s + self.kv_transfer_s


def prefill_cost(w) -> PrefillCost:
    """The PrefillCost of workload ``w`` (analysed with context = isl)."""
    s = w.steps["prefill"]
    seq, seqs, _ = prefill_shape(w.scenario)
    sc = w.scenario
    group = sc.group_gpus
    return PrefillCost(
        s.estimate_s,
        seq * seqs,  # whole prompts (or one chunk) within prefill_tokens: 2 x 4,000 of 8,192, not 8,192
        s.ftl_s or s.estimate_s,
        group,
        max(group, sc.ep),
        s.attention_core_s / max(1, seq * seqs),
        # the prompt's KV cache on each GPU (w at one sequence of isl tokens), the forward's share of it
        w.kv_cache_bytes_per_gpu * seq * seqs / max(1, sc.context),
    )


def with_kv_transfer(p: PrefillCost, link_bytes_per_s: float) -> PrefillCost:
    """``p`` with its KV cache sent to the decode pool at ``link_bytes_per_s`` per GPU, one way (each prefill GPU
    sends its own shard over its own link; the decode GPUs receive in parallel over theirs)."""
    return replace(p, kv_transfer_s=p.kv_bytes_per_gpu / link_bytes_per_s if link_bytes_per_s > 0 else 0.0)


def chunk_tokens(serving: Serving, prefill_tokens: int) -> tuple[int, int]:
    """(tokens of one prefill chunk, chunks per prompt): the prompt split by the forward's token budget."""
    return min(serving.isl, prefill_tokens), ceil_div(serving.isl, prefill_tokens)


def mixed_step_s(decode_c_s: float, core_c_s: float, core_b_s: float, chunk: int, core_per_token_s: float) -> float:
    """One step that carries a prefill chunk: the decode step priced at B + chunk tokens (``decode_c_s``, whose
    attention cores ``core_c_s`` are those of B + chunk decoding sequences) with its attention replaced by the B
    sequences' decode cores (``core_b_s``) and the chunk's prefill cores (``chunk`` x ``core_per_token_s``)."""
    return decode_c_s - core_c_s + core_b_s + chunk * core_per_token_s


def aggregated(itl_s: float, mixed_s: float, concurrency: int, serving: Serving, chunks: int) -> tuple[float, float]:
    """(prefill time charged per decode step, TTFT) in aggregated serving (module docstring)."""
    extra = max(0.0, mixed_s - itl_s)
    return concurrency / serving.osl * chunks * extra, chunks * mixed_s


@dataclass(frozen=True)
class Pool:
    """A disaggregated deployment: ``decode_instances`` of the decode deployment, ``prefill_instances`` of
    ``prefill`` (a deployment label), and the share of the decode pool's tokens/s the prefill pool feeds, on
    ``total_gpus`` GPUs (those the pools leave idle count: per-GPU figures are over all of them)."""

    prefill: str
    prefill_instances: int
    prefill_instance_gpus: int
    decode_instances: int
    decode_instance_gpus: int
    served_share: float  # served tokens/s / the decode pool's tokens/s (1: the prefill pool keeps up)
    prefill_ftl_s: float
    total_gpus: int  # the GPUs the pools are counted over (--total-gpus)
    kv_transfer_s: float = 0.0  # one prefill forward's KV cache sent to the decode pool

    @property
    def ttft_s(self) -> float:
        """The prefill deployment's FTL + the KV cache's transfer to the decode pool."""
        return self.prefill_ftl_s + self.kv_transfer_s

    @property
    def prefill_gpus(self) -> int:
        return self.prefill_instances * self.prefill_instance_gpus

    @property
    def decode_gpus(self) -> int:
        return self.decode_instances * self.decode_instance_gpus

    @property
    def gpus(self) -> int:
        return self.prefill_gpus + self.decode_gpus

    @property
    def idle_gpus(self) -> int:
        """GPUs of ``total_gpus`` that neither pool's whole instances use."""
        return self.total_gpus - self.gpus

    @property
    def throughput_factor(self) -> float:
        """Served tokens/s per GPU of ``total_gpus`` / the decode pool's tokens/s per GPU."""
        return self.served_share * self.decode_gpus / self.total_gpus

    def public(self) -> dict:
        return {
            "prefill_deployment": self.prefill,
            "prefill_instances": self.prefill_instances,
            "prefill_gpus": self.prefill_gpus,
            "decode_instances": self.decode_instances,
            "decode_gpus": self.decode_gpus,
            "idle_gpus": self.idle_gpus,
            "prefill_to_decode_gpus": self.prefill_gpus / self.decode_gpus,
            "served_share": self.served_share,
            "prefill_ftl_s": self.prefill_ftl_s,
            "kv_transfer_s": self.kv_transfer_s,
        }


def choose_pools(
    decode_tokens_per_s_per_gpu: float,
    decode_instance_gpus: int,
    prefills: list[tuple[str, PrefillCost]],
    serving: Serving,
    total_gpus: int,
) -> Optional[Pool]:
    """The pool sizes that serve the most tokens/s on ``total_gpus`` GPUs (per GPU of all of them: a GPU the
    pools leave idle is still the user's; None: no prefill instance fits beside one decode instance), the
    fewest GPUs among equals. A decode instance asks isl / osl prefill tokens per output token; for ``n_d``
    decode instances the served tokens/s grow with the prefill count until the prefill pool meets that demand
    and stay there, so only the two whole counts around it are tried."""
    best: Optional[tuple[float, Pool]] = None
    ratio = serving.isl / serving.osl
    for label, p in prefills:
        rate = p.tokens_per_s_per_gpu * p.instance_gpus  # prefill tokens/s of one prefill instance
        if rate <= 0:
            continue
        for n_d in range(1, (total_gpus - p.instance_gpus) // decode_instance_gpus + 1):
            demand = n_d * decode_instance_gpus * decode_tokens_per_s_per_gpu * ratio  # prefill tokens/s asked
            room = (total_gpus - n_d * decode_instance_gpus) // p.instance_gpus
            ideal = demand / rate
            for n_p in {max(1, min(room, math.floor(ideal))), max(1, min(room, math.ceil(ideal)))}:
                share = min(1.0, n_p * rate / demand) if demand > 0 else 1.0
                pool = Pool(
                    label,
                    n_p,
                    p.instance_gpus,
                    n_d,
                    decode_instance_gpus,
                    share,
                    p.ftl_s,
                    total_gpus,
                    p.kv_transfer_s,
                )
                key = pool.throughput_factor
                if (
                    best is None
                    or key > best[0] * (1 + 1e-12)
                    or (key >= best[0] * (1 - 1e-12) and pool.gpus < best[1].gpus)
                ):
                    best = (key, pool)
    return best[1] if best else None


def serving_for(
    mode: str,
    context: int,
    isl: Optional[int] = None,
    osl: Optional[int] = None,
    total_gpus: Optional[int] = None,
    ttft_limit_s: Optional[float] = None,
) -> Serving:
    """The Serving of ``colint pareto`` (and of the frontier that suggest, report and check --base price):
    ``isl``/``osl`` as given; where one is missing, the scenario's ``context`` is the request's whole length: osl = DEFAULT_OSL (at most half the context), isl = the rest.
    Decode mode without --isl/--osl keeps the scenario's context as the KV length (no request shape)."""
    if mode not in SERVING_MODES:
        raise UsageError(f"--serving {mode}: one of {', '.join(SERVING_MODES)}")
    if mode == "decode" and isl is None and osl is None:
        return Serving(mode, 0, 0, total_gpus, ttft_limit_s)
    if osl is None:
        osl = DEFAULT_OSL if isl is not None else min(DEFAULT_OSL, max(1, context // 2))
    if isl is None:
        isl = max(1, context - osl)
    return Serving(mode, int(isl), int(osl), total_gpus, ttft_limit_s)


def default_serving(context: int) -> Serving:
    """How `colint pareto` serves when told nothing (aggregated: each request's chunked prefill charged to the decode
    GPUs), for the frontiers that suggest, report and check --base price beside it."""
    return serving_for("aggregated", context)

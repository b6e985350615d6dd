"""The deployment a model is checked at, one object (issue 32): the settings that say how the model is served —
scenario preset, formats, tp/ep/pp/kvp, context and concurrency — as one list of :class:`DeploymentSetting`
records, each with its Settings field, its TOML key (``[tool.colint]``), its Python-API keyword, its flag and help
text, and its old spellings; and :class:`Deployment`, those values as one frozen object with ``auto`` decoded once.

The CLI (colint.cli.options builds one click option per record), the Python API (colint.api takes the records'
keywords) and the config files (colint.engine.settings' fields carry the same TOML keys; a test holds them together) read
this one list, so a setting has one name everywhere. ``Deployment.from_settings`` is the only place a Settings
becomes a deployment, and ``Deployment.scenario_for`` (``frontier_scenario``
for the frontier) the only place it becomes a Scenario.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional, Union

from colint.analysis.scenario import EP_OVERLAP_MODES, PRESETS, Scenario, make_scenario


class DeploymentSetting(NamedTuple):  # a NamedTuple: cheaper to define than a dataclass at start-up
    """One deployment setting: its Settings field, TOML key, help, value kind, old flags; its flag (``--`` + the
    key) and its Python-API keyword (the key in snake_case) follow from the key, so one name serves everywhere."""

    field: str  # colint.engine.settings.Settings field
    key: str  # TOML key in [tool.colint] (kebab-case, like ruff)
    help: str
    kind: str = "str"  # "str", "count" (a positive integer), "parallel" (a positive integer or 'auto'), "choice"
    choices: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()  # earlier spellings of the flag, kept for a release

    @property
    def flag(self) -> str:
        """The command-line flag: ``--context``."""
        return "--" + self.key

    @property
    def api(self) -> str:
        """The Python API's keyword: ``kv_dtype`` (colint.check(..., kv_dtype=...))."""
        return self.key.replace("-", "_")


DEPLOYMENT_SETTINGS: tuple[DeploymentSetting, ...] = (
    DeploymentSetting(
        "scenario",
        "scenario",
        "Workload preset: throughput (decode 256 sequences, 8k context), latency (1 sequence) or long-context "
        "(16 sequences, 128k context). [default: throughput]",
        kind="choice",
        choices=tuple(PRESETS),
    ),
    DeploymentSetting(
        "dtype",
        "dtype",
        "Weight/activation format: bf16, fp16, fp8, fp8_block, nvfp4, mxfp4, int8, int8_wo, int4_wo. "
        "[default: the checkpoint's quantization_config, else bf16]",
    ),
    DeploymentSetting(
        "tp",
        "tp",
        "Tensor-parallel size of attention, or 'auto' (the largest power of two that keeps every sharded width a "
        "multiple of 128). [default: chosen per model: the fewest GPUs that fit]",
        kind="parallel",
    ),
    DeploymentSetting("ep", "ep", "Expert-parallel size. [default: chosen per model with tp]", kind="count"),
    DeploymentSetting("pp", "pp", "Pipeline-parallel size. [default: chosen per model with tp]", kind="count"),
    DeploymentSetting(
        "kvp",
        "kvp",
        "KV (Helix) parallel size: each of kvp GPUs holds 1/kvp of every sequence's context. [default: 1]",
        kind="count",
    ),
    DeploymentSetting(
        "context_tokens",
        "context",
        "Context length, tokens (clipped to the model's maximum positions). [default: the scenario's]",
        kind="count",
    ),
    DeploymentSetting(
        "concurrency",
        "concurrency",
        "Concurrent decode sequences per attention group (the tp x kvp GPUs that hold one copy of the attention "
        "weights; under attention data-parallelism with EP a replica holds ep/tp groups). [default: what fits, up "
        "to the scenario's]",
        kind="count",
    ),
    DeploymentSetting(
        "kv_dtype",
        "kv-dtype",
        "KV-cache format: bf16, fp8, nvfp4, ... [default: the checkpoint's, else bf16]",
        aliases=("--kv-cache",),
    ),
    DeploymentSetting("out_dtype", "out-dtype", "GEMM output format: bf16, fp8, fp32, ... [default: bf16]"),
    DeploymentSetting(
        "ep_overlap",
        "ep-overlap",
        "Overlap the EP dispatch/combine with compute by two micro-batches: where it makes the step faster, "
        "wherever the batch splits, or never (as engines run it unless two-batch overlap is enabled). [default: off]",
        kind="choice",
        choices=EP_OVERLAP_MODES,
    ),
)
LAYOUT = ("tp", "ep", "pp", "kvp")  # the settings that name a layout (none named: colint chooses one per model)


class Deployment(NamedTuple):
    """The deployment settings in force, ``auto`` decoded: ``tp`` is an int or None (``tp_auto``: the largest
    aligned tp, chosen per model), None meaning "not named" for the layout and the concurrency, which colint then
    chooses per model (colint.analysis.deployments.automatic_deployment)."""

    scenario: str = "throughput"
    dtype: Optional[str] = None
    tp: Optional[int] = None
    tp_auto: bool = False
    ep: Optional[int] = None
    pp: Optional[int] = None
    kvp: Optional[int] = None
    context_tokens: Optional[int] = None
    concurrency: Optional[int] = None
    kv_dtype: Optional[str] = None
    out_dtype: Optional[str] = None
    ep_overlap: Optional[str] = None

    @classmethod
    def from_settings(cls, settings: Any) -> Deployment:
        """The deployment of a colint.engine.settings.Settings (or anything with its fields)."""
        values = {s.field: getattr(settings, s.field, None) for s in DEPLOYMENT_SETTINGS}
        tp: Union[int, str, None] = values.pop("tp")
        values["scenario"] = values["scenario"] or "throughput"
        return cls(tp=None if tp == "auto" else tp, tp_auto=tp == "auto", **values)  # type: ignore[arg-type]

    @property
    def layout_named(self) -> bool:
        """The user named tp, ep, pp or kvp (``--tp auto`` names none: tp is chosen, ep and pp around it)."""
        return any(getattr(self, name) is not None for name in LAYOUT)

    def scenario_for(self, gpu: Optional[str] = None, *, prefill_tokens: Optional[int] = None) -> Scenario:
        """The Scenario of this deployment (a name the layout does not give is 1; ``tp_auto``: 1 until the model's
        aligned tp is known)."""
        return make_scenario(
            self.scenario,
            dtype=self.dtype,
            tp=self.tp,
            ep=self.ep,
            pp=self.pp,
            kvp=self.kvp,
            context=self.context_tokens,
            concurrency=self.concurrency,
            prefill_tokens=prefill_tokens,
            kv_cache=self.kv_dtype,
            out_dtype=self.out_dtype,
            gpu=gpu,
            ep_overlap=self.ep_overlap,
        )

    def frontier_scenario(self, gpu: Optional[str] = None, *, prefill_tokens: Optional[int] = None) -> Scenario:
        """The scenario a frontier is priced in (colint pareto, check --base --frontier): this deployment's preset,
        formats, context and EP overlap; the layout and the concurrency are what the frontier enumerates (and pareto
        takes no --out-dtype)."""
        free = self._replace(tp=None, tp_auto=False, ep=None, pp=None, kvp=None, concurrency=None, out_dtype=None)
        return free.scenario_for(gpu, prefill_tokens=prefill_tokens)

"""What a rule is, and the context it runs in.

A rule is a function ``check(ctx) -> Iterable[Finding]`` registered with :func:`rule`, which
carries its code (``CL201``), kebab-case name, default severity, named thresholds (``options``:
:class:`Option` rows) and its documentation (what, why, example, fix, sources). Its family is the
module it lives in: every rule module declares ``FAMILY = Family(name=..., number=...)`` and the
code's hundreds digit must be that number. Rules read only ``ctx.spec`` (ModelSpec) and
``ctx.workload`` (analysis results on one GPU and scenario); they never parse files. The engine
hands each rule its own :class:`Context` (``ctx.rule`` is that rule), so ``ctx.option(name)``
and ``ctx.finding(...)`` (which fills in the location from ``spec.sources`` and the GPU name)
need nothing else.
"""

from __future__ import annotations

import builtins
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import field
from typing import TYPE_CHECKING, Any, Literal, Optional, cast

from colint.analysis.collectives import gbps_text, past_domain_link
from colint.findings import SEVERITY_ORDER, Edit, Finding, Fix, Impact, Safety, Severity
from colint.normalize.model_spec import ModelSpec, Source
from colint.util.records import dataclass

if TYPE_CHECKING:  # the engine imports them anyway; a spec-only check need not pay for them first
    from colint.analysis.scenario import Scenario
    from colint.analysis.workload import Workload
    from colint.hardware_profiles import Profile

RuleKind = Literal["architecture", "deployment"]


@dataclass(frozen=True, kw_only=True)
class Family:
    """A rule family: one module of colint/rules (its ``FAMILY``), one guideline."""

    name: str  # kebab-case, reported as a finding's "rule" and matched by --select
    number: int  # the hundreds digit of its codes: 2 for CL2xx


@dataclass(frozen=True, kw_only=True)
class Option:
    """One named threshold of a rule, set in ``[tool.colint.rules.CODE]``."""

    name: str
    type: builtins.type  # what a configured value must be (bool, int, float, tuple); an int is taken for a float
    default: Any
    doc: str  # one line, with the unit

    def __post_init__(self) -> None:
        if type(self.default) is not self.type:
            raise TypeError(f"option {self.name}: default {self.default!r} is not a {self.type.__name__}")

    def coerce(self, value: Any) -> Any:
        """``value`` from a config file as this option's type; ValueError (one line) when it is not one."""
        t = self.type
        if t is bool:
            if isinstance(value, bool):
                return value
        elif t is int:
            if isinstance(value, int) and not isinstance(value, bool):
                return value
        elif t is float:
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return float(value)
        elif isinstance(value, t):
            return value
        raise ValueError(f"should be {t.__name__} like the default {self.default!r}, got {value!r}")


@dataclass(frozen=True)
class RuleDoc:
    what: str
    why: str
    example: str
    fix: str
    sources: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Rule:
    code: str
    name: str
    family: str  # its module's Family name
    severity: Severity  # the most severe level it emits
    summary: str
    doc: RuleDoc
    options: Mapping[str, Option]  # by name, in declaration order (graded rules end with the two loss thresholds)
    check: Callable[[Context], Iterable[Finding]]
    needs_workload: bool = True  # False: depends on the spec alone (runs once per file, not per GPU)
    graded: bool = False  # True: the severity of its loss-carrying findings follows the severity policy
    hard: str = ""  # the hard constraints it reports as errors whatever the loss ("will not run / load")
    without_workload: bool = False  # True: also runs, with ctx.workload None, when analyse() rejects the format
    # the ModelSpec fields its findings point at (ctx.finding's ``field``), when it reports on these alone and on
    # its own target's GPU: the engine holds it to that (colint.engine.checking), and colint.engine.closure leaves it out of a
    # re-check where the file's check reported each of them, on each GPU, at its most severe level already
    fields: tuple[str, ...] = ()
    # "architecture": what the config's shapes cost on the target GPU (a design defect, graded as such);
    # "deployment": what one deployment does (memory fit, KV replication over tp, EP/TP beyond the NVLink domain,
    # pipeline balance at a pp, concurrency). A deployment finding judges the deployment the user named; with
    # none named it judges colint's automatic one and is advice (info): colint.engine.checking caps it (RULE_KINDS)
    kind: RuleKind = "architecture"
    # the most severe level it can emit on a given spec, from the spec alone (CL301 warns only for a really deep
    # and narrow stack of 1B parameters or more): ceiling(spec, option) with option(name) this rule's configured
    # threshold. The engine holds every finding to it (colint.engine.checking), and colint.engine.closure leaves
    # the rule out of a re-check where the state's spec caps it at a level this file reported on its fields already
    ceiling: Optional[Callable[[ModelSpec, Callable[[str], Any]], Severity]] = None

    def ceiling_on(self, spec: ModelSpec, configured: Mapping[str, Any] | None = None) -> Severity:
        """The most severe level this rule can emit on ``spec``: max_severity, lowered to its ``ceiling`` there."""
        level = self.max_severity(configured)
        if self.ceiling is not None:
            over = configured or {}
            cap = self.ceiling(spec, lambda name: over.get(name, self.options[name].default))
            if SEVERITY_ORDER[cap] > SEVERITY_ORDER[level]:
                level = cap
        return level

    def max_severity(self, configured: Mapping[str, Any] | None = None) -> Severity:
        """The most severe level this rule can emit with its thresholds as ``configured`` (this rule's entry of
        Settings.rule_options; defaults where absent): ``severity`` for its fixed-level findings, and for a graded
        rule the level its loss thresholds can reach (CL301 warns from 5% though its own findings are advice;
        CL602 is an error from 25%). colint.engine.closure skips, in a re-check that only asks whether a state raises a
        new warning, the rules that cannot emit one."""
        level = self.severity
        if self.graded:
            over = configured or {}

            def reachable(name: str) -> bool:
                return float(over.get(name, self.options[name].default)) < NEVER

            graded: Severity = (
                "error" if reachable("error_loss_pct") else "warning" if reachable("warning_loss_pct") else "info"
            )
            if SEVERITY_ORDER[graded] < SEVERITY_ORDER[level]:
                level = graded
        return level

    def severity_lines(self) -> list[str]:
        """The rule's severity policy, for `colint rule CODE` (docs/configuration.md "Severity policy")."""
        out = []
        if self.hard:
            out.append(f"  error (hard constraint): {self.hard}")
        if self.graded:
            w, e = self.options["warning_loss_pct"].default, self.options["error_loss_pct"].default
            out.append(
                f"  by estimated step loss: info below {w:g}%, warning from {w:g}%"
                + (f", error from {e:g}%" if e < NEVER else " (never an error on loss alone)")
                + " (options warning_loss_pct / error_loss_pct)"
            )
        elif not self.hard:
            out.append(
                "  error when it fires: a hard constraint (the model will not load or run as configured)"
                if self.severity == "error"
                else f"  at most {self.severity}: {'advice that depends on goals' if self.severity == 'info' else 'a fixed-severity check'}"
                " (no estimated step loss to grade)"
            )
        return out

    def render_doc(self) -> str:
        lines = [
            f"{self.code} {self.name} ({self.family}, {self.kind} finding, up to {self.max_severity()})",
            "",
            self.summary,
            "",
            "What:",
            f"  {self.doc.what}",
            "",
            "Why:",
            f"  {self.doc.why}",
            "",
            "Example:",
            f"  {self.doc.example}",
            "",
            "Fix:",
            f"  {self.doc.fix}",
            "",
            "Severity:",
        ] + self.severity_lines()
        if self.options:
            lines += ["", "Options (thresholds; set in [tool.colint.rules." + self.code + "]):"]
            for o in self.options.values():
                lines.append(f"  {o.name} = {o.default!r}: {o.doc}")
        if self.doc.sources:
            lines += ["", "Sources:"] + [f"  - {s}" for s in self.doc.sources]
        return "\n".join(lines)


_REGISTRY: dict[str, Rule] = {}

RULE_KINDS = ("architecture", "deployment")  # Rule.kind; `--select architecture` / `--select deployment` pick a kind

# Severity policy (docs/configuration.md "Severity policy", docs/design.md §6): a finding that carries an estimated step loss
# takes its severity from that loss: info below warning_loss_pct, warning from it, error from error_loss_pct.
# Hard constraints (the model will not run or will not load as configured) are errors and carry no loss.
# Every rule's thresholds lie within a factor of 10 of these defaults, so a finding never outranks another
# of the same file whose estimated loss is 10x larger (tests/rules/test_severity_policy.py checks the corpus).
# one percent of a step: below it a change sits inside a serving benchmark's run-to-run spread (and the time model's
# own resolution), so nothing under it blocks a commit; from it, measurable waste worth a design change (issue 29)
WARNING_LOSS_PCT = 1.0
ERROR_LOSS_PCT = 25.0  # a quarter of the step: the design does not run as intended on the target
NEVER = 1e9  # an error_loss_pct that no loss reaches (design advice that is never an error on loss alone)


def impact_options(warning: float = WARNING_LOSS_PCT, error: float = ERROR_LOSS_PCT) -> tuple[Option, Option]:
    """The two named, configurable thresholds of a graded rule."""
    return (
        Option(
            name="warning_loss_pct",
            type=float,
            default=float(warning),
            doc="estimated step loss (percent) from which a finding is a warning (below: info)",
        ),
        Option(
            name="error_loss_pct",
            type=float,
            default=float(error),
            doc="estimated step loss (percent) from which a finding is an error"
            + (" (1e9: never)" if error >= NEVER else ""),
        ),
    )


def rule(
    *,
    code: str,
    name: str,
    severity: Severity,
    summary: str,
    doc: RuleDoc,
    options: Iterable[Option] = (),
    needs_workload: bool = True,
    graded: bool = False,
    hard: str = "",
    warning_loss_pct: float = WARNING_LOSS_PCT,
    error_loss_pct: float = ERROR_LOSS_PCT,
    without_workload: bool = False,
    fields: tuple[str, ...] = (),
    kind: RuleKind = "architecture",
    ceiling: Optional[Callable[[ModelSpec, Callable[[str], Any]], Severity]] = None,
) -> Callable[[Callable[[Context], Iterable[Finding]]], Callable[[Context], Iterable[Finding]]]:
    """Register the decorated ``check`` as rule ``code`` of its module's ``FAMILY``. ``graded``: its findings
    with an estimated loss get their severity from ``ctx.graded(loss)`` (options warning_loss_pct /
    error_loss_pct, this rule's defaults given here); ``hard``: the hard constraints it reports as errors;
    ``without_workload``: it also runs, with ctx.workload None, when analyse() rejects the format; ``fields``:
    the ModelSpec fields it reports on, where its findings point at no other key (Rule.fields); ``ceiling``: the
    most severe level it can emit on a spec, from the spec alone (Rule.ceiling).

        @rule(code="CL203", name="head-dim-tile", severity="info", summary="...", doc=RuleDoc(...),
              options=[Option(name="tile", type=int, default=128, doc="head-dimension tile width (elements)")])
        def head_dim_tile(ctx: Context): ...
    """

    def deco(fn: Callable[[Context], Iterable[Finding]]) -> Callable[[Context], Iterable[Finding]]:
        family = getattr(sys.modules[fn.__module__], "FAMILY", None)
        if not isinstance(family, Family):
            raise TypeError(f"{fn.__module__} declares no FAMILY = Family(...) above rule {code}")
        if not code.startswith(f"CL{family.number}") or len(code) != 5:
            raise ValueError(f"rule {code} in {fn.__module__}: family {family.name} codes are CL{family.number}xx")
        if code in _REGISTRY:
            raise ValueError(f"duplicate rule code {code}")
        opts = list(options) + (list(impact_options(warning_loss_pct, error_loss_pct)) if graded else [])
        by_name = {o.name: o for o in opts}
        if len(by_name) != len(opts):
            raise ValueError(f"rule {code}: two options of one name")
        _REGISTRY[code] = Rule(
            code=code,
            name=name,
            family=family.name,
            severity=severity,
            summary=summary,
            doc=doc,
            options=by_name,
            check=fn,
            needs_workload=needs_workload,
            graded=graded,
            hard=hard,
            without_workload=without_workload,
            fields=tuple(fields),
            kind=kind,
            ceiling=ceiling,
        )
        return fn

    return deco


@dataclass(kw_only=True)
class Context:
    """What one rule sees: the engine builds one per rule and target, so nothing is shared between rules (not
    frozen: a frozen dataclass's __init__ costs 3x as much, and the engine builds ~80 per file checked)."""

    rule: Rule  # the rule it is handed to: its code, options and family go into ctx.option and ctx.finding
    spec: ModelSpec
    workload: Optional[Workload] = None  # the analysis on ctx.gpu (docs/analysis.md); None for spec-only rules
    gpu: Optional[str] = None  # profile name
    profile: Optional[Profile] = None  # the GPU's profile; None for spec-only rules
    scenario: Optional[Scenario] = None  # the scenario the workload was analysed in; None for spec-only rules
    options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # code -> {option: configured value}
    tp_auto: bool = False  # --tp auto: alignment rules report the largest power-of-two tp that aligns
    # True in colint.engine.closure's re-checks, which read only each finding's code, key, GPU and severity (whether a
    # fix's state raises something new): a rule may then leave out work that only its message, details, evidence
    # or fixes need (CL801's search for the smallest deployment that fits)
    brief: bool = False

    @property
    def analysis(self) -> Workload:
        """``workload`` for a rule that reads it: the engine hands one to every rule with ``needs_workload``
        (and to a ``without_workload`` rule only where analyse() accepted the format, so such a rule tests
        ``workload is None`` first)."""
        if self.workload is None:
            raise RuntimeError(f"{self.rule.code} read the workload, which it is handed only with needs_workload")
        return self.workload

    @property
    def target_profile(self) -> Profile:
        """``profile`` for a rule checked on a GPU (every rule with ``needs_workload``)."""
        if self.profile is None:
            raise RuntimeError(f"{self.rule.code} read the GPU profile outside a GPU target")
        return self.profile

    @property
    def target_scenario(self) -> Scenario:
        """``scenario`` for a rule checked on a GPU (every rule with ``needs_workload``)."""
        if self.scenario is None:
            raise RuntimeError(f"{self.rule.code} read the scenario outside a GPU target")
        return self.scenario

    def option(self, name: str) -> Any:
        """This rule's threshold ``name``: the configured value, else its default."""
        over = self.options.get(self.rule.code, {})
        if name in over:
            return over[name]
        return self.rule.options[name].default

    def graded(self, loss_pct: float | None, cap: Severity = "error", floor: Severity = "info") -> Severity:
        """The severity policy: an estimated step loss (percent) -> info / warning / error by this rule's
        warning_loss_pct and error_loss_pct; ``cap``/``floor`` bound it (e.g. advice that is at most a
        warning). No loss: ``floor``."""
        order = ("info", "warning", "error")
        sev = "info"
        if loss_pct is not None:
            loss_pct = round(loss_pct, 2)  # as the finding reports it
            if loss_pct >= self.option("error_loss_pct"):
                sev = "error"
            elif loss_pct >= self.option("warning_loss_pct"):
                sev = "warning"
        i = max(order.index(floor), min(order.index(sev), order.index(cap)))
        return order[i]  # type: ignore[return-value]

    def source(self, field_name: str | None) -> Source | None:
        if field_name is None:
            return None
        return self.spec.sources.get(field_name)

    def finding(
        self,
        severity: Severity,
        message: str,
        *,
        field: str | None = None,
        key: str | None = None,
        source: Source | None = None,
        evidence: dict | None = None,
        loss_pct: float | None = None,
        fixes: list[Fix] | None = None,
        details: list[str] | None = None,
        gpu_specific: bool | None = None,
    ) -> Finding:
        r = self.rule
        src = source or self.source(field)
        if key is None and src is not None:
            key = src.key
        gpu_specific = r.needs_workload if gpu_specific is None else gpu_specific
        derived = {s.key for s in self.spec.sources.values() if s.derived}
        if derived and fixes:  # a key a value is computed from does not hold it: never write the value there
            fixes = [fx for fx in fixes if not any(e.key in derived for e in fx.edits)]
        return Finding(
            code=r.code,
            name=r.name,
            rule=r.family,
            kind=r.kind,
            severity=severity,
            message=message,
            key=key,
            line=src.line if src else None,
            column=src.column if src else None,
            gpu=self.gpu if gpu_specific else None,
            impact=Impact(estimated_loss_pct=None if loss_pct is None else round(loss_pct, 2)),
            evidence=evidence or {},
            fixes=fixes or [],
            details=details or [],
        )


def past_domain_versus(profile, span: int) -> str:
    """What CL504/CL704's group of ``span`` GPUs crosses past the scale-up domain and how its rate, the one the step
    prices (colint.analysis.collectives.past_domain_link), compares with the scale-up link: "the scale-out network
    (100 GB/s per GPU, assumed: ... vs 1800 GB/s NVLink)"."""
    what, gbps, stated = past_domain_link(profile, span)
    assumed = "" if stated else ", assumed: the profile gives no scale_out_gbps"
    scale_up = f"{gbps_text(profile.scale_up_gbps)} GB/s {profile.scale_up}"
    return f"{what} ({gbps_text(gbps)} GB/s per GPU{assumed} vs {scale_up})"


def field_keys(spec: ModelSpec, fields: Iterable[str]) -> tuple[str | None, ...]:
    """The key a finding on each of ``fields`` points at in ``spec``: its source's key, None without one."""
    sources = spec.sources
    return tuple(None if (src := sources.get(name)) is None else src.key for name in fields)


def edit(key: str, old: Any, new: Any) -> Edit:
    return Edit(key=key, old=old, new=new)


def fix(
    title: str, safety: str, *edits: Edit, settings: dict | None = None, alternatives: list[Fix] | None = None
) -> Fix:
    """A fix: ``edits`` to the file, or display advice; ``settings`` names the deployment the advice
    leads to ({"ep": 64}) so that colint.engine.closure can re-check the file there."""
    return Fix(
        title=title,
        safety=cast(Safety, safety),  # "safe", "unsafe" or "display", as each rule writes it
        edits=list(edits),
        settings=dict(settings or {}),
        alternatives=list(alternatives or []),
    )

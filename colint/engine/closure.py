"""Closure of advice: every fix is re-checked at the state it leads to before it is shown.

A rule proposes fixes from its own point of view: CL501 asks for a wider EP, CL201 for the next
multiple of 128. Applied blindly, such advice can raise another rule's finding (ep=72 over 384
experts leaves 11% of the expert capacity idle: CL502), load a file that no longer loads, or
change the model by a different amount than it says. So, as ``colint suggest`` does for its
variants, each fix that edits the file or names a deployment setting is tried:

* edits are spliced into the original text (colint.fixing.fix_text.apply_edits), the result is loaded,
  normalized and checked at the same settings;
* settings ({"ep": 64}, {"tp": 8}, {"pp": 4}, {"concurrency": 512}) re-check the same spec with
  those settings in force.

A fix whose state shows a finding that was not there before (same code and key) at the fixed
finding's severity or above — and always at warning or above — is *blocked*, and so is an edit
that leaves the finding it fixes standing at its severity (it fixes nothing). A blocked fix is
replaced by its first ``alternatives`` entry that is not blocked; with none, it is left out when
the finding keeps another fix, and otherwise shown as display advice that names its trade-off
(the finding it would raise) — unless that state does not load or raises an error: such a fix is
never offered. A fix that changes nothing the family reads is dropped. The
parameter delta a title states ("+2.3% FFN params", "-7.0% params") is replaced by the one the
re-normalized file has, so the figure equals what ``colint inspect`` reports after the edit.

Re-checks run with closure off (no recursion). Most fixes tried are blocked (wide-EP advice past the NVLink
domain, at every size offered): a re-check that only has to tell whether a state is blocked stops at the first
blocking finding, running the rules that blocked most often first. It leaves out the rules that cannot emit a
blocking finding (info-only advice when a warning is asked; a rule that reports on its declared fields alone,
Rule.fields, where this file's check reported each of them on each GPU at the rule's most severe level
already, or at the most severe level the state's spec allows it: Rule.ceiling) and the work that only a
finding's text needs (Context.brief); the state of a trade-off, whose reason is shown, is checked in full.
States are cached by the text they lead to and the settings they name, so files whose fixes lead to the same
text re-check it once.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from typing import Any, Optional

from colint.analysis.inventory import param_counts
from colint.errors import ColintError
from colint.findings import SEVERITY_ORDER, Finding, Fix
from colint.loading import load_text
from colint.normalize import normalize
from colint.rules.base import field_keys
from colint.rules.fix_builders import ffn_params
from colint.util.records import dataclass

# the settings (colint.engine.settings.Settings TOML keys) a fix's settings may name
SETTINGS = ("tp", "ep", "pp", "concurrency", "context", "dtype")
WARNING = SEVERITY_ORDER["warning"]
_DELTA = re.compile(r"([+\-−]\d+(?:\.\d+)?)% (FFN )?params")


@dataclass
class Outcome:
    """The state a fix leads to: the findings there that were not there before (blocking ones), the
    re-normalized spec (edits only), or the error that stops the file from being checked."""

    blocking: list[Finding]
    spec: Any = None
    error: Optional[str] = None
    noop: bool = False
    # False when the re-check only told whether the state is blocked (colint.engine.checking.check_spec's stop, skip and
    # brief): it stopped at the first blocking finding (``blocking`` then holds that one), left out the rules that
    # cannot block, and its findings' messages were not all built
    complete: bool = True

    def reason(self) -> str:
        if self.error:
            return f"the file would not load: {self.error}"
        f = self.blocking[0]
        more = f" (+{len(self.blocking) - 1} more)" if len(self.blocking) > 1 else ""
        return f"raises {f.code} {f.severity}: {f.message}{more}"


@dataclass
class Stats:
    """Counts over a run (``scripts``/tests read them): fixes re-checked, kept, replaced, downgraded."""

    tried: int = 0
    kept: int = 0
    replaced: int = 0
    dropped: int = 0
    tradeoff: int = 0
    noop: int = 0
    delta_corrected: int = 0


STATS = Stats()

# Rule codes by how often their findings blocked a state in this process, most often first: a re-check that
# only asks whether a state is blocked runs them first and stops at the first blocking finding
# (colint.engine.checking.check_spec's ``stop``). The order changes how soon a blocked state is told, never the answer.
BLOCKERS: Counter = Counter()

# Re-checked states shared by every file of a run: fixes that lead to the same text (a repository's copies
# of one model; variants whose widths round to the same size) re-check it once. Keyed by that text, the
# settings and the check options; bounded so that a long run does not grow without limit. A state that does
# not load stays with its file (its error names the file).
_SHARED: dict = {}
SHARED_MAX = 4096
# The rules a re-check may leave out for their most severe level, by the run's options (as _SHARED keys them), the
# level asked and the code of the finding fixed: a handful per run, bounded as _SHARED is
_SKIPS: dict = {}


class Closure:
    """Re-checks the fixes of one file's findings (``close``)."""

    def __init__(
        self, path: str, doc, spec, findings: list[Finding], targets, opts, rules, *, check_spec, build_targets
    ) -> None:
        # the engine's own check_spec and build_targets (colint.engine.checking), passed in: the engine calls this
        # module, never the other way round
        self._check_spec, self._build_targets = check_spec, build_targets
        self.path, self.doc, self.spec, self.findings = path, doc, spec, findings
        self.targets, self.opts, self.rules = targets, opts, rules
        self.before = {(f.code, f.key, f.gpu): SEVERITY_ORDER[f.severity] for f in findings}
        self._cache: dict = {}
        self._targets: dict = {}
        self._params: Optional[tuple] = None
        self._reported_memo: Optional[dict[str, tuple]] = None
        self._capped_memo: Optional[dict[str, tuple]] = None

    # -- the states a fix leads to ---------------------------------------------------------------
    def _opts_key(self):
        if not hasattr(self, "_okey"):
            o = self.opts
            # the targets' scenarios too: they are the file's resolved deployment (checking.Target.for_model), which
            # two files reaching the same state need not share
            self._okey = (
                repr(o),
                tuple(r.code for r in self.rules),
                tuple((t.gpu, repr(t.scenario)) for t in self.targets),
            )
        return self._okey

    def _targets_for(self, settings: dict):
        key = tuple(sorted(settings.items()))
        if key not in self._targets:
            opts = self.opts.with_keys(settings)
            self._targets[key] = (opts, self._build_targets(opts) if self.targets else [])
        return self._targets[key]

    def _new_at(self, f: Finding, level: int) -> bool:
        """``f``, found in a fix's state, is new at ``level`` or above: not there before at its severity."""
        sev = SEVERITY_ORDER[f.severity]
        return sev <= level and self.before.get((f.code, f.key, f.gpu), 99) > sev

    @staticmethod
    def _still_stands(f: Finding, fixed: Optional[Finding], edit: bool) -> bool:
        """``f`` is the finding an edit fixes, still standing at its severity (2880 -> 2944 on a 256-wide
        cooperative tile: "not a multiple of 256"): the edit does not fix it."""
        return (
            edit
            and fixed is not None
            and (f.code, f.key, f.gpu) == (fixed.code, fixed.key, fixed.gpu)
            and SEVERITY_ORDER[f.severity] <= SEVERITY_ORDER[fixed.severity]
        )

    def _blocks(self, f: Finding, level: int, fixed: Optional[Finding], edit: bool) -> bool:
        """Whether ``f``, found in a fix's state, blocks the fix (see the module doc)."""
        return self._new_at(f, level) or self._still_stands(f, fixed, edit)

    def outcome(self, fx: Fix, level: int, fixed: Optional[Finding] = None, *, complete: bool = True) -> Outcome:
        """The state ``fx`` leads to. ``complete=False``: enough to tell whether it is blocked (the re-check
        stops at the first blocking finding, runs only the rules that could block, and builds no finding's text);
        the outcome then says complete=False."""
        state, edit = self._state(fx), bool(fx.edits)
        hit = self._lookup(state)
        partial = None
        skip: tuple[str, ...] = ()
        if hit is None and not complete:
            # what blocks depends on this file's findings and on the finding fixed: a stopped check is this file's
            fixed_id = None if fixed is None else (fixed.code, fixed.key, fixed.gpu, fixed.severity)
            partial = (self.doc.text, state, level, fixed_id)
            hit = self._lookup(partial)
            if hit is None:
                # the rules that cannot emit a finding at ``level`` (info-only advice in a warning-level re-check)
                # cannot block, nor can those that reported all they can in this file already (_reported, but
                # the fixed finding's own rule): they are not run, and the state's check is keyed by what it left
                # out, the latter with the keys they point at here (another file's may differ: _recheck)
                skip = self._skippable(level, fixed)
                reported = {
                    code: fk
                    for code, fk in self._reported().items()
                    if code not in skip and (fixed is None or code != fixed.code)
                }
                if reported:
                    skip = tuple(r.code for r in self.rules if r.code in skip or r.code in reported)
                # the rules a state's spec may cap at what this file reported on their fields (_capped): the state's
                # check leaves them out where it does, and is keyed by their keys and levels here
                capped = {
                    code: fkl
                    for code, fkl in self._capped().items()
                    if code not in skip and (fixed is None or code != fixed.code)
                }
                unstopped = (
                    state,
                    "brief",
                    skip,
                    tuple((code, fk[1]) for code, fk in reported.items()),
                    tuple((code, fkl[1], fkl[2]) for code, fkl in capped.items()),
                )
                hit = self._lookup(unstopped)
                if hit is None:

                    def stop(f: Finding) -> bool:
                        return self._blocks(f, level, fixed, edit)

                    hit = self._recheck(fx, state, stop, skip, reported, capped)
                    # a state that raised nothing blocking ran every rule it was asked to: that is its check
                    self._store(partial if any(stop(f) for f in hit[1]) else unstopped, hit)
        elif hit is None:
            hit = self._recheck(fx, state)
            self._store(state, hit)
        spec, findings, error = hit
        if error is not None:
            return Outcome([], error=error)
        noop = edit and _same_model(spec, self.spec)
        if partial is not None:
            blocking = [f for f in findings if self._blocks(f, level, fixed, edit)][:1]
            if blocking:
                BLOCKERS[blocking[0].code] += 1
                return Outcome(blocking, spec=spec, noop=noop, complete=False)
        blocking = [f for f in findings if self._new_at(f, level)]
        blocking += [f for f in findings if self._still_stands(f, fixed, edit)]
        return Outcome(blocking, spec=spec, noop=noop, complete=partial is None)

    def _state(self, fx: Fix) -> tuple:
        """What a fix's state is made of: the text it leads to (the edits spliced in; a splice that cannot be
        written: the edits themselves) and the settings it names, at this run's options. Two files whose fixes
        lead to the same text share one re-check."""
        settings = tuple(sorted(fx.settings.items()))
        text: Any = self.doc.text
        if fx.edits:
            from colint.fixing.fix_text import apply_edits

            try:
                text = apply_edits(self.doc, fx.edits)
            except ValueError:  # a value the splice cannot write: _recheck reports it
                text = (self.doc.text, tuple((e.key, repr(e.new)) for e in fx.edits))
        return text, self.doc.syntax, settings, self._opts_key()

    def _lookup(self, key):
        """A re-checked state from this file's cache or the run's."""
        hit = self._cache.get(key)
        if hit is None:
            hit = _SHARED.get(key)
            if hit is not None:
                self._cache[key] = hit
        return hit

    def _store(self, key, hit) -> None:
        self._cache[key] = hit
        if hit[2] is not None:
            return  # an error names this file: kept to it
        if len(_SHARED) >= SHARED_MAX:
            _SHARED.clear()
        _SHARED[key] = hit

    def _most_severe(self, r) -> int:
        """The most severe level rule ``r`` can emit under the run's thresholds and overrides (its order)."""
        over = self.opts.severity_overrides.get(r.code)
        return SEVERITY_ORDER[over or r.max_severity(self.opts.rule_options.get(r.code))]

    def _skippable(self, level: int, fixed: Optional[Finding]) -> tuple[str, ...]:
        """The codes of the rules that cannot emit a finding at ``level`` or above (their most severe level under
        the run's thresholds and overrides: colint.rules.base.Rule.max_severity), but the fixed finding's own
        rule, whose finding may still stand."""
        key = (self._opts_key(), level, None if fixed is None else fixed.code)
        skip = _SKIPS.get(key)
        if skip is None:
            if len(_SKIPS) >= SHARED_MAX:
                _SKIPS.clear()
            skip = _SKIPS[key] = tuple(r.code for r in self.rules if r.code != key[2] and self._most_severe(r) > level)
        return skip

    def _reported(self) -> dict[str, tuple]:
        """The rules that can raise nothing new in any state of this file, by code, with (their declared fields,
        the keys those point at here): each points at its declared fields alone, on its own GPU
        (colint.rules.base.Rule.fields, which the engine holds it to), and this file's check reported it on each
        of them, on each GPU, at the most severe level it can emit. A state whose edit moves one of those fields
        to another key runs it again (_recheck)."""
        if self._reported_memo is None:
            self._reported_memo = {}
            for r in self.rules:
                keys, level = self._reported_level(r)
                if level is not None and level <= self._most_severe(r):
                    self._reported_memo[r.code] = (r.fields, keys)
        return self._reported_memo

    def _reported_level(self, r) -> tuple[tuple, Optional[int]]:
        """(the keys rule ``r``'s declared fields point at in this file, the least severe level of its findings on
        them, None unless this file's check reported it on each of them, on each GPU)."""
        if not r.fields:
            return (), None
        keys = field_keys(self.spec, r.fields)
        gpus = [t.gpu for t in self.targets] if r.needs_workload else [None]
        ids = [(r.code, k, g) for k in keys for g in gpus]
        if not ids or any(i not in self.before for i in ids):
            return keys, None
        return keys, max(self.before[i] for i in ids)

    def _capped(self) -> dict[str, tuple]:
        """The rules with a ceiling (colint.rules.base.Rule.ceiling) and declared fields, without a severity
        override, that this file's check reported on each of their fields' keys, on each GPU, by code: (their
        fields, those keys, the least severe level among those findings). In a state whose spec caps such a rule at
        that level or below, every finding it could raise there was reported here at its severity or above (it points
        at those keys alone): nothing new, so the state's check leaves it out (_recheck)."""
        if self._capped_memo is None:
            self._capped_memo = {}
            for r in self.rules:
                if r.ceiling is None or r.code in self.opts.severity_overrides:
                    continue
                keys, level = self._reported_level(r)
                if level is not None:
                    self._capped_memo[r.code] = (r.fields, keys, level)
        return self._capped_memo

    def _recheck(self, fx: Fix, state: tuple, stop=None, skip: tuple[str, ...] = (), reported=None, capped=None):
        """The state ``fx`` leads to: (its spec, its findings, None) or (None, [], the error that stops it).
        ``reported``: the codes in ``skip`` left out for having reported all they can (_reported), with their
        fields and keys in this file; ``capped``: the rules left out where the state's spec caps them at what this
        file reported (_capped)."""
        settings = {k: v for k, v in fx.settings.items() if k in SETTINGS}
        opts, targets = self._targets_for(settings) if settings else (self.opts, self.targets)
        spec = self.spec
        try:
            if fx.edits:
                text = state[0]
                if not isinstance(text, str):  # the splice could not be written: say why
                    from colint.fixing.fix_text import apply_edits

                    apply_edits(self.doc, fx.edits)
                doc = load_text(text, self.path, syntax=self.doc.syntax)
                spec = normalize(doc, input_format=opts.input_format, vocab_size=opts.vocab_size)
                if reported:  # a reported rule whose fields the edit moved to other keys may point at new ones: it runs
                    skip = tuple(
                        c for c in skip if c not in reported or field_keys(spec, reported[c][0]) == reported[c][1]
                    )
            if capped:
                rules = {r.code: r for r in self.rules if r.code in capped}
                skip = skip + tuple(
                    code
                    for code, (fields, keys, level) in capped.items()
                    if field_keys(spec, fields) == keys
                    and SEVERITY_ORDER[rules[code].ceiling_on(spec, opts.rule_options.get(code))] >= level
                )
            if stop is None:
                findings = self._check_spec(spec, targets, opts, self.rules)
            else:
                first = tuple(code for code, _ in BLOCKERS.most_common())
                # brief: a stopped re-check's findings are only told apart (blocking or not), never shown; a
                # trade-off's reason comes from its full re-check (_first_soft)
                findings = self._check_spec(
                    spec, targets, opts, self.rules, stop=stop, first=first, skip=skip, brief=True
                )
        except ColintError as exc:
            return None, [], exc.message if hasattr(exc, "message") else str(exc)
        except ValueError as exc:  # a value the splice cannot write
            return None, [], str(exc)
        return spec, findings, None

    # -- parameter deltas ---------------------------------------------------------------------
    def _honest_title(self, fx: Fix, spec) -> Fix:
        """The title's stated parameter delta replaced by the re-normalized spec's."""
        m = _DELTA.search(fx.title)
        if not m or spec is None:
            return fx

        if self._params is None:
            self._params = (param_counts(self.spec).total, ffn_params(self.spec))
        total, ffn = self._params
        if m.group(2) and ffn:
            pct = 100.0 * (ffn_params(spec) - ffn) / ffn
        elif total:
            pct = 100.0 * (param_counts(spec).total - total) / total
        else:
            return fx
        new = f"{pct:+.1f}% {m.group(2) or ''}params"
        if new == m.group(0).replace("−", "-"):
            return fx
        STATS.delta_corrected += 1
        return dataclasses.replace(fx, title=fx.title[: m.start()] + new + fx.title[m.end() :])

    # -- the pass over the findings -------------------------------------------------------------
    def close(self) -> list[Finding]:
        out = []
        for f in self.findings:
            if not any(fx.edits or fx.settings for fx in f.fixes):
                out.append(f)
                continue
            level = max(SEVERITY_ORDER[f.severity], WARNING)
            kept: list[Fix] = []
            blocked: list[tuple[Fix, Optional[Outcome]]] = []
            for fx in f.fixes:
                if not (fx.edits or fx.settings):
                    kept.append(fx)
                    continue
                chosen, first = self._first_open(fx, level, f)
                if chosen is None:
                    if first is not None and first.noop:
                        STATS.noop += 1
                    else:
                        blocked.append((fx, first))
                    continue
                kept.append(chosen)
            soft = None if any(fx.edits or fx.settings for fx in kept) else self._first_soft(blocked, level, f)
            if soft is not None:
                fx, trade = soft
                STATS.tradeoff += 1
                kept.append(Fix(title=f"{fx.title} — trade-off: {trade.reason()}", safety="display"))
                STATS.dropped += len(blocked) - 1
            else:
                STATS.dropped += len(blocked)
            out.append(f if kept == f.fixes else dataclasses.replace(f, fixes=kept))
        return out

    def _first_soft(
        self, blocked: list[tuple[Fix, Optional[Outcome]]], level: int, fixed: Finding
    ) -> Optional[tuple[Fix, Outcome]]:
        """The first blocked fix whose own state is a trade-off: a state that runs. One that does not load or
        raises an error is no option at all. Its full check (every finding it raises) gives the reason."""
        for fx, why in blocked:
            if why is None or why.error is not None or any(b.severity == "error" for b in why.blocking):
                continue
            if not why.complete:
                why = self.outcome(fx, level, fixed)
                if why.error is not None or any(b.severity == "error" for b in why.blocking):
                    continue
            return fx, why
        return None

    def _first_open(self, fx: Fix, level: int, fixed: Finding) -> tuple[Optional[Fix], Optional[Outcome]]:
        """The fix itself when its state raises nothing blocking, else its first alternative that does
        not; (None, the fix's own outcome) when none does."""
        first = None
        for i, cand in enumerate([fx] + list(fx.alternatives)):
            STATS.tried += 1
            oc = self.outcome(cand, level, fixed, complete=False)
            if first is None:
                first = oc
            if oc.error is None and not oc.blocking and not oc.noop:
                if i:
                    STATS.replaced += 1
                else:
                    STATS.kept += 1
                clean = dataclasses.replace(cand, alternatives=[]) if cand.alternatives else cand
                return (self._honest_title(clean, oc.spec) if cand.edits else clean), oc
        return None, first


_MODEL_FIELDS = (
    "hidden_size",
    "num_layers",
    "vocab_size",
    "vocab_padding",
    "tie_word_embeddings",
    "max_position_embeddings",
    "position_embeddings",
    "layer_kinds",
    "layer_pattern",
    "mtp_layers",
    "mtp_params",
    "embedding_params_extra",
    "extra_params",
    "quantization",
    "sliding_window",
    "per_layer_lists",
    "loader_rejects",
    "dtype",
)


def _same_model(a, b) -> bool:
    """The edit changed nothing the family reads (a key the adapter ignores): every field that shapes the model
    or a finding is equal (Records compare by value)."""
    return all(getattr(a, f) == getattr(b, f) for f in _MODEL_FIELDS)


def close_advice(
    path: str, doc, spec, findings: list[Finding], targets, opts, rules, *, check_spec, build_targets
) -> list[Finding]:
    """``findings`` with every fix re-checked at the state it leads to (see the module doc); ``check_spec`` and
    ``build_targets`` are the engine's (colint.engine.checking)."""
    if not any(fx.edits or fx.settings for f in findings for fx in f.fixes):
        return findings
    return Closure(
        path, doc, spec, findings, targets, opts, rules, check_spec=check_spec, build_targets=build_targets
    ).close()

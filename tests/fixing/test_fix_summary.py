"""What `colint check --fix` says about the fixes it leaves for --unsafe-fixes, and `--statistics`
counting per rule and severity (one rule's findings can differ in severity: a row each).

The CLI tests derive what they expect from the JSON report of the same run, so a rule whose severities
or fixes change does not break them; the unit tests pin the exact rows on findings built here."""

import json
import shutil
from collections import Counter

from colint.engine.checking import FileResult, statistics, unsafe_fixes_left
from colint.cli.main import main
from colint.cli.output import render_report
from colint.findings import Edit, Finding, Fix

LLAMA = "examples/llama-2-7b.json"  # CL201 and CL202 offer unsafe width/vocab fixes, nothing safe
KIMI = "examples/kimi-k2.json"  # display-only advice, no fix with edits
GPT_OSS = "tests/corpus/hf/gpt-oss__gpt-oss-20b.json"  # CL201 at two severities
ARGS = ["--gpu", "b200", "--tp", "8", "--isolated"]


def _check(capsys, *args):
    rc = main(["check", *args, *ARGS])
    out, err = capsys.readouterr()
    return rc, out, err


def _findings(capsys, *args) -> list[dict]:
    _, out, _ = _check(capsys, *args, "--format", "json")
    return [f for r in json.loads(out)["files"] for f in r["findings"]]


def _unsafe(findings: list[dict]) -> int:
    return sum(x["safety"] == "unsafe" and bool(x.get("edits")) for f in findings for x in f["fixes"])


def _finding(code: str, severity: str, *fixes: Fix) -> Finding:
    return Finding(code=code, name=f"rule-{code}", rule="r", severity=severity, message="m", fixes=list(fixes))


def _fix(safety: str, edits: bool = True) -> Fix:
    return Fix(title="t", safety=safety, edits=[Edit(key="k", old=1, new=2)] if edits else [])


# ---------------------------------------------------------------- --fix: the unsafe fixes left


def test_fix_tells_the_unsafe_fixes_it_left_also_when_it_applied_nothing(tmp_path, capsys):
    dst = tmp_path / "config.json"
    shutil.copyfile(LLAMA, dst)
    before = dst.read_bytes()
    n = _unsafe(_findings(capsys, str(dst)))
    assert n > 1
    _, _, err = _check(capsys, str(dst), "--fix")
    assert dst.read_bytes() == before  # nothing safe to apply
    assert err == f"colint: {n} fixes available with --unsafe-fixes\n"
    n = _unsafe(_findings(capsys, str(dst), "--select", "CL202"))
    _, _, err = _check(capsys, str(dst), "--fix", "--select", "CL202")
    assert n == 1 and err == "colint: 1 fix available with --unsafe-fixes\n"


def test_fix_says_nothing_when_no_unsafe_fix_is_left(tmp_path, capsys):
    dst = tmp_path / "config.json"
    shutil.copyfile(LLAMA, dst)
    _, _, err = _check(capsys, str(dst), "--fix", "--unsafe-fixes", "--select", "CL202")
    assert err == "colint: fixed 1 file\n"  # with --unsafe-fixes there is nothing to advise
    _, _, err = _check(capsys, str(dst), "--fix", "--quiet")
    assert err == ""  # --quiet prints findings and errors only
    _, _, err = _check(capsys, str(dst), "--fix", "--select", "CL202")
    assert err == ""  # the vocab is padded: no fix left
    kimi = tmp_path / "kimi.json"
    shutil.copyfile(KIMI, kimi)
    assert _unsafe(_findings(capsys, str(kimi))) == 0
    _, _, err = _check(capsys, str(kimi), "--fix")
    assert err == ""  # display-only advice is not a fix


def test_plain_check_and_diff_do_not_advise(capsys):
    assert _check(capsys, LLAMA)[2] == ""
    assert _check(capsys, LLAMA, "--diff")[2] == ""


def test_unsafe_fixes_left_counts_unsafe_fixes_with_edits():
    r = FileResult(
        path="x",
        findings=[
            _finding("CL201", "warning", _fix("unsafe"), _fix("unsafe")),  # two alternatives: two fixes
            _finding("CL202", "info", _fix("unsafe"), _fix("safe")),
            _finding("CL801", "error", _fix("display", edits=False), _fix("unsafe", edits=False)),
        ],
    )
    assert unsafe_fixes_left([r, FileResult(path="y")]) == 3


# ---------------------------------------------------------------- --statistics: per rule and severity


def test_statistics_counts_per_rule_and_severity():
    findings = [_finding("CL201", "warning")] * 3 + [_finding("CL201", "info")] * 5 + [_finding("CL002", "error")]
    findings += [_finding("CL202", "info")] * 3 + [_finding("CL201", "error")] * 3
    results = [FileResult(path="a", findings=findings[:6]), FileResult(path="b", findings=findings[6:])]
    assert [(r["count"], r["code"], r["severity"]) for r in statistics(results)] == [
        (5, "CL201", "info"),
        (3, "CL201", "error"),  # the same count: by code, then the worst severity first
        (3, "CL201", "warning"),
        (3, "CL202", "info"),
        (1, "CL002", "error"),
    ]
    assert render_report("full", results, {}, [], statistics=True, colour=False).splitlines() == [
        "    5  CL201  info     rule-CL201",
        "    3  CL201  error    rule-CL201",
        "    3  CL201  warning  rule-CL201",
        "    3  CL202  info     rule-CL202",
        "    1  CL002  error    rule-CL002",
    ]
    assert json.loads(render_report("json", results[1:], {}, [], statistics=True, colour=False)) == [
        {"code": "CL201", "name": "rule-CL201", "severity": "error", "count": 3},
        {"code": "CL202", "name": "rule-CL202", "severity": "info", "count": 3},
        {"code": "CL201", "name": "rule-CL201", "severity": "info", "count": 2},
        {"code": "CL002", "name": "rule-CL002", "severity": "error", "count": 1},
    ]


def test_statistics_of_a_rule_at_two_severities(capsys):
    findings = _findings(capsys, GPT_OSS, LLAMA)
    counts = Counter((f["code"], f["severity"], f["name"]) for f in findings)
    assert len({s for c, s, _ in counts if c == "CL201"}) == 2  # CL201 at two severities: two rows
    order = {"error": 0, "warning": 1, "info": 2}
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0][0], order[kv[0][1]]))
    _, out, _ = _check(capsys, GPT_OSS, LLAMA, "--statistics")
    assert out.splitlines() == [f"{n:>5}  {code}  {sev:<7}  {name}" for (code, sev, name), n in rows]
    _, out, _ = _check(capsys, GPT_OSS, LLAMA, "--statistics", "--format", "json")
    assert json.loads(out) == [
        {"code": code, "name": name, "severity": sev, "count": n} for (code, sev, name), n in rows
    ]

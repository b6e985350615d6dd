"""Editor feedback: `colint lsp` driven by a real LSP client (pygls' LanguageClient, over stdio), and the
VS Code problem matcher of docs/editors.md applied to `colint check`'s text output."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from colint.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
LLAMA = ROOT / "examples" / "llama-2-7b.json"
DOCS = ROOT / "docs" / "editors.md"


# ------------------------------------------------------------------ language server


async def _session(tmp_path: Path) -> list[tuple[str, list]]:
    from lsprotocol import types
    from pygls.lsp.client import LanguageClient
    from pygls.uris import from_fs_path

    received: asyncio.Queue = asyncio.Queue()
    client = LanguageClient("colint-test", "1")

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(ls, params: types.PublishDiagnosticsParams):
        received.put_nowait(params)

    await client.start_io(sys.executable, "-m", "colint", "lsp", "--isolated", "--tp", "8", cwd=str(tmp_path))
    steps = []

    async def next_diagnostics(label):
        params = await asyncio.wait_for(received.get(), timeout=60)
        steps.append(
            (
                label,
                params.uri,
                [
                    (
                        d.range.start.line,
                        d.range.start.character,
                        d.range.end.line,
                        d.range.end.character,
                        d.severity,
                        d.code,
                        d.source,
                        d.message.splitlines()[0],
                    )
                    for d in params.diagnostics
                ],
            )
        )
        return params

    try:
        result = await client.initialize_async(
            types.InitializeParams(capabilities=types.ClientCapabilities(), root_uri=from_fs_path(str(tmp_path)))
        )
        assert result.server_info.name == "colint"
        client.initialized(types.InitializedParams())
        path = tmp_path / "config.json"
        text = LLAMA.read_text()
        path.write_text(text)
        uri = from_fs_path(str(path))
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id="json", version=1, text=text)
            )
        )
        first = await next_diagnostics("open")
        assert "\nfix (unsafe): intermediate_size 11008 → 11264" in first.diagnostics[0].message
        # the quick fixes the editor offers on each diagnostic: the smallest edit of the value (11008 -> 11264 keeps
        # "11"), at UTF-16 positions
        for diag in first.diagnostics:
            actions = await client.text_document_code_action_async(
                types.CodeActionParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    range=diag.range,
                    context=types.CodeActionContext(diagnostics=[diag]),
                )
            )
            steps.append(
                (
                    "actions",
                    diag.code,
                    [
                        (
                            a.title,
                            a.kind,
                            a.is_preferred,
                            [
                                (
                                    e.range.start.line,
                                    e.range.start.character,
                                    e.range.end.line,
                                    e.range.end.character,
                                    e.new_text,
                                )
                                for e in a.edit.changes[uri]
                            ],
                        )
                        for a in actions
                    ],
                )
            )

        def change(version, new_text):
            client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                    content_changes=[types.TextDocumentContentChangeWholeDocument(text=new_text)],
                )
            )

        change(2, text.replace("11008", "11264"))  # the unsaved buffer, not the file, is linted
        await next_diagnostics("fixed")
        change(3, text.replace('"hidden_act": "silu",', '"hidden_act": "silu"'))  # typing: a comma missing
        await next_diagnostics("broken")
        other = tmp_path / "tokenizer_config.json"
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=from_fs_path(str(other)), language_id="json", version=1, text='{"model_max_length": 4096}'
                )
            )
        )
        await next_diagnostics("not a model config")
        client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        await next_diagnostics("close")
        await client.shutdown_async(None)
        client.exit(None)
    finally:
        await client.stop()
    return steps


def test_lsp_session_with_a_real_client(tmp_path):
    pytest.importorskip("pygls")
    steps = asyncio.run(_session(tmp_path))
    uri = (tmp_path / "config.json").as_uri()
    line_of = {
        k: i
        for i, line in enumerate(LLAMA.read_text().splitlines())
        for k in ("intermediate_size", "vocab_size", "hidden_size")
        if f'"{k}"' in line
    }
    width = {k: len(LLAMA.read_text().splitlines()[i]) for k, i in line_of.items()}
    assert steps == [
        (
            "open",
            uri,
            [
                (
                    line_of["intermediate_size"],
                    4,
                    line_of["intermediate_size"],
                    width["intermediate_size"],
                    3,  # Information: est. +0.5% of a prefill step is below the 1% warning threshold
                    "CL201",
                    "colint",
                    "intermediate_size 11008 is 1376 per shard at tp=8, not a multiple of 128 [b200]",
                ),
                (
                    line_of["vocab_size"],
                    4,
                    line_of["vocab_size"],
                    width["vocab_size"],
                    3,
                    "CL202",
                    "colint",
                    "vocab_size 32000 is 4000 per shard at tp=8, not a multiple of 128 [b200]",
                ),
            ],
        ),
        (
            "actions",
            "CL201",
            [
                (
                    "CL201: intermediate_size 11008 → 11264 (+2.3% FFN params) (unsafe: changes the architecture)",
                    "quickfix",
                    False,
                    [(line_of["intermediate_size"], 27, line_of["intermediate_size"], 30, "264")],
                ),
                (
                    "CL201: intermediate_size 11008 → 10240 (-7.0% FFN params) (unsafe: changes the architecture)",
                    "quickfix",
                    False,
                    [(line_of["intermediate_size"], 26, line_of["intermediate_size"], 30, "0240")],
                ),
            ],
        ),
        (
            "actions",
            "CL202",
            [
                # unsafe since issue 17: padding changes a released checkpoint's weight shapes (not the preferred fix)
                (
                    "CL202: vocab_size 32000 → 32768 (pad the checkpoint's embedding and LM-head weights with 768 zero rows "
                    "to match; mask ids ≥ 32000 when sampling) (unsafe: changes the architecture)",
                    "quickfix",
                    False,
                    [(line_of["vocab_size"], 20, line_of["vocab_size"], 23, "768")],
                )
            ],
        ),
        (
            "fixed",
            uri,
            [
                (
                    line_of["vocab_size"],
                    4,
                    line_of["vocab_size"],
                    width["vocab_size"],
                    3,
                    "CL202",
                    "colint",
                    "vocab_size 32000 is 4000 per shard at tp=8, not a multiple of 128 [b200]",
                )
            ],
        ),
        (
            "broken",
            uri,
            [
                (
                    line_of["hidden_size"],
                    4,
                    line_of["hidden_size"],
                    width["hidden_size"],
                    1,
                    None,
                    "colint",
                    "invalid JSON: Expecting ',' delimiter",
                )
            ],
        ),
        ("not a model config", (tmp_path / "tokenizer_config.json").as_uri(), []),
        ("close", uri, []),
    ]


def test_lsp_without_pygls_is_a_clear_error(monkeypatch, capsys):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pygls" else real(name, *a))
    assert main(["lsp"]) == 2
    assert capsys.readouterr().err == "colint: error: `colint lsp` needs pygls: pip install 'colint-llm[lsp]'\n"


# ------------------------------------------------------------------ VS Code problem matcher


def _problem_matchers() -> list[dict]:
    block = re.search(r"```json\n(.*?)```", DOCS.read_text(), re.S).group(1)
    return json.loads(block)["tasks"][0]["problemMatcher"]


def _match(line: str) -> dict | None:
    for m in _problem_matchers():
        p = m["pattern"]
        hit = re.match(p["regexp"], line)
        if hit:
            return {k: hit.group(p[k]) for k in ("file", "line", "column", "code", "severity", "message") if k in p}
    return None


def test_problem_matcher_reads_the_text_output(tmp_path, monkeypatch, capsys):
    shutil.copy(LLAMA, tmp_path / "config.json")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "config.json").write_text('{"model_type": "llama",\n  "hidden_size": }\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    rc = main(["check", ".", "--isolated", "--tp", "8", "--exit-zero"])
    out = capsys.readouterr().out
    assert rc == 2  # the broken file
    matched = [m for m in map(_match, out.splitlines()) if m]
    text = LLAMA.read_text().splitlines()
    line = {
        k: str(next(i for i, s in enumerate(text, 1) if f'"{k}"' in s)) for k in ("intermediate_size", "vocab_size")
    }
    assert matched == [
        {
            "file": "broken/config.json",
            "line": "2",
            "column": "18",
            "code": None,
            "severity": "error",
            "message": "invalid JSON: Expecting value",
        },
        {
            "file": "config.json",
            "line": line["intermediate_size"],
            "column": "5",
            "code": "CL201",
            "severity": "info",
            "message": "intermediate_size 11008 is 1376 per shard at tp=8, not a multiple of 128 [b200]",
        },
        {
            "file": "config.json",
            "line": line["vocab_size"],
            "column": "5",
            "code": "CL202",
            "severity": "info",
            "message": "vocab_size 32000 is 4000 per shard at tp=8, not a multiple of 128 [b200]",
        },
    ]
    # the indented details, the summary and the run's estimate context match no pattern
    assert len(matched) == sum(
        not line.startswith((" ", "0", "1", "2", "3", "estimate: ")) for line in out.splitlines()
    )


def test_problem_matcher_file_level_finding():
    assert _match("config.json: CL104 info lm_head is tied [b200]") == {
        "file": "config.json",
        "code": "CL104",
        "severity": "info",
        "message": "lm_head is tied [b200]",
    }


def _apply(text: str, edit) -> str:
    """Apply an LSP TextEdit as an editor does: positions in UTF-16 code units."""
    lines = text.split("\n")

    def offset(pos):
        units = lines[pos.line].encode("utf-16-le")[: 2 * pos.character].decode("utf-16-le")
        return sum(len(s) + 1 for s in lines[: pos.line]) + len(units)

    return text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]


def test_quick_fix_edits_count_utf16_units(tmp_path):
    """A character outside the BMP before the key on its line: the edit still lands on the value."""
    pytest.importorskip("pygls")
    from lsprotocol import types

    from colint.fixing.fix_text import fixed_text
    from colint.lsp import code_actions, lint

    text = (
        '{"model_type": "llama", "_name_or_path": "🦙🦙", "vocab_size": 32000,\n "hidden_size": 4096, '
        '"intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32}\n'
    )
    overrides = {"gpus": [], "tp": 8, "select": ["CL202"]}
    diags, doc, findings = lint(str(tmp_path / "config.json"), text, overrides, True)
    assert [(d.code, d.range.start.line, d.range.start.character) for d in diags] == [
        ("CL202", 0, 49)
    ]  # 47 code points, 49 UTF-16 units
    [action] = code_actions("file:///x/config.json", doc, findings, diags, diags)
    [edit] = action.edit.changes["file:///x/config.json"]
    assert _apply(text, edit) == fixed_text(doc, [findings[0].fixes[0]]) == text.replace("32000", "32768")
    assert (
        code_actions(
            "file:///x/config.json",
            doc,
            findings,
            diags,
            [types.Diagnostic(range=diags[0].range, message="another tool's", code="E1")],
        )
        == []
    )

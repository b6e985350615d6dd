"""`colint lsp`: a language server (on pygls) that shows colint's findings while a config is edited.

The least code that every LSP editor (VS Code, Neovim, Helix, Emacs eglot, Zed, Sublime LSP)
accepts: diagnostics published on open, on every change (of the unsaved text) and on save, cleared
on close, and each finding's fixes offered as quick fixes (code actions; the edit `--fix` would make). The same flow as `colint check` on the editor's text: load → normalize → rules, with the
settings in force for the file (its nearest [tool.colint] / .colint.toml, then the flags given to
`colint lsp`). A file colint does not recognise as a model config (a tokenizer_config.json, a
package.json) gets no diagnostics, so a broad document selector stays quiet.

pygls is an optional dependency: ``pip install 'colint-llm[lsp]'``.
"""

from __future__ import annotations

import os

from colint.util.version import __version__
from colint.errors import ColintError, FormatNotRecognized

SOURCE = "colint"


def _utf16(text: str) -> int:
    """Length in UTF-16 code units: LSP positions count those (a character outside the BMP counts 2)."""
    return len(text) + sum(ord(c) > 0xFFFF for c in text)


def _position(text: str, offset: int):
    from lsprotocol import types

    line = text.count("\n", 0, offset)
    start = text.rfind("\n", 0, offset) + 1
    return types.Position(line=line, character=_utf16(text[start:offset]))


def lint(path: str, text: str, flags: dict, isolated: bool) -> tuple[list, object, list]:
    """``(diagnostics, Document or None, findings)`` of ``text`` (the editor's buffer of ``path``); the
    i-th diagnostic is the i-th finding when there are findings."""
    from colint.engine.checking import build_targets, check_document
    from colint.loading import load_text
    from colint.rules import select_rules
    from colint.engine.config_files import settings_for

    lines = text.splitlines()
    try:
        opts = settings_for(os.path.dirname(os.path.abspath(path)), flags, isolated=isolated)
        rules = select_rules(opts.select, opts.ignore, opts.extend_select)
        targets = build_targets(opts) if any(r.needs_workload for r in rules) else []
        doc = load_text(text, path)
        result = check_document(path, doc, targets, opts, rules)
        if result.error is not None:
            raise result.error
    except FormatNotRecognized:
        return [], None, []
    except ColintError as exc:
        return [_error_diagnostic(exc, path, lines)], None, []
    return [_finding_diagnostic(f, lines) for f in result.findings], doc, list(result.findings)


def _range(lines: list[str], line, column):
    """The LSP range from a finding's (1-based) line and column to the end of that line; the whole first line
    without a line."""
    from lsprotocol import types

    ln = max((line or 1) - 1, 0)
    text_line = lines[ln] if ln < len(lines) else ""
    col = _utf16(text_line[: max((column or 1) - 1, 0)]) if line else 0
    return types.Range(
        start=types.Position(line=ln, character=col),
        end=types.Position(line=ln, character=max(_utf16(text_line), col)),
    )


def _error_diagnostic(exc: ColintError, path: str, lines: list[str]):
    """Why the buffer could not be checked: at its line and key, or (a settings file's error: pyproject.toml, a
    GPU profile) on the first line, saying where."""
    from lsprotocol import types

    if exc.path is not None and os.path.abspath(exc.path) != os.path.abspath(path):
        where, message = _range(lines, None, None), exc.located()
    else:
        where, message = _range(lines, exc.line, exc.column), exc.message_with_key()
    return types.Diagnostic(range=where, message=message, severity=types.DiagnosticSeverity.Error, source=SOURCE)


def _finding_diagnostic(f, lines: list[str]):
    """A finding as a diagnostic: its message (with its GPU), then its details and fixes on their own lines."""
    from lsprotocol import types

    from colint.reporters.text import fix_line

    severity = {
        "error": types.DiagnosticSeverity.Error,
        "warning": types.DiagnosticSeverity.Warning,
        "info": types.DiagnosticSeverity.Information,
    }
    message = f.message + (f" [{f.gpu}]" if f.gpu else "")
    extra = list(f.details) + [fix_line(fx) for fx in f.fixes]
    if extra:
        message += "\n" + "\n".join(extra)
    return types.Diagnostic(
        range=_range(lines, f.line, f.column),
        message=message,
        severity=severity[f.severity],
        code=f.code,
        source=SOURCE,
    )


def code_actions(uri: str, doc, findings: list, diagnostics: list, wanted: list) -> list:
    """Quick fixes for the diagnostics the editor asks about (``wanted``): each fix of the finding that
    edits the file, as the smallest text edit (the safe one preferred; an unsafe one says so)."""
    from lsprotocol import types

    from colint.fixing.fix_text import fixed_text

    keys = {(d.code, d.range.start.line, d.message) for d in wanted}
    out = []
    for f, diag in zip(findings, diagnostics):
        if (diag.code, diag.range.start.line, diag.message) not in keys:
            continue
        for fx in f.fixes:
            if fx.safety == "display" or not fx.edits:
                continue
            try:
                new = fixed_text(doc, [fx])
            except (ColintError, ValueError):
                continue
            old = doc.text
            if new == old:
                continue
            start = 0
            while start < min(len(old), len(new)) and old[start] == new[start]:
                start += 1
            end = 0
            while end < min(len(old), len(new)) - start and old[-1 - end] == new[-1 - end]:
                end += 1
            edit = types.TextEdit(
                range=types.Range(start=_position(old, start), end=_position(old, len(old) - end)),
                new_text=new[start : len(new) - end],
            )
            title = f"{f.code}: {fx.title}" + (" (unsafe: changes the architecture)" if fx.safety == "unsafe" else "")
            out.append(
                types.CodeAction(
                    title=title,
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diag],
                    is_preferred=fx.safety == "safe",
                    edit=types.WorkspaceEdit(changes={uri: [edit]}),
                )
            )
    return out


def create_server(flags: dict, isolated: bool = False):
    from lsprotocol import types
    from pygls.lsp.server import LanguageServer
    from pygls.uris import to_fs_path

    server = LanguageServer("colint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Full)
    state: dict[str, tuple] = {}  # uri -> (diagnostics, Document, findings) of the text last linted

    def publish(uri: str, version=None) -> None:
        document = server.workspace.get_text_document(uri)
        path = to_fs_path(uri) or uri
        try:
            diags, doc, findings = lint(path, document.source, flags, isolated)
        except Exception as exc:  # noqa: BLE001 - a server keeps serving; the editor's log says why
            server.window_log_message(
                types.LogMessageParams(
                    type=types.MessageType.Error,
                    message=f"colint: internal error on {path}: {type(exc).__name__}: {exc}",
                )
            )
            diags, doc, findings = [], None, []
        state[uri] = (diags, doc, findings)
        server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diags, version=version)
        )

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls, params: types.DidOpenTextDocumentParams) -> None:
        publish(params.text_document.uri, params.text_document.version)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls, params: types.DidChangeTextDocumentParams) -> None:
        publish(params.text_document.uri, params.text_document.version)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls, params: types.DidSaveTextDocumentParams) -> None:
        publish(params.text_document.uri)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix])
    )
    def code_action(ls, params: types.CodeActionParams):
        diags, doc, findings = state.get(params.text_document.uri, ([], None, []))
        if doc is None or not findings:
            return []
        return code_actions(params.text_document.uri, doc, findings, diags, list(params.context.diagnostics))

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls, params: types.DidCloseTextDocumentParams) -> None:
        state.pop(params.text_document.uri, None)
        server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[])
        )

    return server

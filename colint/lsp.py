"""`colint lsp`: a language server (on pygls) that shows colint's findings while a config is edited.

The least code that every LSP editor (VS Code, Neovim, Helix, Emacs eglot, Zed, Sublime LSP)
accepts: diagnostics published on open, on every change (of the unsaved text) and on save, cleared
on close. The same flow as `colint check` on the editor's text: load → normalize → rules, with the
settings in force for the file (its nearest [tool.colint] / .colint.toml, then the flags given to
`colint lsp`). A file colint does not recognise as a model config (a tokenizer_config.json, a
package.json) gets no diagnostics, so a broad document selector stays quiet.

pygls is an optional dependency: ``pip install 'colint[lsp]'``.
"""

from __future__ import annotations

import os

from colint import __version__
from colint.errors import ColintError, FormatNotRecognized

SOURCE = "colint"


def diagnostics_for(path: str, text: str, overrides: dict, isolated: bool) -> list:
    """The LSP diagnostics of ``text`` (the editor's buffer of ``path``)."""
    from lsprotocol import types

    from colint.checking import build_targets, check_document
    from colint.loading import load_text
    from colint.rules import select_rules
    from colint.settings import find_config, resolve

    lines = text.splitlines()

    def where(line, column) -> "types.Range":
        ln = max((line or 1) - 1, 0)
        col = max((column or 1) - 1, 0) if line else 0
        end = len(lines[ln]) if ln < len(lines) else col
        return types.Range(start=types.Position(line=ln, character=col),
                           end=types.Position(line=ln, character=max(end, col)))

    severity = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning,
                "info": types.DiagnosticSeverity.Information}
    try:
        cfg = None if isolated else find_config(os.path.dirname(os.path.abspath(path)))
        opts = resolve(cfg, overrides).check_options()
        rules = select_rules(opts.select, opts.ignore, opts.extend_select)
        targets = build_targets(opts) if any(r.needs_workload for r in rules) else []
        doc = load_text(text, path)
        result = check_document(path, doc, targets, opts, rules)
        if result.error is not None:
            raise result.error
    except FormatNotRecognized:
        return []
    except ColintError as exc:
        if exc.path is not None and os.path.abspath(exc.path) != os.path.abspath(path):
            # a settings file's error (pyproject.toml, a GPU profile): say where, on the first line
            return [types.Diagnostic(range=where(None, None), message=exc.located(),
                                     severity=types.DiagnosticSeverity.Error, source=SOURCE)]
        return [types.Diagnostic(range=where(exc.line, exc.column), message=exc.message_with_key(),
                                 severity=types.DiagnosticSeverity.Error, source=SOURCE)]
    out = []
    for f in result.findings:
        from colint.reporters.text import fix_line

        message = f.message + (f" [{f.gpu}]" if f.gpu else "")
        extra = list(f.details) + [fix_line(fx) for fx in f.fixes]
        if extra:
            message += "\n" + "\n".join(extra)
        out.append(types.Diagnostic(range=where(f.line, f.column), message=message, severity=severity[f.severity],
                                    code=f.code, source=SOURCE))
    return out


def create_server(overrides: dict, isolated: bool = False):
    from lsprotocol import types
    from pygls.lsp.server import LanguageServer
    from pygls.uris import to_fs_path

    server = LanguageServer("colint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Full)

    def publish(uri: str, version=None) -> None:
        document = server.workspace.get_text_document(uri)
        path = to_fs_path(uri) or uri
        try:
            diags = diagnostics_for(path, document.source, overrides, isolated)
        except Exception as exc:  # noqa: BLE001 - a server keeps serving; the editor's log says why
            server.window_log_message(types.LogMessageParams(
                type=types.MessageType.Error, message=f"colint: internal error on {path}: {type(exc).__name__}: {exc}"))
            diags = []
        server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diags, version=version))

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls, params: types.DidOpenTextDocumentParams) -> None:
        publish(params.text_document.uri, params.text_document.version)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls, params: types.DidChangeTextDocumentParams) -> None:
        publish(params.text_document.uri, params.text_document.version)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls, params: types.DidSaveTextDocumentParams) -> None:
        publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls, params: types.DidCloseTextDocumentParams) -> None:
        server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))

    return server

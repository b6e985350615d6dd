"""Escaping of text that comes from the files colint reads (keys, values, paths) before it reaches an output
that interprets characters: a terminal, the GitHub Actions log, a Markdown step summary, a SARIF viewer.

A config in a pull request is untrusted: a key name can hold a terminal escape sequence, a line break that
starts a GitHub workflow command (``::error``/``::add-mask``/``::stop-commands``), or Markdown that leaves a
code block and injects a link. Every reporter passes what it prints through one of these helpers:

* :func:`control` — C0/C1 control characters (ESC, CR, BEL, ...), the Unicode line and paragraph separators
  and the bidirectional overrides ("Trojan Source") become visible ``\\xNN`` / ``\\uNNNN`` escapes; the
  backslash itself is left alone (it is common in paths on Windows and never interpreted by a terminal);
* :func:`log_lines` — a whole text report made safe for a CI log: control characters escaped within each
  line, and no line that the GitHub runner would read as a workflow command (it trims leading whitespace,
  then looks for ``::``; the legacy ``##[`` form is matched anywhere on the line);
* :func:`code_block` — a fenced Markdown code block that no content can close (the fence is longer than
  any run of backticks inside), with control characters escaped;
* :func:`md_inline` — text for a Markdown table cell or a sentence: ``|``, backticks, HTML and link/emphasis
  characters escaped, line breaks replaced by spaces.

Run as ``python -m colint.util.escape`` it reads text on stdin and writes it as a safe fenced block
(``--fence``, the default) for a shell step that appends a report to ``$GITHUB_STEP_SUMMARY``.
"""

from __future__ import annotations

import re
import sys

# C0 controls except TAB and LF, DEL, C1 controls, line/paragraph separators, bidi embeddings/overrides/isolates
_CONTROL = "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]"
# the same plus TAB and LF, for one-line fields
_CONTROL_ONE_LINE = "[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]"


def _escape_char(m: re.Match) -> str:
    c = m.group()
    o = ord(c)
    if c == "\n":
        return "\\n"
    if c == "\t":
        return "\\t"
    if c == "\r":
        return "\\r"
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}"


def control(text: str, *, one_line: bool = True) -> str:
    """``text`` with control characters written as escapes. ``one_line``: also LF and TAB (a field that must
    stay on its line: a path, a key, a message); otherwise LF and TAB are kept (a multi-line block)."""
    if text.isprintable():  # the common case, in C: no control, separator or format character at all
        return text
    return re.sub(_CONTROL_ONE_LINE if one_line else _CONTROL, _escape_char, text)


def workflow_safe(line: str) -> str:
    """One output line that the GitHub Actions runner cannot read as a workflow command."""
    stripped = line.lstrip()
    if stripped.startswith("::"):
        at = len(line) - len(stripped)
        line = line[:at] + "\\x3a" + stripped[1:]  # the first ':' written as an escape
    if "##[" in line:
        line = line.replace("##[", "#\\x23[")
    return line


def log_lines(text: str) -> str:
    """A multi-line report for a terminal or a CI log: each line's control characters escaped, no line a
    workflow command. Line breaks between lines are kept (a CR or CRLF inside is escaped)."""
    return "\n".join(workflow_safe(control(line)) for line in text.split("\n"))


def code_block(text: str, info: str = "") -> str:
    """``text`` as a fenced Markdown code block that nothing inside can close or escape from: the fence is
    one backtick longer than the longest backtick run in ``text`` (CommonMark: a closing fence must be at
    least as long as the opening one), and control characters are escaped. Markdown and HTML are not
    interpreted inside a code block."""
    body = log_lines(text.rstrip("\n"))
    longest = max((len(m.group()) for m in re.finditer(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    info = re.sub(r"[^A-Za-z0-9_+-]", "", info)
    return f"{fence}{info}\n{body}\n{fence}\n"


_MD_SPECIAL = r"([\\`*_{}\[\]()<>#+!|~&])"


def md_inline(text: str) -> str:
    """``text`` safe inside a Markdown table cell or paragraph: one line, Markdown punctuation and HTML
    characters backslash-escaped (GitHub renders ``\\|`` as a pipe inside a cell)."""
    one_line = " ".join(control(text, one_line=False).split())
    return re.sub(_MD_SPECIAL, r"\\\1", one_line)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    data = sys.stdin.buffer.read(16 * 1024 * 1024).decode("utf-8", errors="replace")
    if argv and argv[0] == "--lines":
        sys.stdout.write(log_lines(data))
    else:
        sys.stdout.write(code_block(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())

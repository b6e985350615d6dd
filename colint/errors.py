"""Errors that end a file's analysis with a one-line, located message (exit code 2)."""

from __future__ import annotations


class ColintError(Exception):
    """Base for errors reported to the user as ``path:line:col: error: message``."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        column: int | None = None,
        key: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line
        self.column = column
        self.key = key

    def message_with_key(self) -> str:
        """The message, prefixed with ``key: `` unless it already contains the key (the reporters' form)."""
        return self.message if not self.key or self.key in self.message else f"{self.key}: {self.message}"

    def located(self, path: str | None = None) -> str:
        """Render as ``path:line:col: error: message`` (line/col 1-based, omitted when unknown)."""
        where = path or self.path or "<input>"
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        msg = self.message
        if self.key and f"'{self.key}'" not in msg and f"`{self.key}`" not in msg:
            msg = f"{self.key}: {msg}"
        return f"{where}: error: {msg}"


class LoadError(ColintError):
    """The file cannot be read or parsed (malformed text, too large, not a mapping)."""


class SpecError(ColintError):
    """The file parsed, but its values cannot describe a model (wrong type, missing key, zero size)."""


class FormatNotRecognized(SpecError):
    """No adapter recognises the file's keys."""


class ProfileError(ColintError):
    """A hardware profile is invalid or a requested format is not native on it."""


class UsageError(ColintError):
    """An invalid option value (unknown GPU, unknown rule code, bad scenario)."""


class InternalError(ColintError):
    """An unexpected exception while checking one file (a bug in colint): that file's error, exit 2; the other
    files are still checked and reported."""

    @classmethod
    def wrap(cls, exc: BaseException, path: str) -> InternalError:
        text = " ".join(str(exc).split())
        text = text if len(text) <= 300 else text[:297] + "..."
        return cls(
            f"internal error: {type(exc).__name__}{': ' + text if text else ''} (please report this with the "
            "input file)",
            path=path,
        )

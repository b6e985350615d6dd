"""Atomic writes: the only way colint writes a file (fixed configs, reports, baselines, schemas)."""

from __future__ import annotations

import os
import tempfile


def write_atomic(path: str, text: str | bytes) -> None:
    """Replace ``path`` with ``text`` (str or bytes) through a temporary file in the same directory and
    ``os.replace``: readers see the old file or the new one, never a partial one. An existing
    file keeps its permission bits; a new one gets the usual umask-derived mode."""
    directory = os.path.dirname(os.path.abspath(path))
    try:
        mode = os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(prefix=".colint-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(text if isinstance(text, bytes) else text.encode("utf-8"))
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise

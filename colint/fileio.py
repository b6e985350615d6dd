"""File access for untrusted paths: bounded reads (every file colint reads) and writes that respect
their target (the only way colint writes a file: fixed configs, reports, baselines, schemas)."""

from __future__ import annotations

import os
import stat
import tempfile

_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


def file_kind(mode: int) -> str:
    """'a FIFO', 'a character device', ... for a mode that is not a regular file or directory."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def read_limited(path: str, limit: int, error, limit_for: str = "", noun: str = "file") -> bytes:
    """The bytes of the regular file ``path``, refused (``error(message, path=, line=1, column=1)``, a
    ColintError class) when it is larger than ``limit`` bytes, is a directory, a FIFO, a device or a
    socket, or cannot be opened (``limit_for`` ends the size message: " for a JSON config"). Opened non-blocking and checked with fstat before any read, so a FIFO
    never blocks and ``/dev/zero`` is never read; at most ``limit + 1`` bytes are read even if the file
    grows meanwhile."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise error("no such file", path=path) from None
    except PermissionError:
        raise error("permission denied", path=path) from None
    except IsADirectoryError:
        raise error(f"is a directory, not a {noun}", path=path) from None
    except OSError as exc:
        raise error(f"cannot read: {exc.strerror or exc}", path=path) from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise error(f"is a directory, not a {noun}", path=path)
        if not stat.S_ISREG(st.st_mode):
            raise error(f"is {file_kind(st.st_mode)}, not a regular file: refused unread", path=path)
        if st.st_size > limit:
            raise error(f"file is {st.st_size:,} bytes, over the {limit:,}-byte limit{limit_for}",
                        path=path, line=1, column=1)
        chunks, total = [], 0
        while total <= limit:
            try:
                chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            except BlockingIOError:  # a regular file never blocks; be safe anyway
                break
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:
            raise error(f"file is over the {limit:,}-byte limit{limit_for}", path=path, line=1, column=1)
        return data
    except OSError as exc:
        raise error(f"cannot read: {exc.strerror or exc}", path=path) from None
    finally:
        os.close(fd)


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
        with (os.fdopen(fd, "wb") if isinstance(text, bytes)
              else os.fdopen(fd, "w", encoding="utf-8", newline="")) as fh:
            fh.write(text)
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

"""File access for untrusted paths: bounded reads (every file colint reads) and writes that respect
their target (the only way colint writes a file: fixed configs, reports, baselines, schemas)."""

from __future__ import annotations

import os
import stat

_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def file_kind(mode: int) -> str:
    """'a FIFO', 'a character device', ... for a mode that is not a regular file or directory."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def read_limited(path: str, limit: int, error, limit_for: str = "", noun: str = "file") -> bytes:
    """The bytes of the regular file ``path``, refused (``error(message, path=, line=1, column=1)``, a
    ColintError class) when it is larger than ``limit`` bytes, is a directory, a FIFO, a device or a
    socket, or cannot be opened (``limit_for`` ends the size message: " for a JSON config"). Opened
    non-blocking and checked with fstat before any read, so a FIFO never blocks and ``/dev/zero`` is never
    read; at most ``limit + 1`` bytes are read even if the file grows meanwhile."""
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
            raise error(
                f"file is {st.st_size:,} bytes, over the {limit:,}-byte limit{limit_for}", path=path, line=1, column=1
            )
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


class WriteRefused(OSError):
    """colint would not write this file (changed since it was read, read-only): ``strerror`` says why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.strerror = message


def write_atomic(path: str, text: str | bytes, *, expect: bytes | None = None) -> None:
    """Write ``text`` (str, written as UTF-8 with its line endings as they are, or bytes) to ``path``,
    respecting what ``path`` is:

    * a symlink is resolved and its target written (the link stays a link);
    * a regular file is replaced atomically (a temporary file in the same directory, then ``os.replace``:
      readers see the old file or the new one, never a partial one), keeping its mode and, where the
      process may set them, its owner and group. A file with several hard links, or one whose owner this
      process cannot give the new file, is rewritten in place instead, so the links and the owner stay;
    * a device, FIFO or socket (``-o /dev/stdout``, ``/dev/null``) is opened and written plainly, never
      replaced;
    * a regular file whose permission bits allow no write (0444) is not overwritten, even by root;
    * with ``expect`` (the bytes the file held when it was read), a file that changed since is not
      overwritten (``WriteRefused``), so an edit made while colint ran is never lost.

    A missing file is created with the usual umask-derived mode."""
    data = text if isinstance(text, bytes) else text.encode("utf-8")
    target = os.path.realpath(path)
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(21, "Is a directory", path)
    if st is not None and not stat.S_ISREG(st.st_mode):
        with open(target, "wb") as fh:  # a device, FIFO or socket: written, never replaced
            fh.write(data)
        return
    if st is not None:
        if not st.st_mode & 0o222:
            raise WriteRefused(f"read-only file (mode {stat.S_IMODE(st.st_mode):04o}); not overwritten")
        if expect is not None and _current_bytes(target, len(expect)) != expect:
            raise WriteRefused("changed since colint read it; not overwritten (run colint again)")
        if st.st_nlink > 1:
            _write_in_place(target, data)
            return
    _replace(target, data, st)


def _current_bytes(path: str, expected_len: int) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read(expected_len + 1)
    except OSError:
        return None


def _write_in_place(path: str, data: bytes) -> None:
    with open(path, "r+b") as fh:
        fh.write(data)
        fh.truncate()
        fh.flush()
        os.fsync(fh.fileno())


def _replace(target: str, data: bytes, st) -> None:
    import tempfile  # here: a check that writes nothing does not import it

    directory = os.path.dirname(target)
    if st is not None:
        mode = stat.S_IMODE(st.st_mode)
    else:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(prefix=".colint-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if st is not None and hasattr(os, "chown"):
            own = os.stat(tmp)
            if (own.st_uid, own.st_gid) != (st.st_uid, st.st_gid):
                try:
                    os.chown(tmp, st.st_uid, st.st_gid)
                except PermissionError:  # not ours to give away: rewrite the file itself, which keeps its owner
                    os.unlink(tmp)
                    _write_in_place(target, data)
                    return
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise

"""Files an operator names (a key file, a wire log, a run's records, a checkpoint's config), read with
bounds: a data file must be a regular file (never a FIFO, a device such as /dev/zero, a socket or a
folder) and no larger than a cap, so a typo or a script's mistake is one line of error, never a hang
or gigabytes read into memory.

Standard library only: the CLI's flag handling uses it while `agentic-eval --help` must stay quick.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from typing import Any

from agentic_eval.errors import AgenticEvalError

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB


def size_text(n: int) -> str:
    """`n` bytes for a person: 64 KiB, 16 MiB, 4 GiB (whole units), else a plain byte count."""
    for unit, size in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n:,} bytes"


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def special_file_problem(path: str | os.PathLike[str]) -> str | None:
    """Why `path` cannot be read as a data file (it is missing, a folder, a FIFO, a device, a
    socket), or None for a regular file (symbolic links followed)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "no such file"
    except OSError as exc:
        return f"cannot read it ({exc.strerror or exc})"
    if stat.S_ISREG(mode):
        return None
    return f"is {_kind(mode)}, not a regular file"


def open_data_file(path: str | os.PathLike[str], *, what: str, limit: int, follow_links: bool = True) -> int:
    """A read-only descriptor of the regular file `path`, no larger than `limit`, else the one-line error
    naming it as `what`. A FIFO is refused without blocking on its open, a device or a folder without
    reading it; with `follow_links=False` a symbolic link (the last part of the path) is refused too, so a
    link in a folder someone handed over never reads a file of this machine. The caller closes it."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
        if os.path.islink(path):  # O_NOFOLLOW's error (ELOOP) says less than this
            raise AgenticEvalError(f"{what}: is a symbolic link; refused (only the run's own files are read)")
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise AgenticEvalError(f"{what}: cannot read it (no such file)") from None
    except OSError as exc:  # a socket (ENXIO), no permission, a link (ELOOP), ...
        problem = special_file_problem(path)
        raise AgenticEvalError(f"{what}: {problem or f'cannot read it ({exc.strerror or exc})'}") from None
    try:
        info = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        raise AgenticEvalError(f"{what}: cannot read it ({exc.strerror or exc})") from None
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise AgenticEvalError(f"{what}: is {_kind(info.st_mode)}, not a regular file; give a file")
    if info.st_size > limit:
        os.close(fd)
        raise AgenticEvalError(f"{what}: {size_text(info.st_size)} is over the limit of {size_text(limit)} "
                               "for this file; is it the right one?")
    return fd


def _read_upto(fd: int, limit: int) -> bytes:
    """At most `limit + 1` bytes of `fd` (one more than the limit says it is longer)."""
    chunks: list[bytes] = []
    got = 0
    while got <= limit:
        chunk = os.read(fd, min(MIB, limit + 1 - got))
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def read_data_file(path: str | os.PathLike[str], *, what: str, limit: int, follow_links: bool = True) -> bytes:
    """The bytes of the regular file `path`, at most `limit` of them; `what` names it in the one-line
    error (e.g. "--api-key-file /dev/zero"). A FIFO is refused without blocking on its open, a device
    or a folder without reading it, a file over `limit` without reading past the cap (`open_data_file`)."""
    data = _read_checked(path, what, limit, limit, follow_links)
    if len(data) > limit:  # grew while being read
        raise AgenticEvalError(f"{what}: over the limit of {size_text(limit)} for this file; is it the right one?")
    return data


def read_data_head(path: str | os.PathLike[str], *, what: str, limit: int, follow_links: bool = True,
                   max_size: int = 64 * GIB) -> tuple[bytes, bool]:
    """The first `limit` bytes of the regular file `path` and whether there was more (a long grader output
    shown cut). Refused like `read_data_file` (a special file, a link when `follow_links=False`), and a
    file over `max_size`."""
    data = _read_checked(path, what, max_size, limit, follow_links)
    return data[:limit], len(data) > limit


def _read_checked(path: str | os.PathLike[str], what: str, size_limit: int, read_limit: int,
                  follow_links: bool) -> bytes:
    """Up to `read_limit` bytes (and one more, to tell a longer file) of a file `open_data_file` accepts under
    `size_limit`; a read error is one line naming `what`."""
    fd = open_data_file(path, what=what, limit=size_limit, follow_links=follow_links)
    try:
        return _read_upto(fd, read_limit)
    except OSError as exc:
        raise AgenticEvalError(f"{what}: cannot read it ({exc.strerror or exc})") from None
    finally:
        os.close(fd)


def read_data_text(path: str | os.PathLike[str], *, what: str, limit: int) -> str:
    """`read_data_file` decoded as UTF-8: a file that is not UTF-8 text is the same one-line error."""
    data = read_data_file(path, what=what, limit=limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AgenticEvalError(f"{what}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def loads_toml(text: str) -> dict[str, Any]:
    """`tomllib.loads`, with arrays or tables nested deeper than the parser can follow (a few hundred levels)
    raised as the same `TOMLDecodeError` as any other malformed TOML, never a RecursionError."""
    import tomllib

    try:
        return tomllib.loads(text)
    except RecursionError:
        raise tomllib.TOMLDecodeError("arrays or tables nested too deep (keep nesting under a hundred levels)"
                                      ) from None


WRONG_VALUE_ERRORS = frozenset({
    "int_parsing", "int_type", "int_from_float", "float_parsing", "float_type", "bool_parsing", "bool_type",
    "string_type", "list_type", "dict_type", "model_type", "literal_error", "enum",
    "greater_than", "greater_than_equal", "less_than", "less_than_equal", "finite_number"})
"""Validation errors (pydantic's types) where the value given is worth echoing: a wrong type, a choice not
among the allowed, a number out of bounds. Not a string a custom rule refused (a URL may hold a password)."""


def given_value(error: Mapping[str, Any]) -> str:
    """` (got 'five minutes')` for a data file's value that failed validation as WRONG_VALUE_ERRORS, when it is
    a short scalar; "" otherwise. `error` is one of pydantic's `ValidationError.errors()`."""
    value = error.get("input")
    if error.get("type") not in WRONG_VALUE_ERRORS or not isinstance(value, str | int | float | bool):
        return ""
    shown = ("true" if value else "false") if isinstance(value, bool) else repr(value)
    return f" (got {shown})" if len(shown) <= 60 else ""


def check_data_file(path: str | os.PathLike[str], *, what: str, limit: int | None = None) -> None:
    """Refuse, in one line, a data file another reader will open: missing, special, or over `limit`."""
    problem = special_file_problem(path)
    if problem is not None:
        raise AgenticEvalError(f"{what}: {problem}; give a file")
    size = os.stat(path).st_size
    if limit is not None and size > limit:
        raise AgenticEvalError(f"{what}: {size_text(size)} is over the limit of {size_text(limit)} for this file; "
                               "is it the right one?")


def check_output_file(path: str | os.PathLike[str], *, what: str) -> None:
    """A file about to be written: if something is already there it must be a regular file (a FIFO
    would wait for a reader forever; a device such as /dev/zero, replaced by a file, would break the
    machine for everyone; a folder makes no sense). A missing file (or folder) is the writer's to make."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        raise AgenticEvalError(f"{what}: cannot use it ({exc.strerror or exc})") from None
    if not stat.S_ISREG(mode):
        raise AgenticEvalError(f"{what}: is {_kind(mode)}, not a regular file; give a file path to write")

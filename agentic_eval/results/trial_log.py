"""The torn-line-safe trial log: trials.jsonl, one `TrialResult` per line, appended and fsynced the moment a
trial ends (so a run killed at any point keeps every finished trial), and read back line by line so that a
torn write costs that line only."""

from __future__ import annotations

import json
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from agentic_eval.results.records import TrialResult

TRIALS_FILE = "trials.jsonl"
UNREADABLE_FILE = "trials.unreadable.txt"
"""Lines of trials.jsonl that could not be read (a torn write), kept aside byte for byte, one per line."""
_RECORD_START = b'{"format_version":'


class TrialLog:
    """Appends trial records to trials.jsonl durably (one write, flush + fsync per record), safely across
    threads. A record is pure ASCII (non-ASCII characters escaped), so no tear can split a character; and
    a file that does not end in a newline (a tear in an earlier session) gets one before the next record,
    so a torn line never swallows the record written after it."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / TRIALS_FILE
        self._lock = threading.Lock()

    def append(self, result: TrialResult) -> None:
        text = json.dumps(result.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":"))
        valid = json.loads(text.encode("utf-8", "replace"))  # a lone surrogate (from a model's text) becomes '?'
        data = (json.dumps(valid, ensure_ascii=True, separators=(",", ":")) + "\n").encode("ascii")
        with self._lock:
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                if not _ends_with_newline(fd):
                    data = b"\n" + data
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                os.fsync(fd)
            finally:
                os.close(fd)


def _ends_with_newline(fd: int) -> bool:
    """True for an empty file or one whose last byte is a newline."""
    size = os.fstat(fd).st_size
    return size == 0 or os.pread(fd, 1, size - 1) == b"\n"


def _parse_record(line: bytes) -> TrialResult:
    """One line as a record; ValueError (UnicodeDecodeError, ValidationError) when it is not one."""
    return TrialResult.model_validate_json(line.decode("utf-8"))


def _keep_aside(run_dir: Path, lines: list[bytes]) -> str:
    """Copy unreadable lines to the side file (each once); the side file's name, or why it could not be written."""
    side = run_dir / UNREADABLE_FILE
    try:
        kept = set(side.read_bytes().split(b"\n")) if side.exists() else set()
        new = [ln for ln in dict.fromkeys(lines) if ln not in kept]
        if new:
            with open(side, "ab") as fh:
                fh.write(b"".join(ln + b"\n" for ln in new))
        return f"kept in {side}"
    except OSError as exc:
        return f"not kept aside: {exc.strerror or exc}"


@dataclass(frozen=True)
class UnreadableLine:
    """A line of trials.jsonl that is not a record (a torn write), and which trial it was, when the line
    still holds its identity (the first fields of a record: `trial_id`, then `task_id`)."""

    number: int
    why: str
    trial_id: str | None = None
    task_id: str | None = None


@dataclass
class TrialLogContents:
    """What `read_trial_log` found: the records, a warning per unreadable line, and those lines."""

    records: list[TrialResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    unreadable: list[UnreadableLine] = field(default_factory=list)


_IDENTITY_FIELD = re.compile(rb'"(trial_id|task_id)":("(?:[^"\\]|\\.)*")')
"""A whole `"trial_id":"..."` or `"task_id":"..."` pair in the bytes of a torn record (records are ASCII)."""


def _identity(line: bytes) -> tuple[str | None, str | None]:
    """The trial and task a torn record names in full (each None when the tear came before it)."""
    found: dict[bytes, str] = {}
    for match in _IDENTITY_FIELD.finditer(line):
        try:
            value = json.loads(match.group(2))
        except ValueError:
            continue
        if isinstance(value, str):
            found.setdefault(match.group(1), value)  # the first: the record's own (top-level fields come first)
    return found.get(b"trial_id"), found.get(b"task_id")


def read_trials(run_dir: Path) -> tuple[list[TrialResult], list[str]]:
    """Every record of a run, and a one-line warning per line that could not be read (`read_trial_log`)."""
    contents = read_trial_log(run_dir)
    return contents.records, contents.warnings


def read_trial_log(run_dir: Path) -> TrialLogContents:
    """Every record of a run, a one-line warning per line that could not be read, and those lines.

    The file is read as bytes and decoded line by line: a line cut short (a crash or a full disk
    mid-write), even inside a multi-byte character, costs that line only. It is skipped, copied aside
    to trials.unreadable.txt, and its trial runs again on resume. A whole record that an older writer
    appended to a torn line (no newline in between) is still found and read.
    """
    path = run_dir / TRIALS_FILE
    contents = TrialLogContents()
    unreadable: list[bytes] = []
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return contents
    for n, line in enumerate(data.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            contents.records.append(_parse_record(line))
            continue
        except UnicodeDecodeError as exc:
            why = f"not UTF-8 at byte {exc.start}: a torn write"
        except ValidationError as exc:
            why = exc.errors()[0]["msg"]
        start = line.rfind(_RECORD_START)
        if start > 0:  # a record glued onto a torn line
            try:
                contents.records.append(_parse_record(line[start:]))
                line = line[:start]
            except ValueError:
                pass
        unreadable.append(line)
        contents.unreadable.append(UnreadableLine(n, why[:120], *_identity(line)))
        contents.warnings.append(f"{path}:{n}: unreadable trial record skipped ({why[:120]}); its trial runs "
                                 "again on resume")
    if unreadable:
        where = _keep_aside(run_dir, unreadable)
        contents.warnings = [f"{w}; {where}" for w in contents.warnings]
    return contents

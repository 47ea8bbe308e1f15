"""Progress on long work, one helper for every command: a live bar with an ETA on a terminal, plain
lines in a log (a few, not one per step), nothing with --json.

    with ProgressDisplay("tool-call battery", total=len(cases), quiet=args.json) as progress:
        run_battery(..., on_result=lambda r: progress.advance())
"""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Self, TextIO

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID

    from agentic_eval.results.records import TrialResult

LOG_EVERY_S = 10.0
"""In a log, a line at most this often, besides each tenth of the way and the end."""


def eta_s(done: float, total: float, elapsed_s: float) -> float | None:
    """Seconds left at the average pace so far; None before the first step or without a total."""
    if done <= 0 or total <= 0 or elapsed_s < 0:
        return None
    return max(0.0, elapsed_s / done * (total - done))


def clock(seconds: float | None) -> str:
    """'42s', '3m05s', '1h02m'; '?' when unknown."""
    if seconds is None:
        return "?"
    s = round(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def progress_line(label: str, done: int, total: int, elapsed_s: float, note: str = "") -> str:
    """One plain log line: 'validate: 4/16 (25 %), 12s elapsed, eta 36s: note'."""
    pct = f" ({100 * done / total:.0f} %)" if total else ""
    eta = f", eta {clock(eta_s(done, total, elapsed_s))}" if done < total else ""
    return f"{label}: {done}/{total}{pct}, {clock(elapsed_s)} elapsed{eta}" + (f": {note}" if note else "")


class ProgressDisplay:
    """A context manager: `advance()` after each step, `add_total()` when more work turns up."""

    def __init__(self, label: str, total: int, *, quiet: bool = False, console: Console | None = None,
                 stream: TextIO | None = None, live: bool | None = None, transient: bool = True) -> None:
        self.label, self.total, self.done = label, total, 0
        self.quiet = quiet
        self._stream = stream or sys.stderr
        self._console = console
        self.live = (console.is_terminal if console is not None else self._stream.isatty()) if live is None else live
        self._transient = transient
        self._started = time.monotonic()
        self._last_line_at = self._started
        self._last_tenth = 0
        self._bar: Progress | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> Self:
        self._started = self._last_line_at = time.monotonic()
        if self.quiet or not self.live:
            return self
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        console = self._console or Console(file=self._stream, highlight=False)
        self._bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                             TextColumn("{task.fields[note]}"), TimeElapsedColumn(), TextColumn("eta"),
                             TimeRemainingColumn(), console=console, transient=self._transient)
        self._task = self._bar.add_task(self.label, total=self.total, note="")
        self._bar.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._bar is not None:
            self._bar.stop()
        elif not self.quiet and exc_type is None and self.done and self._last_tenth < 10:
            self._line("done")

    @property
    def elapsed_s(self) -> float:
        return time.monotonic() - self._started

    def add_total(self, more: int) -> None:
        self.total += more
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, total=self.total)

    def advance(self, steps: int = 1, note: str = "") -> None:
        self.set(self.done + steps, note)

    def set(self, done: int, note: str = "") -> None:
        """Set how many steps are done (and a short note shown beside the bar, or in the log line)."""
        self.done = done
        if self.quiet:
            return
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, completed=done, note=note)
            return
        tenth = int(10 * done / self.total) if self.total else 0
        now = time.monotonic()
        if tenth > self._last_tenth or now - self._last_line_at >= LOG_EVERY_S or done >= self.total:
            self._last_tenth = max(tenth, self._last_tenth)
            self._line(note)

    def print(self, text: str) -> None:
        """A line above the bar (or in the log), e.g. one finished step's result."""
        if self.quiet:
            return
        if self._bar is not None:
            self._bar.console.print(text, markup=False, highlight=False)
        else:
            print(text, file=self._stream, flush=True)

    def _line(self, note: str) -> None:
        self._last_line_at = time.monotonic()
        print(progress_line(self.label, self.done, self.total, self.elapsed_s, note), file=self._stream, flush=True)


@dataclass
class RunProgress:
    """Counts the `run` command's progress display reads (passed, failed, unscored, running); updated from the
    runner's worker threads through `on_start` and `on_result`."""

    total: int = 0
    done: int = 0
    passed: int = 0
    failed: int = 0
    unscored: int = 0
    running: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, result: TrialResult) -> None:
        with self.lock:
            self.done += 1
            self.running -= 1
            if result.outcome == "pass":
                self.passed += 1
            elif result.outcome in ("fail", "cheated", "tampered"):
                self.failed += 1
            else:
                self.unscored += 1

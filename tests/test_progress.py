"""The shared progress display: ETA arithmetic, a live bar on a terminal, a few plain lines in a log,
and the commands that use it (validate, tooling, forms, speed, think-check, run) in a log."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from agentic_eval.cli.progress import ProgressDisplay, clock, eta_s, progress_line


@pytest.mark.parametrize(("done", "total", "elapsed", "eta"), [
    (0, 10, 5.0, None), (5, 10, 10.0, 10.0), (10, 10, 30.0, 0.0), (1, 4, 2.0, 6.0), (3, 0, 1.0, None),
])
def test_eta_is_the_average_pace_so_far(done: int, total: int, elapsed: float, eta: float | None) -> None:
    assert eta_s(done, total, elapsed) == eta


@pytest.mark.parametrize(("seconds", "text"), [(None, "?"), (0.4, "0s"), (42, "42s"), (185, "3m05s"),
                                                (3720, "1h02m")])
def test_clock(seconds: float | None, text: str) -> None:
    assert clock(seconds) == text


def test_progress_line() -> None:
    assert progress_line("validate", 4, 16, 12.0, "t3 ok") == "validate: 4/16 (25 %), 12s elapsed, eta 36s: t3 ok"
    assert progress_line("validate", 16, 16, 40.0) == "validate: 16/16 (100 %), 40s elapsed"


def test_a_log_gets_a_line_per_tenth_not_per_step() -> None:
    out = io.StringIO()
    with ProgressDisplay("battery", 100, stream=out, live=False) as progress:
        for _ in range(100):
            progress.advance()
    lines = out.getvalue().splitlines()
    assert len(lines) == 10 and lines[0].startswith("battery: 10/100 (10 %)") and "eta" in lines[0]
    assert lines[-1].startswith("battery: 100/100 (100 %)")


def test_a_terminal_gets_a_live_bar_with_an_eta() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=120)
    with ProgressDisplay("speed", 4, console=console, transient=False) as progress:
        assert progress.live
        progress.add_total(2)
        progress.set(3, note="free_gen 3/5")
        progress.print("a line above the bar")
    screen = out.getvalue()
    assert "speed" in screen and "3/6" in screen and "eta" in screen and "free_gen 3/5" in screen
    assert "a line above the bar" in screen


def test_quiet_prints_nothing() -> None:
    out = io.StringIO()
    with ProgressDisplay("x", 3, stream=out, live=False, quiet=True) as progress:
        progress.advance(3)
        progress.print("hidden")
    assert out.getvalue() == ""


def test_validate_in_a_log_prints_plain_progress_lines(mini_pack: Path, tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "agentic_eval.cli", "validate", "--tasks", str(mini_pack)],
                          capture_output=True, text=True, timeout=240, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "validating: 1/1 (100 %)" in proc.stderr and "answer-file ok" in proc.stderr
    assert "\x1b[" not in proc.stderr  # no terminal codes in a log

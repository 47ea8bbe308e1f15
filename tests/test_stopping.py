"""SIGTERM (and Ctrl-C) stop a command in every phase: while a task's sandbox is generated (in a trial's
thread, where it cannot be cancelled, or in the main thread), while a padded prompt is built and sent, and
a second signal at once. Each wait here is bounded; what is asserted is that the process stopped, not how
fast."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agentic_eval.testing import FakeEndpoint, ReceivedRequest, ScriptedReply
from tests.helpers import answer

CLI = [sys.executable, "-m", "agentic_eval.cli"]
WAIT_S = 120  # a bound on a hang; a stop takes seconds

SLOW_GENERATOR = '''"""A generator that says it started, then takes ten minutes (bounded: a test must never hang)."""
import os
import time
from pathlib import Path


def generate(root: Path, seed: int, params: dict) -> dict:
    Path(os.environ["AE_TEST_MARKER"]).write_text("started")
    for _ in range(12000):
        time.sleep(0.05)
    return {"port": 1, "name": "slow"}
'''


@pytest.fixture
def slow_pack(mini_pack: Path) -> Path:
    (mini_pack / "sandboxes" / "tiny.py").write_text(SLOW_GENERATOR)
    return mini_pack


@pytest.fixture
def leftovers_cleaned() -> Iterator[None]:
    """A process ended at once leaves its trial's temp folder; clean it as the next run would."""
    yield
    from agentic_eval.leftovers import clean_dead_runs

    clean_dead_runs()


def _start(argv: list[str], tmp_path: Path, **env: str) -> tuple[subprocess.Popen[str], Path]:
    marker = tmp_path / "generator-started"
    proc = subprocess.Popen([*CLI, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=tmp_path, env={**os.environ, "AE_TEST_MARKER": str(marker), **env})
    return proc, marker


def _wait_for(condition: Callable[[], bool], proc: subprocess.Popen[str], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if proc.poll() is not None:
            pytest.fail(f"exited ({proc.returncode}) before {what}: {proc.communicate()[1][-2000:]}")
        if time.monotonic() > deadline:
            pytest.fail(f"never reached: {what}")
        time.sleep(0.1)


def _stopped(proc: subprocess.Popen[str], *signals: signal.Signals) -> tuple[int, str]:
    """Send the signals (a moment apart), then wait, bounded, for the process to end: (exit status, stderr)."""
    try:
        for i, sig in enumerate(signals):
            if i:
                time.sleep(0.5)
            proc.send_signal(sig)
        _, err = proc.communicate(timeout=WAIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=30)
            pytest.fail("the process did not stop")
    return proc.returncode, err


@pytest.mark.usefixtures("leftovers_cleaned")
def test_sigterm_while_a_trial_generates_its_sandbox(slow_pack: Path, tmp_path: Path) -> None:
    """The generator runs in the trial's thread, where nothing can cancel it: past the grace period the
    process ends anyway, saying so."""
    proc, marker = _start(["run", "--agent", "nop", "--tasks", str(slow_pack), "--run-dir", str(tmp_path / "runs"),
                           "--sandbox", "local"], tmp_path, AGENTIC_EVAL_STOP_GRACE_S="1")
    _wait_for(marker.exists, proc, "the generator started")
    code, err = _stopped(proc, signal.SIGTERM)
    assert code == 130, err
    assert "still stopping after 1s: stopped at once" in err and "Traceback" not in err


@pytest.mark.usefixtures("leftovers_cleaned")
def test_a_second_signal_stops_at_once(slow_pack: Path, tmp_path: Path) -> None:
    proc, marker = _start(["run", "--agent", "nop", "--tasks", str(slow_pack), "--run-dir", str(tmp_path / "runs"),
                           "--sandbox", "local"], tmp_path, AGENTIC_EVAL_STOP_GRACE_S="600")
    _wait_for(marker.exists, proc, "the generator started")
    code, err = _stopped(proc, signal.SIGTERM, signal.SIGINT)
    assert code == 130 and "a second signal: stopped at once" in err, err


def test_sigterm_while_tasks_show_generates_in_the_main_thread(slow_pack: Path, tmp_path: Path) -> None:
    proc, marker = _start(["tasks", "show", "answer-file", "--tasks", str(slow_pack)], tmp_path)
    _wait_for(marker.exists, proc, "the generator started")
    code, err = _stopped(proc, signal.SIGTERM)
    assert code == 130 and err.strip().splitlines()[-1] == "agentic-eval: interrupted", err


@pytest.mark.usefixtures("leftovers_cleaned")
def test_sigterm_while_validate_generates(slow_pack: Path, tmp_path: Path) -> None:
    proc, marker = _start(["validate", "--tasks", str(slow_pack), "--sandbox", "local", "--no-redteam"], tmp_path,
                          AGENTIC_EVAL_STOP_GRACE_S="1")
    _wait_for(marker.exists, proc, "the generator started")
    code, err = _stopped(proc, signal.SIGTERM)
    assert code == 130 and "Traceback" not in err, err


def test_sigterm_with_the_largest_padding_while_the_model_thinks(mini_pack: Path, tmp_path: Path) -> None:
    """--system-prompt-tokens at its limit pads cheaply to about 8 MB (it once built gigabytes and never
    returned to a SIGTERM); the run stops while the model has the request."""
    arrived, release = threading.Event(), threading.Event()
    seen: list[int] = []

    def thinks_forever(request: ReceivedRequest) -> ScriptedReply:
        seen.append(len(request.body["messages"][0]["content"]))
        arrived.set()
        release.wait(WAIT_S)
        return answer("done")

    fake = FakeEndpoint(responder=thinks_forever)
    fake.start()
    try:
        proc, _ = _start(["run", "--model", fake.model, "--base-url", fake.base_url, "--tasks", str(mini_pack),
                          "--run-dir", str(tmp_path / "runs"), "--sandbox", "local", "--system-prompt-tokens",
                          "2000000"], tmp_path)
        _wait_for(arrived.is_set, proc, "the padded request reached the endpoint")
        code, err = _stopped(proc, signal.SIGTERM)
    finally:
        release.set()
        fake.stop()
    assert code == 130 and "resume with: agentic-eval run --resume" in err, err
    assert 7_900_000 <= seen[0] <= 8_010_000  # 2,000,000 tokens at 4 characters each


def test_padding_is_bounded_and_what_the_unit_loop_built() -> None:
    from agentic_eval.agents.builtin import prompts

    def unit_by_unit(base: str, tokens: int) -> str:  # the padding as it was first written
        target, parts, length, units, index = tokens * 4, [base], len(base), prompts._guidance_units(), 0
        while length < target:
            unit = units[index % len(units)]
            if length + len(unit) - target > target - length:
                break
            parts.append(unit)
            length += len(unit)
            index += 1
        return "".join(parts)

    whole = prompts.guidance_tokens()
    for tokens in [1, 500, 2000, 9300, 30000, whole - 3, whole, whole + 7, 3 * whole + 11, 150_001]:
        assert prompts.pad_system_prompt(prompts.BASE_SYSTEM_PROMPT, tokens) == \
            unit_by_unit(prompts.BASE_SYSTEM_PROMPT, tokens), tokens
    biggest = prompts.build_system_prompt(prompts.MAX_PAD_TOKENS)
    assert abs(len(biggest) - 4 * prompts.MAX_PAD_TOKENS) < 2000
    with pytest.raises(ValueError, match="over the limit"):
        prompts.pad_system_prompt("", prompts.MAX_PAD_TOKENS + 1)

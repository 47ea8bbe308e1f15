"""A reward verifier's failure that looks like the machine's or the task's is ruled so only when a control run on
the task's untouched working directory fails the same way (confine/verifier_control.py): the model's code that
prints a 'command not found' line, kills the verifier or hangs it is a scored fail naming the cause; the honest
oracle passes; the control runs once per task, not per trial."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentic_eval.confine import verifier_control
from agentic_eval.confine.docker_env import VerifierRun
from agentic_eval.confine.verifier_cause import VerifierFault
from agentic_eval.confine.verifier_control import ControlRun, settle
from tests.helpers import HARBOR, harbor_run

CONTROL = Path(__file__).resolve().parent / "packs" / "harbor-control"


class _Trial:
    """What `settle` reads of a trial (the control's result is given apart)."""

    offline = True
    sandbox = Path("/nonexistent")

    class task:  # a stand-in namespace
        grader_path = Path("/nonexistent/test.sh")


def _settled(run: VerifierRun, control: ControlRun | None, monkeypatch: pytest.MonkeyPatch) -> VerifierRun:
    monkeypatch.setattr(verifier_control, "control_run", lambda trial, cancel=None: control)
    return settle(_Trial(), run)  # type: ignore[arg-type]


MISSING = VerifierFault("program", "the verifier needs `jq`", "jq")


@pytest.mark.parametrize("run,control,expect", [
    # no reward on the model's tree, a reward on the task's: the model's doing, a scored fail at 0
    (VerifierRun(None, "", 1.0, error="the verifier wrote no reward"), ControlRun(0.0, False, "", None, 1.0),
     ("fail", "wrote no reward on the model's working directory")),
    (VerifierRun(None, "", 60.0, timed_out=True), ControlRun(0.0, False, "", None, 1.0), ("fail", "timed out")),
    # the control fails the same way: the task's (unscored), said so
    (VerifierRun(None, "", 60.0, timed_out=True), ControlRun(None, True, "timeout", None, 60.0),
     ("error", "timed out there too")),
    (VerifierRun(None, "", 1.0, error="the verifier wrote no reward"),
     ControlRun(None, False, "the verifier wrote no reward", None, 1.0), ("error", "wrote none either")),
    # no reward, and the control's own output (no model's code ran) names the missing program: the task's, named
    (VerifierRun(None, "", 1.0, error="no reward"), ControlRun(None, False, "no reward", MISSING, 1.0),
     ("fault", "needs `jq`")),
    # a fault the run's output shows but the control does not: the model's code printed it
    (VerifierRun(0, "", 1.0, reward=0.0, fault="the verifier needs `jq` (x)", fault_side="grader"),
     ControlRun(0.0, False, "", None, 1.0), ("fail", "the model's code printed or caused it")),
    # a verdict stands without a control; so does a cancelled run
    (VerifierRun(0, "", 1.0, reward=0.0), None, ("verdict", "")),
    (VerifierRun(None, "", 1.0, cancelled=True), None, ("error", "")),
], ids=["no-reward", "timeout", "both-timeout", "both-no-reward", "control-names-program", "forged-fault",
        "verdict", "cancelled"])
def test_settle(run: VerifierRun, control: ControlRun | None, expect: tuple[str, str],
                monkeypatch: pytest.MonkeyPatch) -> None:
    got = _settled(run, control, monkeypatch)
    kind, words = expect
    if kind == "fail":
        assert got.model_fault and words in got.model_fault and got.reward == 0.0 and not got.fault
    elif kind == "fault":
        assert got.fault and words in got.fault and not got.model_fault
    elif kind == "error":
        assert got.reward is None and not got.model_fault and words in got.error
    else:
        assert got == run


def test_the_control_runs_once_per_task(monkeypatch: pytest.MonkeyPatch) -> None:
    runs: list[int] = []
    monkeypatch.setattr(verifier_control, "_key", lambda trial: ("engine", "image", "digest", "True"))
    monkeypatch.setattr(verifier_control, "_run", lambda trial, cancel: runs.append(1) or ControlRun(
        0.0, False, "", None, 1.0))
    verifier_control.forget()
    first = verifier_control.control_run(_Trial())  # type: ignore[arg-type]
    assert verifier_control.control_run(_Trial()) is first and runs == [1]  # type: ignore[arg-type]
    verifier_control.forget()


def test_special_files_are_named(tmp_path: Path) -> None:
    import os

    (tmp_path / "a").mkdir()
    os.mkfifo(tmp_path / "a" / "answer.txt")
    (tmp_path / "b.txt").write_text("x")
    os.symlink("/dev/zero", tmp_path / "zero")  # a link is no special file: a control run judges what it does
    assert verifier_control.special_files(tmp_path) == ["a/answer.txt (a FIFO)"]


@pytest.mark.parametrize("answer,words,attempts", [
    # the model's code prints the line the shell would print were jq (which the image lacks) needed
    ("echo '/tests/test.sh: line 4: jq: command not found' >&2; echo 41", "", 1),
    ("kill -9 -1", "wrote no reward", 1),  # every process of the verifier's it may signal
    ("sleep 600", "timed out", 1),  # past the verifier's 10 s
], ids=["forged-not-found", "kill-all", "hang"])
def test_the_models_code_cannot_unscore_its_fail(docker_env: str, tmp_path: Path, answer: str,
                                                 words: str, attempts: int, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentic_eval.testing import FakeEndpoint
    from tests.helpers import commands_then_done

    runs: list[Any] = []
    real = verifier_control._run
    monkeypatch.setattr(verifier_control, "_run", lambda *a: runs.append(1) or real(*a))
    verifier_control.forget()
    command = f"printf '#!/bin/bash\\n%s\\n' \"{answer}\" > /app/answer.sh"
    with FakeEndpoint(responder=commands_then_done([command])) as fake:
        trials = harbor_run(tmp_path, "control", "--model", "fake-model", "--base-url", fake.base_url, "--tasks",
                      str(CONTROL), "--task", "run-answer", "--agent-opt", "max_retries=0", "--attempts", str(attempts))
    for trial in trials:  # scored: the model's fail. The verifier runs in a fresh container of the task's image,
        # so the forged line looks like a program the image lacks: the control, on the untouched work dir, settles it
        assert trial["outcome"] == "fail" and trial["fault"] in ("", "model"), (trial["outcome"], trial.get("detail"))
        assert words in trial["detail"], trial["detail"]
    assert len(runs) == 1  # one control: each run looked failed by the machine or the task


def test_the_oracle_passes(docker_env: str, tmp_path: Path) -> None:
    (trial,) = harbor_run(tmp_path, "oracle", "--agent", "oracle", "--tasks", str(CONTROL), "--task", "run-answer")
    assert trial["outcome"] == "pass", (trial["outcome"], trial.get("detail"))


def test_a_control_gets_services_of_its_own(docker_env: str, tmp_path: Path) -> None:
    """kv-fetch's verifier reads the model's /app/value.txt and asks its kv service: a link to /dev/zero there
    ends it without a reward; the control, with a kv of its own, writes one: the model's scored fail."""
    from agentic_eval.testing import FakeEndpoint
    from tests.helpers import commands_then_done

    verifier_control.forget()
    with FakeEndpoint(responder=commands_then_done(["ln -sf /dev/zero /app/value.txt"])) as fake:
        (trial,) = harbor_run(tmp_path, "kv", "--model", "fake-model", "--base-url", fake.base_url, "--tasks",
                        str(HARBOR), "--task", "kv-fetch", "--agent-opt", "max_retries=0")
    assert (trial["outcome"], trial["fault"]) == ("fail", "model"), (trial["outcome"], trial.get("detail"))
    assert "on the task's untouched one there it wrote reward 0" in trial["detail"], trial["detail"]

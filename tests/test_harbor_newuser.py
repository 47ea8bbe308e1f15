"""A new user's day with Harbor tasks on an engine with no network (issue 41): a TB2-style task whose tests/test.sh
installs its runner from the internet (tests/packs/harbor-offline) is warned of before the first trial and its
verifier's failure is unscored with the cause named, not the model's fail; an unbuildable task is listed while
the others go on; validate says what it ran; the agent's time limit is the run's to set, and a first request the
endpoint never answered is named as such; next-step commands carry the run's flags."""

from __future__ import annotations

import argparse
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentic_eval.paths import cache_dir

OFFLINE = Path(__file__).resolve().parent / "packs" / "harbor-offline"


# --------------------------------------------------------------------------- no engine

def test_an_unanswered_first_request_is_named_with_its_size() -> None:
    from agentic_eval.agents.base import AgentOutcome
    from agentic_eval.faults import WireEnd, rule_agent_end

    waiting = AgentOutcome("timeout", detail="claude-code still running after 300s", waiting_for_endpoint=True)
    ruling = rule_agent_end(waiting, uses_model=True, wire=WireEnd(calls=1, unanswered_tokens=12_345))
    assert ruling.unscored == "agent_timeout" and ruling.fault == "endpoint"
    assert "did not answer the agent's first request (about 12,345 tokens)" in ruling.reason
    assert "--agent-timeout" in ruling.reason
    later = rule_agent_end(waiting, uses_model=True, wire=WireEnd(calls=3, accepted_before=2))
    assert later.reason == "the time ran out while a request to the endpoint was in flight"


def test_next_step_commands_carry_the_run_flags() -> None:
    from agentic_eval.cli.run import agent_end, resume_command, sandbox_flags

    args = argparse.Namespace(sandbox="docker", base_image="suite", base_image_packages=("python3-pip", "gcc"),
                              image=None, docker_host=["unix:///tmp/a b.sock"], ray=None, api_key=None)
    flags = sandbox_flags(args)
    assert flags == (" --sandbox docker --base-image suite --base-image-packages python3-pip,gcc "
                     "--docker-host 'unix:///tmp/a b.sock'")
    assert resume_command(Path("runs/r1"), args).endswith(flags)
    assert agent_end("success") == "the agent reported: success"  # not read as the verdict beside 'fail'
    assert agent_end("agent time limit reached") == "agent time limit reached"


def test_the_agent_timeout_overrides_the_task_and_names_the_unanswered_request(mini_pack: Path, tmp_path: Path,
                                                                               capsys: pytest.CaptureFixture[str]
                                                                               ) -> None:
    from agentic_eval.testing import FakeEndpoint, ScriptedReply, chat_body
    from tests.helpers import run_cli

    with FakeEndpoint(responder=lambda r: ScriptedReply(body=chat_body("late"), delay_s=8)) as fake:
        code, data = run_cli("run", "--model", fake.model, "--base-url", fake.base_url, "--tasks", str(mini_pack),
                             "--agent-opt", "max_retries=0", "--agent-timeout", "2", "--run-dir",
                             str(tmp_path / "runs"), "--json")
    err = capsys.readouterr().err
    (trial,) = data["trials"]
    assert code == 1 and trial["outcome"] == "agent_timeout" and trial["fault"] == "endpoint"
    assert trial["agent_duration_s"] < 8  # the task's own limit is longer: the run's was used
    assert "did not answer the agent's first request (about " in trial["fault_reason"]
    assert "no trial was scored (agent_timeout 1): the endpoint did not answer" in err


def test_the_campaign_file_takes_the_new_keys(tmp_path: Path) -> None:
    from agentic_eval.campaign.spec import load_campaign
    from agentic_eval.errors import AgenticEvalError

    body = '[[models]]\nname = "m"\nbase_url = "http://127.0.0.1:9/v1"\n'
    file = tmp_path / "c.toml"
    file.write_text('base_image = "suite"\nbase_image_packages = ["python3-pip"]\nagent_timeout_s = 1800\n' + body)
    spec = load_campaign(file)
    assert spec.agent_timeout_s == 1800 and spec.sandbox_options()["base_image_packages"] == ("python3-pip",)
    file.write_text('base_image_packages = ["gcc"]\n' + body)
    with pytest.raises(AgenticEvalError, match='set base_image = "suite"'):
        load_campaign(file)


# --------------------------------------------------------------------------- on a Docker engine with no network

@pytest.fixture(scope="module")
def engine() -> Iterator[str]:
    from tests.helpers import docker_engine

    yield from docker_engine("harborsay")


@pytest.fixture
def docker_env(engine: str, monkeypatch: pytest.MonkeyPatch) -> str:
    from tests.helpers import docker_answers

    monkeypatch.setenv("DOCKER_HOST", engine)
    monkeypatch.setenv("AGENTIC_EVAL_CACHE", str(cache_dir()))
    assert docker_answers(engine)
    return engine


def test_an_offline_tb2_task_is_the_machines_fault_not_the_models(docker_env: str, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """validate: the warning before anything runs, the cause as the reason, and the summary saying 1 seed and no
    red team; run (nop, which leaves a fresh verifier; and the oracle's snapshot): unscored, the machine's,
    internet_missing; an unbuildable task beside it is listed and the other still runs."""
    from tests.helpers import run_cli

    pack = tmp_path / "pack"
    shutil.copytree(OFFLINE, pack)
    broken = pack / "no-build"
    shutil.copytree(pack / "fetch-runner", broken)
    (broken / "environment" / "Dockerfile").write_text("FROM python:3.13-slim-bookworm\nWORKDIR /app\n"
                                                       "RUN echo preparing && pip install numpy==2.1.0\n")
    code, report = run_cli("validate", "--sandbox", "docker", "--base-image", "suite", "--tasks", str(pack), "--repeat",
                           "1", "--json")
    err = capsys.readouterr().err
    assert code == 1
    warning = next((line for line in err.splitlines() if line.startswith("warning: ")), "")
    if not warning:  # the point is an engine with no way out
        pytest.skip("this Docker engine reaches the internet")
    assert "fetch-runner asks for the internet" in warning and docker_env in warning
    assert "downloads.example.invalid" in warning
    tasks = {t["id"]: t for t in report["tasks"]}
    assert "grader error on pristine: the verifier needs `curl` and `uvx`, which its script installs from the " \
           "network, and its container had none" in tasks["fetch-runner"]["reasons"][0]
    unbuilt = tasks["no-build"]["unbuildable"]
    assert "pip: not found" in unbuilt and "preparing" in unbuilt and "\x1b" not in unbuilt  # the step's output
    assert "--base-image-packages python3-pip" in unbuilt  # what the stand-in lacks, and how to add it
    assert report["ran"] == "seed 0 x 1 run, no red team on environment tasks"  # not "3 seeds", no attempts
    assert report["evidence"].startswith("1 run of each check (1 seed x 1)")

    for agent in ("nop", "oracle"):
        code, data = run_cli("run", "--agent", agent, "--sandbox", "docker", "--base-image", "suite", "--tasks",
                             str(pack), "--run-dir", str(tmp_path / agent), "--json")
        err = capsys.readouterr().err
        trials = {t["task_id"]: t for t in data["trials"]}
        fetch, unbuilt_trial = trials["fetch-runner"], trials["no-build"]
        assert (fetch["outcome"], fetch["fault"], fetch["internet_missing"]) == ("grader_error", "machine", True)
        assert "installs from the network, and its container had none" in fetch["fault_reason"]
        assert "the same on the task's untouched working directory" in fetch["detail"]  # the control confirmed it
        assert (unbuilt_trial["outcome"], unbuilt_trial["fault"]) == ("agent_error", "grader")
        assert unbuilt_trial["fault_reason"] == "the task's image does not build"
        assert "unbuildable: no-build: building" in err
        assert "--sandbox docker --base-image suite" in err  # the resume line carries the flags
    run_json = json.loads(next((tmp_path / "nop").glob("*/run.json")).read_text())
    assert run_json["sandbox"] == "docker"
    from agentic_eval.report.summary import summarize_run

    note = summarize_run(next((tmp_path / "nop").glob("*/run.json")).parent).internet_missing_note()
    assert "1 trial ran without the internet their task asks for" in note and "fetch-runner" in note

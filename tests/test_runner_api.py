"""The Python API: `start_run` and `resume_run` hold the rules the `run` command follows, and run a
campaign end to end against the scripted endpoint (oracle and the built-in agent, then resume)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.errors import AgenticEvalError
from agentic_eval.results.trial_log import read_trials
from agentic_eval.runner import RunOutcome, plan_start, resume_run, start_run
from tests.helpers import SolverThatDies, make_pack, solver

OPTS = {"max_retries": "0"}  # the built-in agent: a dead endpoint fails a trial at once


def test_start_run_with_the_oracle_needs_no_model(mini_pack: Path, tmp_path: Path) -> None:
    lines: list[str] = []
    outcome = start_run(agent="oracle", tasks=[make_pack(mini_pack, 2)], runs_root=tmp_path / "runs",
                        sandbox="local", log=lambda text, style=None: lines.append(text))
    assert isinstance(outcome, RunOutcome) and not outcome.interrupted
    assert (outcome.passed, outcome.scored, outcome.skipped, len(outcome.trials_run)) == (2, 2, 0, 2)
    assert outcome.run_dir == tmp_path / "runs" / outcome.run_id
    config = json.loads((outcome.run_dir / "run.json").read_text())
    assert (config["model"], config["agent"], config["sandbox"]) == ("none", "oracle", "local")
    assert any(line.startswith(f"run {outcome.run_id}: 2 trials") for line in lines)


def test_start_run_refuses_what_the_cli_refuses(mini_pack: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    with pytest.raises(AgenticEvalError, match="--model is required"):
        plan_start(agent="builtin", tasks=[mini_pack], runs_root=runs)
    with pytest.raises(AgenticEvalError, match="only the builtin agent has this option"):
        plan_start(agent="oracle", stream=True, tasks=[mini_pack], runs_root=runs)
    with pytest.raises(AgenticEvalError, match="no such folder"):
        plan_start(agent="oracle", tasks=[tmp_path / "nowhere"], runs_root=runs, sandbox="local")
    assert not runs.exists() or not list(runs.iterdir())  # nothing claimed for a refused run


def test_builtin_agent_then_resume_from_python(scripted: Any, mini_pack: Path, tmp_path: Path) -> None:
    dies = SolverThatDies(3)  # the first trial's three turns, then the server is gone
    fake = dies.fake = scripted(dies)
    runs = tmp_path / "runs"
    seen: list[str] = []
    first = start_run(model="fake-model", base_url=fake.base_url, api_key="sk-x", tasks=[make_pack(mini_pack, 3)],
                      runs_root=runs, agent_options=OPTS, sandbox="local", on_result=lambda r: seen.append(r.outcome))
    assert (first.passed, first.scored, first.outcomes.get("endpoint_error")) == (1, 1, 2)
    assert sorted(seen) == ["endpoint_error", "endpoint_error", "pass"]

    with pytest.raises(AgenticEvalError, match="drop --seed, --stream"):  # a resumed run keeps its settings
        resume_run(first.run_id, runs_root=runs, seed=7, stream=True)
    with pytest.raises(AgenticEvalError, match="is for model 'fake-model', not 'other'"):
        resume_run(first.run_dir, model="other")

    again_fake = scripted(solver)  # the endpoint comes back on another port
    again = resume_run(first.run_id, runs_root=runs, base_url=again_fake.base_url, seed=0)
    assert (again.run_dir, again.skipped, len(again.trials_run)) == (first.run_dir, 1, 2)
    assert (again.passed, again.scored, again.outcomes) == (3, 3, {"pass": 3})
    records, _ = read_trials(first.run_dir)
    assert len(records) == 5  # 3 first, then the 2 unscored again
    config = json.loads((first.run_dir / "run.json").read_text())
    assert config["seed"] == 0 and config["agent_options"] == OPTS


def test_a_run_executed_in_this_process_can_be_resumed_in_it_while_its_plan_lives(mini_pack: Path,
                                                                                   tmp_path: Path) -> None:
    """The run's lock goes when its trials are done, not when its plan is garbage: a plan still referenced (here,
    on purpose; in a Ray run, by a cycle) must not refuse a resume of the same run in the same process."""
    campaign = plan_start(agent="oracle", tasks=[str(mini_pack)], runs_root=tmp_path, sandbox="local")
    campaign.execute()
    assert campaign.plan.lock is None
    again = resume_run(campaign.run_dir)
    assert again.trials_run == [] and not again.interrupted  # every trial was scored: nothing left to run

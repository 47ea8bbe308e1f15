"""Runs recorded before the package layout changed still load, report and resume.

tests/data/runs-before-layout/ holds three runs written by the code at commit f4e204d (the flat layout):
a built-in-agent run whose two trials ended unscored (the endpoint answered 500), an oracle run that passed,
and a form-matrix instrument run. Their pack path is stored as @MINI_PACK@ and filled in here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from agentic_eval.testing import FakeEndpoint
from tests.helpers import solver

OLD = Path(__file__).parent / "data" / "runs-before-layout"
BUILTIN = "20261203-134225-fake-model-builtin"
ORACLE = "20261203-134226-none-oracle"
FORMS = "20261203-134238-fake-model-forms"


def _copy_runs(tmp_path: Path, mini_pack: Path) -> Path:
    runs = tmp_path / "runs"
    shutil.copytree(OLD, runs)
    for path in runs.rglob("*.json*"):
        text = path.read_text()
        if "@MINI_PACK@" in text:
            path.write_text(text.replace("@MINI_PACK@", str(mini_pack)))
    return runs


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    return subprocess.run([sys.executable, "-m", "agentic_eval.cli", *args], capture_output=True, text=True,
                          timeout=240, env=env)


def test_old_runs_report(tmp_path: Path, mini_pack: Path) -> None:
    runs = _copy_runs(tmp_path, mini_pack)
    out = _cli("report", str(runs / BUILTIN), str(runs / ORACLE), "--json")
    assert out.returncode == 0, out.stderr
    by_id = {r["run_id"]: r for r in map(json.loads, out.stdout.splitlines())}  # one JSON line per run
    assert set(by_id) == {BUILTIN, ORACLE}
    assert by_id[BUILTIN]["outcomes"]["endpoint_error"] == 2 and by_id[BUILTIN]["passed"] == 0
    # written before records said whose fault an end was: the outcome alone, no side named
    assert by_id[BUILTIN]["unscored_causes"] == {"endpoint_error": 2}
    assert {t["fault"] for t in by_id[BUILTIN]["trials"]} == {""}
    assert by_id[ORACLE]["outcomes"]["pass"] == 1
    # the whole runs folder, instrument run included, in the terminal report
    out = _cli("report", "--run-dir", str(runs))
    assert out.returncode == 0, out.stderr
    assert "0/10" in out.stdout and "fake-model" in out.stdout  # the form matrix: 0 of 10 shapes


def test_old_run_resumes_only_its_unscored_trials(tmp_path: Path, mini_pack: Path) -> None:
    runs = _copy_runs(tmp_path, mini_pack)
    oracle_before = (runs / ORACLE / "trials.jsonl").read_text()
    with FakeEndpoint(responder=solver) as fake:
        out = _cli("run", "--resume", str(runs / BUILTIN), "--base-url", fake.base_url, "--api-key", "sk-test",
                   "--json")
        assert out.returncode == 0, out.stderr
        assert len(fake.requests) >= 6  # two trials, three model turns each (plus the model list)
    data = json.loads(out.stdout)
    assert (data["outcomes"]["pass"], data["unscored"]) == (2, 0), data
    lines = (runs / BUILTIN / "trials.jsonl").read_text().splitlines()
    assert len(lines) == 4  # the two old unscored records are kept; the two reruns appended
    assert [json.loads(x)["outcome"] for x in lines] == ["endpoint_error", "endpoint_error", "pass", "pass"]
    assert (runs / ORACLE / "trials.jsonl").read_text() == oracle_before

"""A newcomer's first hour (issue 14): the printed resume line works as printed, the missing /v1 and
https-for-http are one line before any trial, model-free agents need no --model, a broken pack is
loud, a failed trial's progress line says why, mistyped flags get the subcommand's usage."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from agentic_eval.cli import main
from agentic_eval.results.run_folder import read_run_config
from agentic_eval.results.trial_log import read_trials
from agentic_eval.testing import FakeEndpoint, ScriptedReply, chat_body
from tests.helpers import make_pack, run_cli

CLI = [sys.executable, "-m", "agentic_eval.cli"]


def _cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **(env or {})}
    full_env.pop("OPENAI_BASE_URL", None)
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=300, env=full_env, cwd=cwd,
                          check=False)


def _printed_resume(err: str) -> list[str]:
    line = next(ln for ln in err.splitlines() if "agentic-eval run --resume" in ln)
    command = line[line.index("agentic-eval run --resume"):]
    return shlex.split(command)[1:]  # drop the program name: run it through this Python


# ----------------------------------------------------------------------------------------- resume


def test_the_printed_resume_line_works_as_printed_against_the_recorded_endpoint(mini_pack: Path,
                                                                              tmp_path: Path) -> None:
    """All trials unscored (the endpoint answers 500), then the printed line, run from the same folder,
    goes back to the endpoint run.json recorded, not to OPENAI_BASE_URL or localhost:8000."""
    pack = make_pack(mini_pack, 2)
    work = tmp_path / "work"
    work.mkdir()
    with FakeEndpoint(responder=lambda r: ScriptedReply(status=500, body={"error": "overloaded"})) as fake:
        url = fake.base_url
        first = _cli("run", "--model", fake.model, "--base-url", fake.base_url, "--tasks", str(pack),
                     "--agent-opt", "max_retries=0", "--run-dir", "my runs", cwd=work)
        assert first.returncode == 1, first.stderr
        assert "no trial was scored" in first.stderr
        resume = _printed_resume(first.stderr)
        assert resume[:2] == ["run", "--resume"] and resume[2].startswith("my runs/")  # quoted, then split back
        fake.responder = lambda r: ScriptedReply(body=chat_body("I will not do that."))
        again = _cli(*resume, env={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, cwd=work)
    assert again.returncode == 0, again.stderr
    run_dir = work / resume[resume.index("--resume") + 1]
    records, _ = read_trials(run_dir)
    latest = {r.task_id: r.outcome for r in records}
    assert latest == {"t0": "fail", "t1": "fail"}  # scored now: the model answered in prose
    assert f"at {url}" in again.stderr


def test_base_url_overrides_the_recorded_endpoint(mini_pack: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs"
    with FakeEndpoint(responder=lambda r: ScriptedReply(status=500, body={})) as fake:
        url = fake.base_url
        code, first = run_cli("run", "--model", fake.model, "--base-url", url, "--tasks", str(mini_pack),
                              "--run-dir", str(runs), "--agent-opt", "max_retries=0", "--json")
    assert code == 1 and first["unscored"] == 1
    # the recorded endpoint is gone now: without --base-url the resume says it cannot reach it
    assert main(["run", "--resume", first["run_id"], "--run-dir", str(runs)]) == 2
    assert f"cannot reach {url}" in capsys.readouterr().err
    with FakeEndpoint(responder=lambda r: ScriptedReply(body=chat_body("no"))) as moved:
        code, again = run_cli("run", "--resume", first["run_id"], "--run-dir", str(runs), "--base-url",
                              moved.base_url, "--json")
    assert code == 0 and again["outcomes"]["fail"] == 1 and len(moved.requests) >= 1


def test_a_local_run_resumes_with_a_local_server(mini_pack: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """run.json records --local (and its --gguf); the resume starts a local server again instead of
    calling the dead recorded URL. A missing GGUF shows it tried exactly that, without a model load."""
    runs = tmp_path / "runs"
    code, first = run_cli("run", "--agent", "nop", "--tasks", str(mini_pack), "--run-dir", str(runs), "--json")
    assert code == 0
    run_dir = runs / first["run_id"]
    config = read_run_config(run_dir)
    gone = tmp_path / "gone.gguf"
    patched = config.model_copy(update={"local": True, "local_gguf": str(gone), "local_ctx": 4096,
                                        "base_url": "http://127.0.0.1:9/v1"})
    (run_dir / "run.json").write_text(patched.model_dump_json())
    (run_dir / "trials.jsonl").write_text("")  # nothing scored yet
    capsys.readouterr()
    assert main(["run", "--resume", str(run_dir)]) == 2
    err = capsys.readouterr().err
    assert f"--gguf {gone}: no such file" in err and "127.0.0.1:9" not in err


def test_run_json_records_a_local_run(tmp_path: Path) -> None:
    """What `run --local` writes (the fields the resume reads), checked on the config it builds."""
    from agentic_eval.results.records import RunConfig

    cfg = RunConfig(run_id="r", created_at="now", model="m", agent="builtin", base_url="http://127.0.0.1:1/v1",
                    local=True, local_gguf="/x.gguf", local_ctx=8192)
    again = RunConfig.model_validate_json(cfg.model_dump_json())
    assert (again.local, again.local_gguf, again.local_ctx) == (True, "/x.gguf", 8192)
    old = json.loads(cfg.model_dump_json())
    for key in ("local", "local_gguf", "local_ctx"):
        del old[key]
    assert RunConfig.model_validate(old).local is False  # a run.json from before still loads


# ----------------------------------------------------------------------------------------- preflight


class _V1OnlyHandler(BaseHTTPRequestHandler):
    """Like vLLM: the API lives under /v1, anything else is 404."""

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        if self.path == "/v1/models":
            body = json.dumps({"object": "list", "data": [{"id": "m", "object": "model"}]}).encode()
            self.send_response(200)
        else:
            body = b'{"detail": "Not Found"}'
            self.send_response(404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def v1_only_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _V1OnlyHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_base_url_without_v1_is_one_line_before_any_trial(v1_only_server: str, mini_pack: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs"
    assert main(["run", "--model", "m", "--base-url", v1_only_server, "--tasks", str(mini_pack),
                 "--run-dir", str(runs)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"agentic-eval: error: {v1_only_server}/models is 404 but {v1_only_server}/v1/models answers: "
                   f"use --base-url {v1_only_server}/v1 (OpenAI-compatible servers serve under /v1)")
    assert not runs.exists() or not any(runs.iterdir())  # no run, no trial
    assert main(["probe", "--model", "m", "--base-url", v1_only_server + "/"]) == 2  # every command's preflight
    assert "use --base-url" in capsys.readouterr().err


def test_https_against_a_plain_http_server_says_so(mini_pack: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeEndpoint() as fake:
        https = fake.base_url.replace("http://", "https://")
        assert main(["run", "--model", fake.model, "--base-url", https, "--tasks", str(mini_pack)]) == 2
        url = fake.base_url
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert f"failed the TLS handshake but {url} answers: use --base-url {url}" in err


# ----------------------------------------------------------------------------------------- model-free agents


@pytest.mark.parametrize("agent", ["oracle", "nop"])
def test_model_free_agents_need_no_model(agent: str, mini_pack: Path, tmp_path: Path) -> None:
    code, data = run_cli("run", "--agent", agent, "--tasks", str(mini_pack), "--run-dir", str(tmp_path / "r"),
                         "--json")
    assert code == 0 and data["agent"] == agent and data["model"] == "none"
    assert data["passed"] == (1 if agent == "oracle" else 0)


def test_the_builtin_agent_still_needs_a_model(mini_pack: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--tasks", str(mini_pack)]) == 2
    assert "--model is required" in capsys.readouterr().err


# ----------------------------------------------------------------------------------------- loud broken pack


def test_an_oracle_that_fails_a_task_is_loud_and_exits_1(mini_pack: Path, tmp_path: Path) -> None:
    pack = make_pack(mini_pack, 3)
    (pack / "t1" / "solve.sh").write_text("#!/usr/bin/env bash\ntrue\n")  # a fix that fixes nothing
    proc = _cli("run", "--agent", "oracle", "--tasks", str(pack), "--run-dir", str(tmp_path / "runs"))
    assert proc.returncode == 1
    assert "BROKEN PACK: oracle failed 1 of 3 tasks (t1)" in proc.stderr
    assert f"agentic-eval validate --tasks {pack} --task t1" in proc.stderr
    # the nop agent passing a task is the other half of the same check
    (pack / "t2" / "grade.py").write_text("import sys\nsys.exit(0)\n")
    proc = _cli("run", "--agent", "nop", "--tasks", str(pack), "--run-dir", str(tmp_path / "runs"))
    assert proc.returncode == 1 and "BROKEN PACK: nop passed 1 of 3 tasks (t2)" in proc.stderr


# ----------------------------------------------------------------------------------------- progress reasons


def test_progress_lines_say_why_a_trial_failed(mini_pack: Path, tmp_path: Path) -> None:
    with FakeEndpoint(responder=lambda r: ScriptedReply(body=chat_body("The port is probably 8080."))) as fake:
        proc = _cli("run", "--model", fake.model, "--base-url", fake.base_url, "--tasks", str(mini_pack),
                    "--run-dir", str(tmp_path / "runs"))
    assert proc.returncode == 0, proc.stderr
    line = next(ln for ln in proc.stderr.splitlines() if ln.startswith("answer-file a1: fail"))
    assert "no tool call: 1 prose reply" in line
    proc = _cli("run", "--agent", "nop", "--tasks", str(mini_pack), "--run-dir", str(tmp_path / "runs"))
    line = next(ln for ln in proc.stderr.splitlines() if ln.startswith("answer-file a1: fail"))
    assert "(the grader said no" in line  # the mini grader prints no checks: the generic reason


# ----------------------------------------------------------------------------------------- CLI surface


def test_a_mistyped_flag_gets_did_you_mean_and_the_subcommands_usage(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["validate", "--repaet", "3"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: agentic-eval validate")
    assert "unrecognized arguments: --repaet" in err and "did you mean --repeat?" in err
    with pytest.raises(SystemExit):
        main(["tasks", "show", "x", "--sed", "1"])
    err = capsys.readouterr().err
    assert err.startswith("usage: agentic-eval tasks show") and "did you mean --seed?" in err


def test_every_subcommand_help_has_a_description() -> None:
    import argparse

    from agentic_eval.cli import build_parser

    def walk(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    yield sub
                    yield from walk(sub)

    missing = [p.prog for p in walk(build_parser()) if not p.description]
    assert missing == []


# ----------------------------------------------------------------------------------------- tables at 80 columns


def _render(summaries: list, width: int) -> str:
    import io

    from rich.console import Console

    from agentic_eval.report.summary import print_report

    out = io.StringIO()
    print_report(summaries, Console(file=out, width=width, highlight=False, color_system=None))
    return out.getvalue()


def _two_runs(mini_pack: Path, runs: Path) -> list:
    from agentic_eval.report.summary import summarize_run

    pack = make_pack(mini_pack, 2)
    ids = []
    for agent in ("oracle", "nop"):
        _, data = run_cli("run", "--agent", agent, "--model", "qwen2.5-coder-1.5b-instruct-q4_k_m", "--tasks",
                          str(pack), "--run-dir", str(runs), "--json")
        ids.append(data["run_id"])
    return [summarize_run(runs / i) for i in ids]


def test_the_report_keeps_its_figures_readable_at_80_columns(mini_pack: Path, tmp_path: Path) -> None:
    summaries = _two_runs(mini_pack, tmp_path / "runs")
    text = _render(summaries, 80)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "…" not in text  # no header or figure cut short
    for s in summaries:  # every run id whole, every figure with its label
        assert f"run {s.config.run_id}" in lines
    assert sum(1 for line in lines if re.fullmatch(r"  tasks passed +2/2", line)) == 1
    assert sum(1 for line in lines if re.fullmatch(r"  tasks passed +0/2", line)) == 1
    assert any(re.fullmatch(r"  median latency +\d+\.\d s", line) for line in lines)
    # the per-task matrix numbers its runs and says which is which
    assert any(re.search(r"t0\s+│ pass\s+│ fail", line) for line in lines), text
    assert f"#1 = {summaries[0].config.run_id}" in lines and f"#2 = {summaries[1].config.run_id}" in lines
    # no `*` anywhere and no unscored trial, so no footnote about either
    assert "*" not in text and "unscored trials are not fails" not in text.lower()


def test_a_wide_terminal_and_a_pipe_get_the_whole_table(mini_pack: Path, tmp_path: Path) -> None:
    summaries = _two_runs(mini_pack, tmp_path / "runs")
    text = _render(summaries, 400)
    assert re.search(r"┃ run\s+┃ model / agent\s+┃ tasks passed ┃ text tool calls ┃", text)
    assert f"│ {summaries[0].config.run_id} │" in text
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    proc = subprocess.run([*CLI, "report", "--run-dir", str(tmp_path / "runs")], capture_output=True, text=True,
                          env=env, timeout=120, check=True)
    assert "┃ tasks passed ┃ text tool calls ┃" in proc.stdout  # piped: natural width, never a guessed one
    assert all(re.search(rf"│ {re.escape(s.config.run_id)}\s+│", proc.stdout) for s in summaries)


# ----------------------------------------------------------------------------------------- task authors


def test_tasks_show_lists_the_generated_files_and_the_template_variables(mini_pack: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tasks", "show", "answer-file", "--tasks", str(mini_pack), "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "template variables (seed 3; use as {{name}} in instruction.md and answers):" in out
    assert re.search(r"^  port = \d+$", out, re.MULTILINE) and re.search(r'^  name = "[a-z]+\d+"$', out, re.MULTILINE)
    assert "  seed = 3" in out
    files = out.split("generated files (seed 3, committed as the pristine repo):\n")[1].split("\n\n")[0]
    assert files.splitlines() == ["  README.md", "  config/settings.ini"]


HISTORY_GENERATOR = '''\
import subprocess
from pathlib import Path

def generate(root, seed, params):
    env = {"GIT_AUTHOR_DATE": "2024-01-01T00:00:00+0000", "GIT_COMMITTER_DATE": "2024-01-01T00:00:00+0000",
           "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@x",
           "PATH": "/usr/bin:/bin", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    git = lambda *a: subprocess.run(["git", *a], cwd=root, env=env, check=True, capture_output=True)
    git("init", "-q", "-b", "main")
    (root / "config").mkdir()
    (root / "config" / "settings.ini").write_text("[server]\\nport = 1000\\n")
    git("add", "-A"); git("commit", "-qm", "first")
    (root / "config" / "settings.ini").write_text(f"[server]\\nport = {2000 + seed}\\n")
    git("commit", "-qam", "second")
    if params.get("leave_dirty"):
        (root / "README.md").write_text("left for the harness\\n")
    return {"port": 2000 + seed}
'''


@pytest.mark.parametrize("leave_dirty", [False, True])
def test_a_generator_with_its_own_git_history(mini_pack: Path, leave_dirty: bool) -> None:
    """Its history is kept and the harness's pristine commit goes on top of it, also when the
    generator left nothing to commit (this used to fail with git's 'nothing to commit')."""
    from agentic_eval.packs.sandbox import materialize_sandbox
    from agentic_eval.packs.task import load_task
    from agentic_eval.validation.validate import ValidateOptions, validate_task

    (mini_pack / "sandboxes" / "history.py").write_text(HISTORY_GENERATOR)
    task_dir = mini_pack / "answer-file"
    toml = task_dir / "task.toml"
    toml.write_text(toml.read_text().replace('generator = "tiny"', 'generator = "history"\nparams = {leave_dirty = '
                                             + ("true" if leave_dirty else "false") + "}"))
    result = validate_task(load_task(task_dir), ValidateOptions(seeds=2))
    assert result.status == "ok", result.reasons
    sandbox = materialize_sandbox(load_task(task_dir), 1, mini_pack.parent / "sb")
    log = subprocess.run(["git", "log", "--format=%s"], cwd=sandbox.path, capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert log == ["Initial commit", "second", "first"]
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=sandbox.path, capture_output=True, text=True,
                          check=True).stdout.strip()
    assert sandbox.pristine_commit == head

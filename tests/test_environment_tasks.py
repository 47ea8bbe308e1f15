"""Tasks that bring their own environment: our task.toml's [environment] and Harbor / Terminal-Bench 2 folders
read as they are (tests/packs/harbor: one task with a fractional reward, one with a service beside it;
tests/packs/envpack: our format, a non-root user, a workdir outside /app, an env var, a generator's tree laid
over an image's). Run with the oracle,
nop and the built-in agent against a scripted endpoint, and validated, on a real Docker engine (private, or
DOCKER_HOST's), their images built FROM the suite's own image (`--base-image suite`: no registry here)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.helpers import harbor_run

PACKS = Path(__file__).resolve().parent / "packs"
HARBOR = PACKS / "harbor"
ENVPACK = PACKS / "envpack"


# --------------------------------------------------------------------------- loading (no engine)

def test_a_harbor_folder_loads_as_it_is() -> None:
    from agentic_eval.packs.task import load_tasks

    result = load_tasks([HARBOR])
    assert result.errors == []
    tasks = {t.id: t for t in result.tasks}
    assert set(tasks) == {"kv-fetch", "tally-words"}
    tally, kv = tasks["tally-words"], tasks["kv-fetch"]
    assert tally.format == "harbor" and tally.verifier == "reward"
    assert tally.meta.metadata["category"] == "file-operations"  # [metadata] kept as it is
    assert tally.meta.difficulty == "easy" and tally.meta.tags == ["shell", "counting"]
    assert tally.render_instruction({}) == (HARBOR / "tally-words" / "instruction.md").read_text()
    env = tally.meta.environment
    assert env is not None
    assert (env.workdir, env.memory_mb, env.storage_mb, env.allow_internet) == ("/app", 512, 256, False)
    assert tally.meta.limits.agent_timeout_s == 120 and tally.meta.limits.grader_timeout_s == 60
    assert tally.unsupported == ("environment.gpus (not supported: ignored; no GPUs are given to containers)",)
    assert tally.grader_path.name == "test.sh" and tally.solution_path.name == "solve.sh"
    assert kv.meta.environment is not None
    (service,) = kv.meta.environment.services  # from environment/docker-compose.yaml
    assert (service.name, service.dockerfile, service.env) == ("kv", "environment/kv/Dockerfile",
                                                               {"KV_PORT": "8080"})


def test_only_a_task_no_seed_reaches_is_seed_independent(tmp_path: Path) -> None:
    """A Harbor task: its tree is its image's and its verifier gets no seed. Ours with a grade script (which gets
    AGENTIC_EVAL_SEED) or a generator (whose tree the seed makes) are not; nor is a generated task."""
    from agentic_eval.packs.environment import seed_independent
    from agentic_eval.packs.task import load_task, load_tasks

    result = load_tasks([HARBOR, ENVPACK, PACKS / "mini"])
    assert result.errors == []
    assert {t.id: seed_independent(t) for t in result.tasks} == {
        "kv-fetch": True, "tally-words": True, "greet-env": False, "seeded-env": False, "answer-file": False}
    ours = '[environment]\ndockerfile = "env/Dockerfile"\nverifier_files = ["tests"]\n'  # a reward verifier
    for answers, expected in (("", True), ('answers = ["port {{seed}}"]\n', False)):  # the leak scan's needles
        folder = _write_task(tmp_path / f"t{expected}", f'id = "t"\ntitle = "T"\n{answers}{ours}')
        (folder / "tests").mkdir()
        (folder / "tests" / "test.sh").write_text("echo 1 > /logs/verifier/reward.txt\n")
        assert seed_independent(load_task(folder)) is expected


def _write_task(folder: Path, toml: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "task.toml").write_text(toml)
    (folder / "instruction.md").write_text("Do it.\n")
    (folder / "grade.py").write_text("raise SystemExit(1)\n")
    (folder / "solve.sh").write_text("true\n")
    (folder / "env").mkdir()
    (folder / "env" / "Dockerfile").write_text("FROM scratch\n")
    return folder


@pytest.mark.parametrize(("section", "error"), [
    ('[environment]\ndockerfile = "env/Dockerfile"\nworkdir = "app"\n', "environment.workdir: Value error, must be "
     "an absolute path"),
    ('[environment]\ndockerfile = "env/Dockerfile"\nmemory = 512\n', "environment.memory: unknown key in "
     "[environment]; did you mean 'memory_mb'?"),
    ('[environment]\ndockerfile = "env/Missing"\n', "environment.dockerfile: 'env/Missing' is not a file or folder"),
    ("[metadata]\nanything = 1\n", "sandbox: a task needs a [sandbox] generator or an [environment]"),
])
def test_environment_section_errors_name_the_field(tmp_path: Path, section: str, error: str) -> None:
    from agentic_eval.errors import TaskLoadError
    from agentic_eval.packs.task import load_task

    folder = _write_task(tmp_path / "t", f'id = "t"\ntitle = "T"\n{section}')
    with pytest.raises(TaskLoadError) as caught:
        load_task(folder)
    assert error in str(caught.value)


@pytest.mark.parametrize(("files", "expected"), [
    ({"reward.txt": "1\n"}, 1.0),
    ({"reward.txt": "0.25"}, 0.25),
    ({"reward.json": '{"reward": 0.5, "other": 3}'}, 0.5),
    ({"reward.json": '{"accuracy": 0.75}'}, 0.75),
    ({}, "wrote no reward"),
    ({"reward.txt": "passed"}, "not a number"),
    ({"reward.txt": "1.5"}, "not a number from 0 to 1"),
    ({"reward.json": '{"a": 1, "b": 0}'}, "no number"),
])
def test_reward_file_is_the_verdict(tmp_path: Path, files: dict[str, str], expected: float | str) -> None:
    from agentic_eval.confine.docker_env import RewardError, parse_reward

    for name, text in files.items():
        (tmp_path / name).write_text(text)
    if isinstance(expected, float):
        assert parse_reward(tmp_path) == expected
    else:
        with pytest.raises(RewardError, match=expected):
            parse_reward(tmp_path)


def test_base_image_replacement_keeps_stages() -> None:
    from agentic_eval.confine.env_images import base_images, replace_bases

    text = "FROM golang:1.22 AS build\nRUN make\nFROM debian:bookworm\nCOPY --from=build /x /x\nFROM build\n"
    assert base_images(text) == ["golang:1.22", "debian:bookworm"]
    assert replace_bases(text, "suite:1") == ("FROM suite:1 AS build\nRUN make\nFROM suite:1\nCOPY --from=build /x /x"
                                              "\nFROM build\n")


def test_other_backends_refuse_environment_tasks_before_any_trial(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from tests.helpers import run_cli

    code, _ = run_cli("run", "--agent", "oracle", "--sandbox", "local", "--tasks", str(HARBOR), "--run-dir",
                      str(tmp_path / "runs"))
    err = capsys.readouterr().err
    assert code != 0
    assert "kv-fetch, tally-words bring its own environment" in err and "use --sandbox docker" in err
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())  # no run was claimed


# --------------------------------------------------------------------------- on a Docker engine


def test_an_unreachable_base_image_and_a_cli_agent_are_one_line(docker_env: str, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from tests.helpers import run_cli

    code, _ = run_cli("run", "--agent", "oracle", "--sandbox", "docker", "--tasks", str(HARBOR), "--task",
                      "tally-words", "--run-dir", str(tmp_path / "runs"))
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0
    assert "cannot get the base image 'python:3.12-slim'" in err[-1] and "--base-image suite" in err[-1]
    prebuilt = tmp_path / "prebuilt" / "tally-prebuilt"  # Harbor's docker_image, no Dockerfile
    shutil.copytree(HARBOR / "tally-words", prebuilt)
    (prebuilt / "environment" / "Dockerfile").unlink()
    with (prebuilt / "task.toml").open("a") as toml:
        toml.write('docker_image = "example.invalid/never-pushed:1"\n')
    code, _ = run_cli("run", "--agent", "nop", "--sandbox", "docker", "--tasks", str(prebuilt.parent), "--run-dir",
                      str(tmp_path / "runs"))
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and "cannot get the task's image 'example.invalid/never-pushed:1'" in err[-1]
    code, _ = run_cli("run", "--agent", "opencode", "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
                      "--sandbox", "docker", "--tasks", str(HARBOR), "--run-dir", str(tmp_path / "runs"))
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and "agent 'opencode' (a CLI) does not run in a task's own environment yet" in err[-1]


def test_harbor_tasks_with_oracle_nop_and_the_builtin_agent(docker_env: str, tmp_path: Path) -> None:
    """The oracle passes both (a service reached by name), nop fails both with reward 0, and the built-in agent
    that answers half of tally-words fails it with its partial credit kept; its container had no network, its
    diff.patch records what it wrote, the state the image has outside the workdir survives to the verifier, and
    a reward and a test.sh it planted where the verifier's go count for nothing."""
    from agentic_eval.testing import FakeEndpoint
    from tests.helpers import commands_then_done

    oracle = harbor_run(tmp_path, "oracle", "--agent", "oracle", "--tasks", str(HARBOR))
    assert [(t["task_id"], t["outcome"], t["reward"]) for t in oracle] == [("kv-fetch", "pass", 1.0),
                                                                           ("tally-words", "pass", 1.0)]
    # the oracle wrote only in the workdir: no program the verifier may run was changed, and nothing is said
    assert [(t["changed_programs"], t["changed_programs_count"], t["changed_programs_error"]) for t in oracle] == [
        ([], 0, "")] * 2
    nop = harbor_run(tmp_path, "nop", "--agent", "nop", "--tasks", str(HARBOR))
    assert [(t["task_id"], t["outcome"], t["reward"]) for t in nop] == [("kv-fetch", "fail", 0.0),
                                                                        ("tally-words", "fail", 0.0)]
    commands = ["wc -w < data/words.txt > /app/count.txt; pwd; id -u",
                "ls /sys/class/net; cat /srv/tally/note.txt",
                # a planted reward and verifier: the verifier's /logs/verifier and /tests are mounted fresh over them
                "mkdir -p /logs/verifier /tests && echo 1 > /logs/verifier/reward.txt && "
                "printf 'echo 1 > /logs/verifier/reward.txt' > /tests/test.sh; ls /tests"]
    with FakeEndpoint(responder=commands_then_done(commands)) as fake:
        (trial,) = harbor_run(tmp_path, "builtin", "--model", "fake-model", "--base-url", fake.base_url, "--tasks",
                        str(HARBOR), "--task", "tally-words", "--agent-opt", "max_retries=0")
        outputs = [m["content"] for m in fake.requests[-1].body["messages"] if m["role"] == "tool"]
    assert (trial["outcome"], trial["reward"], trial["grader_verdict"]) == ("fail", 0.5, "fail")
    assert "/app" in outputs[0] and "\n0" in outputs[0]  # in the workdir, as root of its own container
    assert outputs[1].split()[:1] == ["lo"] and "kept outside the workdir" in outputs[1]  # no network but lo
    assert outputs[2].split()[:1] == ["test.sh"]  # the verifier's files were not there: only the planted one
    run_dir = tmp_path / "builtin" / trial["run_id"]
    from agentic_eval.report.summary import summarize_run, task_cell

    assert task_cell(summarize_run(run_dir), "tally-words") == "fail (reward 0.5)"  # the report shows the credit
    diff = (run_dir / trial["files"]["diff"]).read_text()
    assert "count.txt" in diff and "+6" in diff
    assert (trial["turns"]["tool_call"], trial["turns"]["text_tool_call"]) == (3, 0)  # the wire log, classified


def test_the_containers_own_filesystem_is_capped_and_the_caps_are_named(docker_env: str, tmp_path: Path) -> None:
    """tally-words sets storage_mb = 256. The work dir is capped at that (named so in the detail, not the default
    1g), and what the model writes elsewhere (the container's writable layer, on the engine's disk) is bounded
    too: the engine's own cap where its storage driver has one, else the container is killed once over it. The
    model filled its own disk, so the trial is a scored fail before grading, the detail naming both caps."""
    import os

    from agentic_eval.testing import FakeEndpoint
    from tests.helpers import commands_then_done

    commands = ["dd if=/dev/zero of=/app/fill bs=1M count=300 status=none; echo work-dir-done",
                "dd if=/dev/zero of=/var/tmp/fill bs=1M count=400 status=none; sleep 20; echo survived"]
    with FakeEndpoint(responder=commands_then_done(commands)) as fake:
        (trial,) = harbor_run(tmp_path, "fill", "--model", "fake-model", "--base-url", fake.base_url, "--tasks",
                        str(HARBOR), "--task", "tally-words", "--agent-opt", "max_retries=0")
        outputs = [m["content"] for m in fake.requests[-1].body["messages"] if m["role"] == "tool"]
    assert (trial["outcome"], trial["fault"], trial["grader_verdict"]) == ("fail", "model", None), trial
    assert "survived" not in outputs[1]
    assert "container's own filesystem (outside the work dir)" in trial["detail"] and "(256m" in trial["detail"]
    if os.geteuid() == 0:  # the work dir's cap is a tmpfs mount
        assert "the work dir filled its size cap (256m)" in trial["detail"], trial["detail"]


def test_changed_programs_the_verifier_may_run_are_recorded_and_reported(docker_env: str, tmp_path: Path) -> None:
    """A task verified in the agent's container (`[verifier] container = "agent"`): the built-in agent does
    tally-words' work and also replaces pytest (a new /usr/local/bin/pytest ahead of the image's /usr/bin/pytest
    on PATH), appends to Python's os.py and adds a .pth: the verifier's pass is 'tampered' (tests/
    test_verifier_apart.py has the forgeries), the trial names those paths, and the report says so. What it added
    that shadows nothing, and what it changed outside the places programs live (/root, /srv, the workdir), is not
    named."""
    from agentic_eval.testing import FakeEndpoint
    from tests.helpers import commands_then_done, run_cli

    commands = ["wc -w < data/words.txt > /app/count.txt; wc -l < data/words.txt > lines.txt",
                "printf '#!/bin/sh\\nexit 0\\n' > /usr/local/bin/pytest && chmod +x /usr/local/bin/pytest && "
                "echo '# touched' >> \"$(python3 -c 'import os; print(os.__file__)')\" && "
                "site=$(python3 -c 'import site; print(site.getsitepackages()[0])') && mkdir -p $site && "
                "echo > $site/zz-hook.pth && "
                "touch /usr/local/bin/brand-new-tool /root/note && mkdir -p /srv/more",
                "python3 -c 'import os, site; print(os.__file__, site.getsitepackages()[0])'"]
    pack = tmp_path / "agent-pack"
    shutil.copytree(HARBOR / "tally-words", pack / "tally-words")
    toml = pack / "tally-words" / "task.toml"
    toml.write_text(toml.read_text().replace("[verifier]\n", '[verifier]\ncontainer = "agent"\n'))
    with FakeEndpoint(responder=commands_then_done(commands)) as fake:
        (trial,) = harbor_run(tmp_path, "changed", "--model", "fake-model", "--base-url", fake.base_url, "--tasks",
                        str(pack), "--task", "tally-words", "--agent-opt", "max_retries=0")
        outputs = [m["content"] for m in fake.requests[-1].body["messages"] if m["role"] == "tool"]
    os_py, site = outputs[2].split()[:2]
    assert (trial["outcome"], trial["reward"]) == ("tampered", 1.0)  # the verifier's pass, not taken
    assert trial["changed_programs"] == ["/usr/local/bin/pytest", *sorted([os_py, f"{site}/zz-hook.pth"])]
    assert (trial["changed_programs_count"], trial["changed_programs_error"]) == (3, "")
    run_dir = tmp_path / "changed" / trial["run_id"]
    from agentic_eval.report.summary import summarize_run, task_cell

    assert task_cell(summarize_run(run_dir), "tally-words") == "tampered"
    code, report = run_cli("report", str(run_dir), "--json")
    (note,) = report["changed_programs"]
    assert code == 0 and note.endswith("tally-words a1 (tampered): changed programs the verifier may "
                                       "run: /usr/local/bin/pytest (+2 more)")
    code, _ = run_cli("report", str(run_dir), "--html", str(tmp_path / "report.html"))
    page = (tmp_path / "report.html").read_text()
    assert code == 0 and page.count("changed programs the verifier may run: /usr/local/bin/pytest (+2 more)") == 2


def test_a_bind_source_gone_before_the_verifier_is_not_left_behind(docker_env: str, tmp_path: Path) -> None:
    """A folder a phase of the agent's container bound read-only (validate's fix phase binds the grader's variables
    folder), removed before the verifier runs: the engine makes it again, empty, when the verifier looks into the
    stopped container's files; the trial's end removes what the engine made (empty ae-vars-* folders piled up in
    the temp dir after every validate of an environment task)."""
    import subprocess

    from agentic_eval.confine.docker import DockerBackend
    from agentic_eval.packs.task import load_task

    task = load_task(HARBOR / "tally-words").environment_task()
    assert task is not None
    backend = DockerBackend(base_image="suite")
    try:
        backend.prepare_tasks([task])
        sandbox = tmp_path / "sandbox"
        sandbox.mkdir()
        backend.environment_start(task, sandbox)
        bound = tmp_path / "vars"
        bound.mkdir()
        (bound / "vars.json").write_text("{}")

        class Spec:
            writable, readable, hidden = (sandbox,), (bound,), ()

        argv = backend.wrap(["true"], cwd=sandbox, spec=Spec())
        assert subprocess.run(argv, capture_output=True, timeout=120, check=False).returncode == 0
        backend.phase_end(sandbox)
        shutil.rmtree(bound)
        backend.verify_environment(sandbox)
        assert bound.is_dir() and not any(bound.iterdir())  # the engine's, made again
        backend.trial_end(sandbox)
        assert not bound.exists()
    finally:
        backend.close_all()


def test_an_engine_that_cannot_diff_is_a_note(docker_env: str) -> None:
    """The engine's diff failing (here: a container it does not have) is one line on the trial, nothing named."""
    import docker

    from agentic_eval.confine.env_changes import program_changes

    changes = program_changes(docker.DockerClient(base_url=docker_env), "ae-no-such-container", "/app",
                              "/usr/local/bin:/usr/bin")
    assert (changes.paths, changes.count) == ((), 0)
    assert changes.error.startswith("the engine's diff of the agent's container failed: NotFound: ")


def test_our_environment_task_runs_and_validates(docker_env: str, tmp_path: Path) -> None:
    """Our format: its user (agent, not root), env var and workdir; graded by its sealed grade script. Then
    `validate` on both packs: pristine fails, oracle passes, and the unsupported Harbor field is named."""
    from tests.helpers import run_cli

    oracle = harbor_run(tmp_path, "own-oracle", "--agent", "oracle", "--tasks", str(ENVPACK), "--seed", "3")
    nop = harbor_run(tmp_path, "own-nop", "--agent", "nop", "--tasks", str(ENVPACK))
    assert [(t["task_id"], t["outcome"], t["reward"]) for t in oracle + nop] == [
        ("greet-env", "pass", None), ("seeded-env", "pass", None), ("greet-env", "fail", None),
        ("seeded-env", "fail", None)]
    seeded = oracle[1]
    tree = json.loads((tmp_path / "own-oracle" / seeded["run_id"] / seeded["files"]["tree"]).read_text())
    assert "tool.txt" in json.dumps(tree) and "config.txt" in json.dumps(tree)  # the image's file and the seed's
    code, data = run_cli("validate", "--tasks", str(HARBOR), "--tasks", str(ENVPACK), "--sandbox", "docker",
                         "--base-image", "suite", "--seeds", "2", "--repeat", "1", "--json")
    assert code == 0, data
    by_id = {t["id"]: t for t in data["tasks"]}
    # no seed reaches a Harbor task (its tree is its image's, its verifier's environment has none): one seed checks
    # it; ours have a grade script that gets the seed, and seeded-env a generator: both seeds
    assert {i: (t["status"], t["seeds"], t["pristine_fails"], t["fixed_passes"]) for i, t in by_id.items()} == {
        "greet-env": ("ok", [0, 1], 2, 2), "kv-fetch": ("ok", [0], 1, 1), "seeded-env": ("ok", [0, 1], 2, 2),
        "tally-words": ("ok", [0], 1, 1)}
    one_seed = "seeds: 1 of 2 (seed 0): its tree and verifier do not depend on the seed"
    assert {i for i, t in by_id.items() if one_seed in t["notes"]} == {"kv-fetch", "tally-words"}
    assert data["seeds"] == [0, 1]
    assert any("environment.gpus" in n for n in by_id["tally-words"]["notes"])
    assert json.dumps(data).count("red team not run") == 4


def test_a_campaign_file_gives_the_base_image(docker_env: str, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """`base_image` in a campaign file is `run --base-image`: it implies the docker sandbox, and a Harbor task,
    whose base image no registry here serves, passes its oracle; without it the same file cannot build it."""
    from agentic_eval.testing import FakeEndpoint
    from tests.helpers import run_cli

    file, runs = tmp_path / "harbor.toml", tmp_path / "runs"
    with FakeEndpoint(model="served") as fake:
        body = (f'packs = ["{HARBOR}"]\ntasks = ["tally-words"]\nagents = ["oracle"]\ninstruments = []\n'
                f'[[models]]\nname = "served"\nbase_url = "{fake.base_url}"\n')
        file.write_text('sandbox = "docker"\n' + body)
        code, _ = run_cli("campaign", str(file), "--run-dir", str(runs))
        assert code != 0
        err = capsys.readouterr().err
        assert "cannot get the base image 'python:3.12-slim'" in err
        assert 'set base_image = "suite" in the campaign file' in err  # run's --base-image, as the file says it
        file.write_text('base_image = "suite"\n' + body)
        code, _ = run_cli("campaign", str(file), "--run-dir", str(runs))
        assert code == 0
        (run_json,) = (runs / "harbor" / "served" / "runs" / "oracle").glob("*/run.json")
        assert json.loads(run_json.read_text())["sandbox"] == "docker"
        trials_file = run_json.parent / "trials.jsonl"
        trials = [json.loads(line) for line in trials_file.read_text().splitlines()]
        # the first file's trial was recorded unscored (its image did not build): this one resumed it, and passed
        assert [(t["task_id"], t["outcome"], t["reward"], t["fault"]) for t in trials] == [
            ("tally-words", "agent_error", None, "grader"), ("tally-words", "pass", 1.0, "")]
        trials_file.write_text("")  # its trial missing: the same command resumes the run, on the same base image
        code, _ = run_cli("campaign", str(file), "--run-dir", str(runs))
        assert code == 0, capsys.readouterr().err
    assert [p.parent for p in run_json.parent.parent.glob("*/run.json")] == [run_json.parent]
    trials = [json.loads(line) for line in trials_file.read_text().splitlines()]
    assert [(t["task_id"], t["outcome"]) for t in trials] == [("tally-words", "pass")]

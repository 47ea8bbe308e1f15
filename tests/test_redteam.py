"""validate's red team: generic forgeries and dodges applied to the pristine repo, each of which the grader must
answer with a scored fail. A weak grader (pytest in its own process, trusting the exit code) is reported bad with the
forging attempts named; a grader that only reads a file survives every attempt; a hang against a short time limit is
a grader error, reported as such; attempts come from the built-ins, third-party entry points and a pack's own
redteam.py; an attempt that crashes is a note, never the end of the validation."""

from __future__ import annotations

import importlib
import json
import sys
import textwrap
from pathlib import Path

import pytest

from agentic_eval.cli import main
from agentic_eval.errors import AgenticEvalError
from agentic_eval.packs.task import load_task
from agentic_eval.validation import redteam as rt
from agentic_eval.validation.report import TaskValidation
from agentic_eval.validation.survey import sandbox_languages
from agentic_eval.validation.validate import ValidateOptions, validate_task

GENERATOR = '''
import json
from pathlib import Path


def generate(root: Path, seed: int, params: dict) -> dict:
    for folder in ("src", "tests", "config"):
        (root / folder).mkdir()
    (root / "src" / "calc.py").write_text("def add(a, b):\\n    return a - b\\n")
    (root / "tests" / "test_calc.py").write_text(
        "from calc import add\\n\\n\\ndef test_add():\\n    assert add(2, 3) == 5\\n")
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\\npythonpath = ["src"]\\n')
    (root / "config" / "settings.json").write_text(json.dumps({"port": 8000}) + "\\n")
    (root / ".gitignore").write_text("__pycache__/\\n")
    if params.get("polyglot"):  # every built-in attempt applies: python, node and shell files
        (root / "src" / "calc.mjs").write_text("export function add(a, b) {\\n  return a - b;\\n}\\n")
        (root / "tests" / "calc.test.mjs").write_text(
            'import { test } from "node:test";\\nimport assert from "node:assert/strict";\\n'
            'import { add } from "../src/calc.mjs";\\n\\ntest("add", () => assert.equal(add(2, 3), 5));\\n')
        (root / "scripts").mkdir()
        (root / "scripts" / "check.sh").write_text("#!/usr/bin/env bash\\necho checked\\n")
    return {"port": 9000 + seed}
'''

# The old way, which the forgeries beat: pytest in a process of its own that imports the code under test,
# the verdict its exit status.
WEAK_GRADER = '''
import os
import subprocess
import sys

done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=os.getcwd())
sys.exit(0 if done.returncode == 0 else 1)
'''
FIX_CALC = "sed -i 's/a - b/a + b/' src/calc.py\n"

# Reads one file, refusing anything but a regular file: nothing of the model's runs, nothing blocks.
READING_GRADER = '''
import json
import os
import sys
from pathlib import Path

want = json.loads(Path(os.environ["AGENTIC_EVAL_VARS"]).read_text())["port"]
settings = Path("config/settings.json")
try:
    port = json.loads(settings.read_text())["port"] if settings.is_file() else None
except (ValueError, KeyError, TypeError):
    port = None
print(f"port {port}, want {want}")
sys.exit(0 if port == want else 1)
'''
FIX_PORT = ("python3 -c 'import json, os; port = json.load(open(os.environ[\"AGENTIC_EVAL_VARS\"]))[\"port\"]; "
            "open(\"config/settings.json\", \"w\").write(json.dumps({\"port\": port}))'\n")

# Imports the code under test into its own process.
IMPORTING_GRADER = '''
import sys

sys.path.insert(0, "src")
import calc

sys.exit(0 if calc.add(2, 3) == 5 else 1)
'''


def make_pack(root: Path, grader: str, fix: str, *, grader_timeout_s: float = 20, polyglot: bool = False,
              redteam_py: str | None = None) -> Path:
    """A pack under `root` with one task, `calc`, graded by `grader`; its own redteam.py if given."""
    pack = root / "rtpack"
    task = pack / "calc"
    (pack / "sandboxes").mkdir(parents=True)
    task.mkdir()
    (pack / "sandboxes" / "calcgen.py").write_text(GENERATOR)
    (task / "task.toml").write_text(textwrap.dedent(f'''
        id = "calc"
        title = "Fix add"
        [sandbox]
        generator = "calcgen"
        params = {{ polyglot = {"true" if polyglot else "false"} }}
        [limits]
        agent_timeout_s = 60
        grader_timeout_s = {grader_timeout_s}
        max_turns = 5
    '''))
    (task / "instruction.md").write_text("Make the tests pass.")
    (task / "grade.py").write_text(grader)
    (task / "solve.sh").write_text("#!/usr/bin/env bash\nset -euo pipefail\n" + fix)
    if redteam_py is not None:
        (pack / "redteam.py").write_text(redteam_py)
    return pack


def verdicts(result: TaskValidation) -> dict[str, str]:
    assert result.redteam is not None
    return {a.attempt: a.verdict for a in result.redteam}


def test_a_weak_grader_is_bad_and_the_forgeries_are_named(tmp_path: Path) -> None:
    pack = make_pack(tmp_path, WEAK_GRADER, FIX_CALC, grader_timeout_s=15)  # a loaded machine grades within it
    # Knowing nothing of the test, each of these turns the failing test into a pass.
    forged = {"flip-report-class", "flip-live-config", "exit-early", "shadow-pytest", "conftest-flip",
              "trivial-tests", "equals-everything"}
    # Only those, the hang and a Node attempt are asked for (every attempt meets a grader in the next test):
    # the registered order is kept, and the language filter still applies to what is named.
    asked = [name for name in rt.registered_attempts() if name in forged | {"hang", "neuter-assert"}]
    result = validate_task(load_task(pack / "calc"), ValidateOptions(redteam=asked))
    assert (result.pristine_fails, result.fixed_passes) == (1, 1)  # the grader does its plain job
    assert result.status == "bad" and result.languages == ["python"]
    got = verdicts(result)
    assert {name for name, verdict in got.items() if verdict == "pass"} >= forged, got
    passed = next(r for r in result.reasons if r.endswith("passed the grader"))
    assert passed.startswith("red team: 'flip-report-class', 'flip-live-config', ")
    assert "'shadow-pytest'" in passed and "'exit-early'" in passed
    # The hang is waited out to the grader's limit: unscored, which a model would take for another try.
    assert got["hang"] == "grader_error"
    assert ("red team: 'hang' turned the grader unscored: timed out after 15s (limits.grader_timeout_s)"
            in result.reasons), result.reasons
    # Only the attempts for the sandbox's language ran.
    assert "neuter-assert" not in got


def test_a_grader_that_only_reads_a_file_survives_every_attempt(tmp_path: Path) -> None:
    pack = make_pack(tmp_path, READING_GRADER, FIX_PORT, polyglot=True)
    result = validate_task(load_task(pack / "calc"))
    assert result.status == "ok", result.reasons
    assert result.languages == ["node", "python", "shell"]
    got = verdicts(result)
    assert set(got) == set(rt.registered_attempts())  # every built-in applied to a sandbox of every language
    # The knowing attempts fix the task and break something else: a grader that only reads a file does not judge
    # what they broke, so their forgery proves nothing (their control, the break alone, passes too).
    knowing = {name for name, a in rt.registered_attempts().items() if rt.after_fix(a)}
    assert {got.pop(name) for name in knowing} == {"no_change"}, got
    assert set(got.values()) == {"fail"}, got
    assert result.redteam_held == len(result.redteam_graded) == len(got)
    assert result.notes == []


def test_a_hang_against_a_short_time_limit_is_reported_unscored(tmp_path: Path) -> None:
    pack = make_pack(tmp_path, IMPORTING_GRADER, FIX_CALC, grader_timeout_s=1)
    result = validate_task(load_task(pack / "calc"), ValidateOptions(redteam=["hang"]))
    assert result.reasons == [
        "red team: 'hang' turned the grader unscored: timed out after 1s (limits.grader_timeout_s)"]
    (run,) = result.redteam or []
    assert (run.attempt, run.verdict) == ("hang", "grader_error")
    assert result.duration_s < 30


PACK_REDTEAM = '''
from pathlib import Path

from agentic_eval.validation.redteam import ANY, Attempt


def boom(sandbox: Path) -> None:
    raise RuntimeError("this attempt has a bug")


def nothing(sandbox: Path) -> None:
    pass


ATTEMPTS = [
    Attempt("boom", (ANY,), "raises", boom),
    Attempt("nothing", (ANY,), "changes nothing", nothing),
    Attempt("only-node", ("node",), "never fits a python sandbox", boom),
]
'''


def test_a_packs_own_attempts_run_and_one_that_crashes_is_a_note(tmp_path: Path) -> None:
    pack = make_pack(tmp_path, READING_GRADER, FIX_PORT, redteam_py=PACK_REDTEAM)
    only = ValidateOptions(redteam=["boom", "nothing", "only-node", "delete-tests"])
    result = validate_task(load_task(pack / "calc"), only)
    assert result.status == "ok", result.reasons
    assert verdicts(result) == {"boom": "not_applied", "nothing": "no_change", "delete-tests": "fail"}
    assert result.notes == ["red team: 'boom' could not be applied: RuntimeError: this attempt has a bug"]


def test_a_broken_pack_redteam_file_is_a_reason_on_its_tasks(tmp_path: Path) -> None:
    pack = make_pack(tmp_path, READING_GRADER, FIX_PORT, redteam_py="raise ImportError('nope')\n")
    result = validate_task(load_task(pack / "calc"), ValidateOptions(redteam=["delete-tests"]))
    assert result.status == "bad"
    assert result.reasons == [f"red team: {(pack / 'redteam.py').resolve()} failed to import: ImportError: nope"]


THIRD_PARTY = '''
from pathlib import Path

from agentic_eval.validation.redteam import ANY, Attempt


def plant(sandbox: Path) -> None:
    (sandbox / "GRADED_OK").write_text("yes\\n")


PLANT_MARKER = Attempt("plant-marker", (ANY,), "leave the file a sloppy grader takes for success", plant)
'''

# A grader with a backdoor the third-party attempt knows about.
BACKDOOR_GRADER = READING_GRADER.replace("sys.exit(0 if port == want else 1)",
                                         "sys.exit(0 if port == want or Path('GRADED_OK').exists() else 1)")


@pytest.fixture
def third_party(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An installed plugin with one attempt in the agentic_eval.redteam group (a .dist-info on sys.path)."""
    site = tmp_path / "site"
    (site / "rt_plugin").mkdir(parents=True)
    (site / "rt_plugin" / "__init__.py").write_text(THIRD_PARTY)
    dist = site / "rt_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: rt-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[agentic_eval.redteam]\nplant-marker = rt_plugin:PLANT_MARKER\n")
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    yield
    sys.modules.pop("rt_plugin", None)


@pytest.mark.usefixtures("third_party")
def test_an_attempt_from_a_third_party_entry_point_is_picked_up(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert "plant-marker" in rt.registered_attempts()
    pack = make_pack(tmp_path, BACKDOOR_GRADER, FIX_PORT)
    result = validate_task(load_task(pack / "calc"), ValidateOptions(redteam=["plant-marker"]))
    assert result.reasons == ["red team: 'plant-marker' passed the grader"]
    assert main(["validate", "--redteam", "list", "--tasks", str(pack)]) == 0
    assert "plant-marker  [any]\n    leave the file a sloppy grader takes for success" in capsys.readouterr().out


def test_cli_json_carries_the_attempts_and_no_redteam_turns_it_off(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    pack = make_pack(tmp_path, WEAK_GRADER, FIX_CALC)
    one = ["--seeds", "1", "--repeat", "1"]  # the red team runs on the first seed once either way
    code = main(["validate", "--tasks", str(pack), "--json", *one, "--redteam", "shadow-pytest",
                 "--redteam", "delete-tests"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1 and data["redteam"] == ["shadow-pytest", "delete-tests"]
    (task,) = data["tasks"]
    assert task["reasons"] == ["red team: 'shadow-pytest' passed the grader"]
    assert [(a["attempt"], a["verdict"]) for a in task["redteam"]] == [("shadow-pytest", "pass"),
                                                                       ("delete-tests", "fail")]
    assert task["redteam"][0]["passing_checks"]  # the grader's last line, kept though the output is dropped
    code = main(["validate", "--tasks", str(pack), "--json", *one, "--no-redteam"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["redteam"] is None and data["tasks"][0]["redteam"] is None


def test_an_unknown_attempt_name_is_refused_before_anything_runs(tmp_path: Path) -> None:
    pack = make_pack(tmp_path, WEAK_GRADER, FIX_CALC)
    with pytest.raises(AgenticEvalError, match=r"--redteam: no attempt named 'no-such' \(there are: flip-report-cl"):
        validate_task(load_task(pack / "calc"), ValidateOptions(redteam=["no-such"]))


def test_the_terminal_output_fits_80_columns(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    pack = make_pack(tmp_path, WEAK_GRADER, FIX_CALC)
    task = pack / "calc" / "task.toml"  # the longest built-in id is 31 characters
    task.write_text(task.read_text().replace('id = "calc"', 'id = "node-port-env-already-supported"'))
    code = main(["validate", "--tasks", str(pack), "--seeds", "1", "--repeat", "1", "--redteam", "shadow-pytest",
                 "--redteam", "delete-tests"])
    out = capsys.readouterr().out
    assert code == 1
    assert max(len(line) for line in out.splitlines()) <= 80, out
    header = next(line for line in out.splitlines() if "status" in line)
    assert "pristine" in header and "red team" in header
    row = next(line for line in out.splitlines() if line.startswith("│ node-port-env"))
    assert "1/2" in row  # of the two attempts graded, the grader failed one
    assert "bad: node-port-env-already-supported: red team: 'shadow-pytest' passed the grader" in out.replace("\n", "")
    assert out.splitlines()[-1].startswith("0 ok, 1 bad (seed 0 x 1 run, 2 red-team attempts on seed 0, ")


def test_the_sandbox_languages_come_from_its_files(tmp_path: Path) -> None:
    for rel in ("a/x.py", "b/y.cjs", "README.md"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    assert sandbox_languages(tmp_path) == {"python", "node"}
    (tmp_path / "Makefile").write_text("all:\n")
    (tmp_path / "node_modules" / "z").mkdir(parents=True)
    (tmp_path / "node_modules" / "z" / "z.sh").write_text("")  # node_modules is not the repository's code
    assert sandbox_languages(tmp_path) == {"python", "node", "shell"}
    assert [a.name for a in rt.applicable(rt.BUILTIN_ATTEMPTS, {"shell"})] == [
        "exit-early", "delete-tests", "trivial-tests", "hang", "kill-parent", "fifo-files", "hollow-new-tests",
        "forged-test-count", "sparse-files", "deep-empty-folders"]


def test_sigterm_kills_the_graders_a_hang_keeps_waiting(tmp_path: Path) -> None:
    """A red-team hang keeps a grader waiting up to its time limit; Ctrl-C or SIGTERM must not wait it out."""
    import signal
    import subprocess
    import time

    pack = make_pack(tmp_path, IMPORTING_GRADER, FIX_CALC, grader_timeout_s=300)
    proc = subprocess.Popen([sys.executable, "-m", "agentic_eval.cli", "validate", "--tasks", str(pack),
                             "--redteam", "hang"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not running_under(tmp_path) and time.monotonic() < deadline:  # the hanging grader has started
            time.sleep(0.2)
        assert running_under(tmp_path), "the grader never started"
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        start = time.monotonic()
        _, err = proc.communicate(timeout=60)
        assert time.monotonic() - start < 30  # not the 300 s the hang would keep the grader waiting
    finally:
        proc.kill()
    assert proc.returncode != 0 and "interrupted" in err
    deadline = time.monotonic() + 10  # a killed confined tree may take a moment to be gone on a busy machine
    while running_under(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert running_under(tmp_path) == []


def running_under(folder: Path) -> list[str]:
    """Pids of the processes running the grader of the pack under `folder` (its confining wrapper included)."""
    import subprocess

    return subprocess.run(["pgrep", "-f", f"{folder}/rtpack/calc/grade.py"], capture_output=True, text=True,
                          check=False).stdout.split()


def test_an_attempt_that_would_kill_the_harness_is_skipped_unconfined(tmp_path: Path) -> None:
    """Unconfined (--sandbox local), a grader that imports the code under test in its own process is a child of
    the harness: kill-parent would kill validate itself. It is skipped, and says why."""
    from agentic_eval.confine.host import LocalBackend
    from agentic_eval.packs.sandbox import materialize_sandbox
    from agentic_eval.validation.validate import run_attempt

    pack = make_pack(tmp_path, IMPORTING_GRADER, FIX_CALC)
    task = load_task(pack / "calc")
    template = materialize_sandbox(task, 0, tmp_path / "template")
    run = run_attempt(task, template, rt.KILL_PARENT, tmp_path / "copy", LocalBackend())
    assert (run.verdict, run.problem) == ("skipped", "needs a confining sandbox backend, not local")
    assert not (tmp_path / "copy").exists()


@pytest.mark.skipif(__import__("agentic_eval.confine.host", fromlist=["x"]).bwrap_problem() is not None,
                    reason="the red team's kill and hang attempts need a confining backend")
def test_sealed_built_in_graders_survive_the_red_team() -> None:
    """A sample of the built-in packs (pytest, hidden calls, git checks, a Node service, a shell script on a
    fixture), validated together as `validate` does: every attempt is a scored fail. `agentic-eval validate`
    checks all of them (under 3 minutes on two cores)."""
    from agentic_eval.packs.task import load_tasks
    from agentic_eval.validation.validate import ValidateOptions, validate_tasks

    wanted = ["fix-failing-test", "write-module-from-spec", "git-commit-release", "node-stats-endpoint",
              "ops-fix-red-ci"]
    tasks = [t for t in load_tasks().tasks if t.id in wanted]
    report = validate_tasks(tasks, ValidateOptions(jobs=2))
    assert sorted(t.id for t in report.tasks) == sorted(wanted)
    # the packs' own attempts (the ops pack's later-script-speaks) beside the registered ones
    attempts = {**rt.registered_attempts(), **{a.name: a for t in tasks for a in rt.pack_attempts(t.pack_dir)}}
    for result in report.tasks:
        assert result.status == "ok", (result.id, result.reasons)
        assert result.redteam and all(a.verdict == "fail" or (a.verdict == "no_change" and rt.after_fix(
            attempts[a.attempt])) for a in result.redteam), (result.id, verdicts(result))


def test_the_payloads_are_code_that_parses() -> None:
    """The cheats are real files, read at import: each Python one compiles, each Node one passes `node --check`."""
    import shutil
    import subprocess

    files = sorted(rt.PAYLOADS.iterdir())
    assert {p.suffix for p in files} == {".py", ".js"}
    for path in files:
        if path.suffix == ".py":
            compile(path.read_text(encoding="utf-8"), str(path), "exec")
        elif shutil.which("node"):
            subprocess.run(["node", "--check", str(path)], check=True, capture_output=True, timeout=60)
    assert rt.PY_FAKE_PYTEST == (rt.PAYLOADS / "fake_pytest.py").read_text(encoding="utf-8")
    assert rt.PY_SHADOW_STDLIB.startswith(rt.PY_JUNIT_AT_EXIT) and rt.PY_FLIP_REPORTS.startswith("\n\ndef ")

"""gradelib against tiny real git repos: every check passing and failing, and the pytest check's guards."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.packs import pristine
from agentic_eval.packs.builtin import graders_dir
from tests.helpers import Grader, git, gradelib, write

pytestmark = pytest.mark.usefixtures("unfinished_graders_cleared")


PRISTINE = {
    ".gitignore": "ignored/\n",
    "README.md": "hello world\n",
    "config/settings.json": json.dumps({"server": {"port": 8080, "debug": False}, "items": [1, 2]}, indent=2),
    "config/deploy.yaml": "replicas: 2\nresources:\n  memory: 256Mi\n",
    "src/mod.py": "VALUE = 42\nNAME: str = 'x'\n\n\ndef helper():\n    return VALUE\n\n\nclass Thing:\n    pass\n",
    "src/calc.py": "def add(a, b):\n    return a + b\n",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}


@pytest.fixture(scope="session")
def template_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("template") / "repo"
    root.mkdir()
    write(root, dict(PRISTINE))
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    return root


@pytest.fixture(scope="session")
def template_store(template_repo: Path) -> tuple[Path, str]:
    """The harness's pristine store for the template repo, and the pristine commit id."""
    store = template_repo.parent / "repo.pristine.git"
    pristine.save_pristine(template_repo, store)
    return store, git(template_repo, "rev-parse", "HEAD").strip()


@pytest.fixture
def repo(template_repo: Path, template_store: tuple[Path, str], tmp_path: Path,
         monkeypatch: pytest.MonkeyPatch) -> Path:
    """A committed repo holding PRISTINE (a copy of one made per session), with the harness's ground truth
    (pristine commit and store) in the environment, as graders get it."""
    root = tmp_path / "repo"
    shutil.copytree(template_repo, root, symlinks=True)
    store, commit = template_store
    monkeypatch.setenv(pristine.STORE_ENV, str(store))
    monkeypatch.setenv(pristine.COMMIT_ENV, commit)
    return root


@pytest.fixture
def task_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "task"
    (folder / "data").mkdir(parents=True)
    monkeypatch.setenv("AGENTIC_EVAL_TASK_DIR", str(folder))
    monkeypatch.delenv("AGENTIC_EVAL_PYTHON", raising=False)
    return folder


Check = Callable[[Any], Any]

# (id, files changed after the pristine commit, the check, expected verdict)
CASES: list[tuple[str, dict[str, str | bytes], Check, bool]] = [
    ("exists", {}, lambda g: g.file_exists("README.md"), True),
    ("exists-missing", {}, lambda g: g.file_exists("nope.md"), False),
    ("absent", {}, lambda g: g.file_absent("nope.md"), True),
    ("absent-present", {}, lambda g: g.file_absent("README.md"), False),
    ("contains", {}, lambda g: g.file_contains("README.md", "world"), True),
    ("contains-not", {}, lambda g: g.file_contains("README.md", "moon"), False),
    ("contains-missing-file", {}, lambda g: g.file_contains("nope.md", "x"), False),
    ("lacks", {}, lambda g: g.file_lacks("README.md", "moon"), True),
    ("lacks-present", {}, lambda g: g.file_lacks("README.md", "world"), False),
    ("lacks-missing-file", {}, lambda g: g.file_lacks("nope.md", "x"), False),
    ("matches", {}, lambda g: g.file_matches("README.md", r"^hello\b"), True),
    ("matches-not", {}, lambda g: g.file_matches("README.md", r"^world"), False),
    ("satisfies", {}, lambda g: g.file_satisfies("README.md", lambda t: t.split() == ["hello", "world"], "is"), True),
    ("satisfies-not", {}, lambda g: g.file_satisfies("README.md", str.isupper, "is upper case"), False),
    ("satisfies-missing-file", {}, lambda g: g.file_satisfies("nope.md", lambda t: True, "exists"), False),
    ("no-match", {}, lambda g: g.no_match(r"\bmoon\b"), True),
    ("no-match-found", {}, lambda g: g.no_match(r"wor+ld"), False),
    ("no-match-new-file", {"notes.txt": "moon\n"}, lambda g: g.no_match("moon"), False),
    ("no-match-ignored-file", {"ignored/x.txt": "moon\n"}, lambda g: g.no_match("moon"), True),
    ("no-match-binary-file", {"blob.bin": b"\0moon"}, lambda g: g.no_match("moon"), True),
    ("no-match-outside-paths", {}, lambda g: g.no_match("world", ["src/**"]), True),
    ("no-match-excluded", {}, lambda g: g.no_match("world", exclude=["README.md"]), True),
    ("some-match", {}, lambda g: g.some_match("VALUE", ["src/**"]), True),
    ("some-match-none", {}, lambda g: g.some_match("VALUE", ["tests/**"]), False),
    ("json-key", {}, lambda g: g.json_key_equals("config/settings.json", "server.port", 8080), True),
    ("json-key-list-index", {}, lambda g: g.json_key_equals("config/settings.json", "items.1", 2), True),
    ("json-key-wrong", {}, lambda g: g.json_key_equals("config/settings.json", "server.port", 8081), False),
    ("json-key-wrong-type", {}, lambda g: g.json_key_equals("config/settings.json", "server.port", "8080"), False),
    ("json-key-bool-is-not-int", {}, lambda g: g.json_key_equals("config/settings.json", "server.debug", 0), False),
    ("json-key-missing", {}, lambda g: g.json_key_equals("config/settings.json", "server.host", "x"), False),
    ("json-invalid", {"config/settings.json": "{oops"},
     lambda g: g.json_key_equals("config/settings.json", "server.port", 8080), False),
    ("json-missing-file", {}, lambda g: g.json_key_equals("nope.json", "a", 1), False),
    ("yaml-key", {}, lambda g: g.yaml_key_equals("config/deploy.yaml", "resources.memory", "256Mi"), True),
    ("yaml-key-wrong", {}, lambda g: g.yaml_key_equals("config/deploy.yaml", "replicas", 3), False),
    ("yaml-invalid", {"config/deploy.yaml": "a: [1\n"},
     lambda g: g.yaml_key_equals("config/deploy.yaml", "replicas", 2), False),
    ("data-reformatted", {"config/settings.json": '{"items":[1,2],"server":{"debug":false,"port":8080}}'},
     lambda g: g.data_unchanged_except("config/settings.json"), True),
    ("data-only-allowed-key", {"config/settings.json": '{"items":[1,2],"server":{"debug":false,"port":1}}'},
     lambda g: g.data_unchanged_except("config/settings.json", ["server.port"]), True),
    ("data-other-key", {"config/settings.json": '{"items":[1,2],"server":{"debug":true,"port":1}}'},
     lambda g: g.data_unchanged_except("config/settings.json", ["server.port"]), False),
    ("data-yaml", {"config/deploy.yaml": "replicas: 5\nresources: {memory: 256Mi}\n"},
     lambda g: g.data_unchanged_except("config/deploy.yaml", ["replicas"]), True),
    ("defines-function", {}, lambda g: g.defines("src/mod.py", "helper"), True),
    ("defines-class", {}, lambda g: g.defines("src/mod.py", "Thing"), True),
    ("defines-constant", {}, lambda g: g.defines("src/mod.py", "VALUE"), True),
    ("defines-missing", {}, lambda g: g.defines("src/mod.py", "other"), False),
    ("defines-syntax-error", {"src/mod.py": "def (:\n"}, lambda g: g.defines("src/mod.py", "helper"), False),
    ("lacks-definition", {}, lambda g: g.lacks_definition("src/mod.py", "other"), True),
    ("lacks-definition-defined", {}, lambda g: g.lacks_definition("src/mod.py", "helper"), False),
    ("lacks-definition-no-file", {}, lambda g: g.lacks_definition("src/gone.py", "helper"), True),
    ("assigns", {}, lambda g: g.assigns("src/mod.py", "VALUE", 42), True),
    ("assigns-annotated", {}, lambda g: g.assigns("src/mod.py", "NAME", "x"), True),
    ("assigns-other-value", {}, lambda g: g.assigns("src/mod.py", "VALUE", 43), False),
    ("assigns-other-type", {}, lambda g: g.assigns("src/mod.py", "VALUE", "42"), False),
    ("unchanged-except-allowed", {"README.md": "changed\n", "docs/new.md": "x"},
     lambda g: g.unchanged_except(["README.md", "docs/**"]), True),
    ("unchanged-except-other", {"src/mod.py": "changed\n"}, lambda g: g.unchanged_except(["README.md"]), False),
    ("unchanged-except-new-file", {"extra.txt": "x"}, lambda g: g.unchanged_except(["README.md"]), False),
    ("unchanged-except-ignored", {"ignored/x": "x"}, lambda g: g.unchanged_except([]), True),
    ("unchanged-except-folder", {"src/new.py": "x"}, lambda g: g.unchanged_except(["src"]), True),
    ("unchanged", {"README.md": "changed\n"}, lambda g: g.unchanged(["src", "tests/test_calc.py"]), True),
    ("unchanged-edited", {"tests/test_calc.py": "changed\n"}, lambda g: g.unchanged(["tests/test_calc.py"]), False),
    ("unchanged-added", {"tests/test_new.py": "x"}, lambda g: g.unchanged(["tests"]), False),
    ("git-clean", {}, lambda g: g.git_clean(), True),
    ("git-dirty", {"README.md": "changed\n"}, lambda g: g.git_clean(), False),
    ("git-untracked", {"new.txt": "x"}, lambda g: g.git_clean(), False),
    ("git-head-not-moved", {}, lambda g: g.git_head_moved(), False),
    ("git-head-message", {}, lambda g: g.git_head_message("init\n"), True),
    ("git-head-other-message", {}, lambda g: g.git_head_message("Release 1.0"), False),
    ("command-ok", {}, lambda g: g.command_ok([sys.executable, "-c", "print('hi')"], expect_output="hi"), True),
    ("command-exit-1", {}, lambda g: g.command_ok([sys.executable, "-c", "raise SystemExit(1)"]), False),
    ("command-output-lacks", {}, lambda g: g.command_ok([sys.executable, "-c", "print(1)"], expect_output="2"), False),
    ("command-timeout", {}, lambda g: g.command_ok([sys.executable, "-c", "import time; time.sleep(30)"],
                                                   timeout=0.5), False),
    ("command-missing-sandbox-script", {}, lambda g: g.command_ok(["./no-such-script.sh"]), False),
    ("command-pythonpath", {}, lambda g: g.command_ok([sys.executable, "-c", "import calc"], pythonpath=["src"]),
     True),
    ("pytest", {}, lambda g: g.pytest_passes(["tests"]), True),
    ("pytest-require", {}, lambda g: g.pytest_passes(["tests"], require=["tests/test_calc.py::test_add"]), True),
    ("pytest-require-missing", {}, lambda g: g.pytest_passes(["tests"], require=["test_sub"]), False),
    ("pytest-min-passed", {}, lambda g: g.pytest_passes(["tests"], min_passed=2), False),
    ("pytest-failing", {"src/calc.py": "def add(a, b):\n    return a - b\n"}, lambda g: g.pytest_passes(), False),
    ("pytest-no-tests", {"tests/test_calc.py": "# nothing here\n"}, lambda g: g.pytest_passes(["tests"]), False),
    ("pytest-skipped", {"tests/test_calc.py": "import pytest\n\n@pytest.mark.skip\ndef test_x():\n    pass\n"},
     lambda g: g.pytest_passes(["tests"]), False),
    ("pytest-skipped-allowed",
     {"tests/test_more.py": "import pytest\n\n@pytest.mark.skip\ndef test_x():\n    pass\n"},
     lambda g: g.pytest_passes(["tests"], allow_skipped=True), True),
    # Spoofing: fake PASSED lines, a result-rewriting conftest, an early clean exit.
    ("pytest-fake-passed-lines",
     {"tests/test_calc.py": "print('test_add PASSED')\nprint('1 passed in 0.01s')\n\ndef test_add():\n"
                            "    print('PASSED')\n    assert False\n"},
     lambda g: g.pytest_passes(["tests"]), False),
    ("pytest-conftest-rewrites-failures",
     {"src/calc.py": "def add(a, b):\n    return 0\n",
      "conftest.py": textwrap.dedent("""
          import pytest

          @pytest.hookimpl(hookwrapper=True)
          def pytest_runtest_makereport(item, call):
              outcome = yield
              report = outcome.get_result()
              report.outcome = "passed"
          """),
      "tests/conftest.py": "print('collected 1 item\\ntests/test_calc.py::test_add PASSED')\n"},
     lambda g: g.pytest_passes(["tests"]), False),
    ("pytest-os-exit-0",
     {"tests/test_calc.py": "import os\n\ndef test_add():\n    print('1 passed')\n    os._exit(0)\n"},
     lambda g: g.pytest_passes(["tests"]), False),
    ("pytest-exit-0-at-import", {"tests/test_calc.py": "import sys\nprint('1 passed')\nsys.exit(0)\n"},
     lambda g: g.pytest_passes(["tests"]), False),
    ("pytest-timeout", {"tests/test_calc.py": "import time\n\ndef test_slow():\n    time.sleep(30)\n"},
     lambda g: g.pytest_passes(["tests"], timeout=1), False),
]


@pytest.mark.parametrize("changes, check, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_check(repo: Path, changes: dict[str, str | bytes], check: Check, expected: bool) -> None:
    write(repo, changes)
    grader = Grader(repo)
    check(grader)
    assert len(grader.results) == 1, grader.results
    assert grader.ok is expected, grader.results


def test_git_checks_after_a_commit(repo: Path) -> None:
    write(repo, {"README.md": "release\n"})
    git(repo, "commit", "-q", "-am", "Release 1.0")
    grader = Grader(repo)
    assert grader.git_head_moved()
    assert grader.git_head_message("Release 1.0")
    assert grader.git_clean()
    assert grader.unchanged_except(["README.md"])  # committed changes count too
    assert not grader.unchanged(["README.md"])


def test_deleted_file_counts_as_changed(repo: Path) -> None:
    (repo / "src" / "calc.py").unlink()
    grader = Grader(repo)
    assert not grader.unchanged_except(["README.md"])
    assert not grader.unchanged(["src/calc.py"])


def test_a_missing_program_is_the_graders_environment_not_a_fail(repo: Path) -> None:
    with pytest.raises(gradelib.GraderEnvironmentError, match="no-such-program-here"):
        Grader(repo).command_ok(["no-such-program-here"])


def test_deleted_git_folder_fails_the_repository_checks_only(repo: Path) -> None:
    """What changed is read from the harness's store, so the files still compare; checks about the
    repository itself fail with the cause."""
    shutil.rmtree(repo / ".git")
    grader = Grader(repo)
    assert grader.unchanged_except([])
    assert not grader.git_head_moved()
    assert "deleted" in grader.results[-1][2]
    assert not grader.git_clean()
    assert not grader.no_match("hello")


def test_without_the_harness_ground_truth_a_grader_errors(tmp_path: Path, repo: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(pristine.COMMIT_ENV)
    proc = run_grader(tmp_path, repo, "g = Grader()\ng.unchanged_except([])\ng.finish()\n")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert pristine.COMMIT_ENV in proc.stderr


def test_hidden_tests_run_outside_and_leave_nothing(repo: Path, task_folder: Path) -> None:
    (task_folder / "data" / "test_hidden_calc.py").write_text(
        "from calc import add\n\n\ndef test_hidden_add():\n    assert add(-1, 1) == 0\n"
    )
    grader = Grader(repo)
    run = grader.pytest_passes(["tests"], extra_tests=["test_hidden_calc.py"], min_passed=2)
    assert grader.ok, grader.results
    assert run is not None and run.count() == 2
    assert run.passed("test_hidden_add") and run.passed("tests/test_calc.py::test_add")
    assert run.count(module="test_hidden_calc") == 1 and run.count(module="test_calc") == 1
    assert git(repo, "status", "--porcelain", "--ignored") == ""
    assert not list(repo.rglob("__pycache__")) and not list(repo.rglob("*.xml"))


def test_hidden_test_failure_fails(repo: Path, task_folder: Path) -> None:
    (task_folder / "data" / "test_hidden_calc.py").write_text(
        "from calc import add\n\n\ndef test_hidden_add():\n    assert add(2, 2) == 5\n"
    )
    grader = Grader(repo)
    grader.pytest_passes(["tests"], extra_tests=["test_hidden_calc.py"])
    assert not grader.ok
    assert "test_hidden_calc.py::test_hidden_add failed" in grader.results[0][2]


def test_a_test_run_whose_file_could_not_be_placed_says_so(repo: Path) -> None:
    """The model's code left a folder where pytest_passes puts its pytest.ini: the run never started, and the
    check says why, not that it timed out."""
    grader = Grader(repo, run_all=True)
    grader.command_ok(["mkdir", "-p", f"{grader.scratch}/pytest.ini/x"])
    assert grader.pytest_passes(["tests"]) is not None
    (_, ok, why) = grader.results[-1]
    assert not ok and "pytest.ini could not be placed" in why and "timed out" not in why, why


def test_costly_checks_are_skipped_after_a_failure(repo: Path) -> None:
    grader = Grader(repo)
    grader.file_exists("nope")
    assert grader.pytest_passes(["tests"]) is None
    assert grader.command_ok([sys.executable, "-c", "pass"]) is None
    assert len(grader.results) == 1
    thorough = Grader(repo, run_all=True)
    thorough.file_exists("nope")
    assert thorough.pytest_passes(["tests"]) is not None
    assert len(thorough.results) == 2


@pytest.mark.parametrize(
    "path, patterns, expected",
    [
        ("docs/a.md", ["docs/**"], True),
        ("docs/sub/a.md", ["docs/**"], True),
        ("docs/a.md", ["docs"], True),
        ("docsx/a.md", ["docs"], False),
        ("src/pkg/mod.py", ["src/*/mod.py"], True),
        ("src/pkg/sub/mod.py", ["src/*/mod.py"], False),
        ("src/pkg/sub/mod.py", ["src/**/mod.py"], True),
        ("src/mod.py", ["src/**/mod.py"], True),
        ("README.md", ["**"], True),
        ("README.md", ["*.md"], True),
        ("docs/README.md", ["*.md"], False),
        ("a.py", [], False),
    ],
)
def test_path_matches(path: str, patterns: list[str], expected: bool) -> None:
    assert gradelib.path_matches(path, patterns) is expected


# ----- whole grader processes: exit statuses


def run_grader(tmp_path: Path, repo: Path, body: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "grade.py"
    script.write_text("from gradelib import Grader, task_vars\n" + textwrap.dedent(body))
    vars_file = tmp_path / "vars.json"
    vars_file.write_text(json.dumps({"name": "README.md", "seed": 0}))
    env = dict(os.environ, PYTHONPATH=str(graders_dir()), AGENTIC_EVAL_VARS=str(vars_file),
               AGENTIC_EVAL_SANDBOX=str(repo))
    return subprocess.run([sys.executable, str(script)], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=60, check=False)


@pytest.mark.parametrize(
    "body, status, text",
    [
        ("g = Grader()\ng.file_exists(task_vars()['name'])\ng.finish()\n", 0, "✓ README.md exists"),
        ("g = Grader()\ng.file_exists('nope.md')\ng.finish()\n", 1, "✗ nope.md exists: no such file"),
        ("g = Grader()\ng.file_exists('README.md')\nraise KeyError('bug in the grader')\n", 3, "KeyError"),
        ("g = Grader()\ng.file_exists('README.md')\n", 3, "finish() was never called"),
        ("g = Grader()\ng.finish()\n", 3, "no checks"),
        ("task_vars()['missing']\n", 3, "KeyError"),
    ],
    ids=["pass", "fail", "uncaught-exception", "no-finish", "no-checks", "bad-variable"],
)
def test_grader_exit_status(tmp_path: Path, repo: Path, body: str, status: int, text: str) -> None:
    proc = run_grader(tmp_path, repo, body)
    assert proc.returncode == status, proc.stdout + proc.stderr
    assert text in proc.stdout + proc.stderr


def test_task_dir_and_python_come_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AGENTIC_EVAL_TASK_DIR", str(tmp_path))
    monkeypatch.setenv("AGENTIC_EVAL_PYTHON", "/opt/python")
    assert gradelib.task_dir() == tmp_path
    assert gradelib.python_executable() == "/opt/python"
    monkeypatch.delenv("AGENTIC_EVAL_TASK_DIR")
    with pytest.raises(RuntimeError, match="AGENTIC_EVAL_TASK_DIR"):
        gradelib.task_dir()


# ---- a file the model padded or booby-trapped fails its check quickly, never outlasting the grader (issue 25)


def test_a_padded_config_is_not_parsed(repo: Path) -> None:
    write(repo, {"config/deploy.yaml": "replicas: 3\n" + "# padding\n" * 300_000})
    grader = Grader(repo)
    start = time.monotonic()
    assert not grader.yaml_key_equals("config/deploy.yaml", "replicas", 3)
    assert "over the" in grader.results[-1][2]
    assert time.monotonic() - start < 5


def test_a_yaml_alias_bomb_is_refused(repo: Path) -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    write(repo, {"config/deploy.yaml": "\n".join(lines) + "\n"})
    grader = Grader(repo)
    start = time.monotonic()
    assert not grader.data_unchanged_except("config/deploy.yaml")
    assert "expands to more than" in grader.results[-1][2]
    assert time.monotonic() - start < 10


def test_a_deeply_nested_toml_is_a_failed_check(repo: Path) -> None:
    write(repo, {"config/app.toml": "a = " + "[" * 50_000 + "]" * 50_000 + "\n"})
    data, why = Grader(repo).toml_data("config/app.toml")
    assert data is None and why


def test_a_fifo_in_the_repository_fails_its_git_checks_at_once(repo: Path) -> None:
    """git hashes the work tree for `status` and reads loose objects: a FIFO would keep it waiting until the
    grader's time ran out (an unscored grader_error for a fail)."""
    os.mkfifo(repo / "calc_fifo.py")
    grader = Grader(repo)
    start = time.monotonic()
    assert not grader.git_clean()
    assert "a FIFO: calc_fifo.py" in grader.results[-1][2]
    assert time.monotonic() - start < 5

"""realpy (issue 43): the mutation kinds (table-driven, pure), hiding tests, one real project end to end (its
sdist from the cache the install step filled: skipped when missing, unless CI=true), and the pack run by the
built-in agent and opencode against a scripted model that applies the real fix or does not."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from agentic_eval.realpy import mutate
from agentic_eval.realpy.plant import strip_tests
from agentic_eval.realpy.project import PROJECTS, ProjectError, download
from agentic_eval.testing import FakeEndpoint, ReceivedRequest, ScriptedReply, tool_call
from tests.helpers import (  # before the tests isolate HOME: the real cache
    MODEL_CACHE_AT_IMPORT,
    PolicyEndpoint,
    chat_reply,
    require_cli,
    run_cli,
    shell_call,
    tool_names,
)

MODULE = '''\
def f(xs, n=3, flag=True):
    """Doc."""
    if n < 0:
        return []
    out = []
    for i in range(n):  # keep this comment
        out.append(xs[i])
    if flag and n:
        helper(xs, n)
    return out[1:n]
'''

CASES = [
    ("compare", "if n < 0:", "if (n <= 0):"),
    ("compare", "if n < 0:", "if (n > 0):"),
    ("boolop", "if flag and n:", "if (flag or n):"),
    ("off_by_one", "for i in range(n):", "for i in range((n - 1)):"),
    ("off_by_one", "return out[1:n]", "return out[(1 + 1):n]"),
    ("off_by_one", "return out[1:n]", "return out[1:(n + 1)]"),
    ("off_by_one", "return out[1:n]", "return out[1:(n - 1)]"),
    ("dropped_branch", "    if n < 0:\n        return []\n", "    pass\n"),
    ("swapped_args", "helper(xs, n)", "helper(n, xs)"),
    ("wrong_default", "n=3", "n=4"),
    ("wrong_default", "flag=True", "flag=False"),
    ("removed_call", "        out.append(xs[i])\n", "        pass\n"),
]


@pytest.mark.parametrize(("kind", "before", "after"), CASES)
def test_each_kind_changes_one_place(kind: str, before: str, after: str) -> None:
    found = [s for s in mutate.sites(MODULE, "m.py") if s.kind == kind]
    results = {mutate.apply(MODULE, s) for s in found}
    assert MODULE.replace(before, after, 1) in results
    for result in results:  # the rest of the file byte for byte: the comment and the docstring stay
        assert "# keep this comment" in result and '"""Doc."""' in result
        ast.parse(result)


def test_sites_are_deterministic_and_inside_functions_only() -> None:
    source = "X = 1 if 2 < 3 else 4\n" + MODULE
    first, second = mutate.sites(source, "m.py"), mutate.sites(source, "m.py")
    assert [s.id for s in first] == [s.id for s in second]
    assert len({s.id for s in first}) == len(first)
    assert all(s.line > 1 for s in first)  # the module-level comparison is never touched
    assert {s.kind for s in first} == set(mutate.KINDS)


def test_strip_tests_removes_functions_and_methods() -> None:
    source = ("import pytest\n\n\n@pytest.mark.parametrize('a', [1])\ndef test_a(a):\n    assert a\n\n\n"
              "def test_b():\n    pass\n\n\nclass T:\n    def test_c(self):\n        assert 1\n")
    out = strip_tests(source, {("", "test_a"), ("T", "test_c")})
    assert "test_a" not in out and "parametrize" not in out and "test_c" not in out
    assert "def test_b" in out and "class T:\n    pass" in out
    two = "class U:\n    def test_x(self):\n        pass\n\n    def test_y(self):\n        pass\n"
    assert strip_tests(two, {("U", "test_x"), ("U", "test_y")}).split() == ["class", "U:", "pass"]


def test_offline_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")
    monkeypatch.setenv("PIP_RETRIES", "0")
    monkeypatch.setenv("PIP_TIMEOUT", "2")
    monkeypatch.setenv("PIP_FIND_LINKS", "")
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    with pytest.raises(ProjectError) as caught:
        download("parse", "1.20.2", tmp_path)
    assert "\n" not in str(caught.value) and "offline?" in str(caught.value)


def test_the_generator_never_downloads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """An sdist missing from the cache is one line naming the install step, not a download at trial time; and
    `tasks fetch` on packs without realpy tasks says so."""
    from agentic_eval.cli import main
    from agentic_eval.realpy.project import fetch

    monkeypatch.setenv("AGENTIC_EVAL_CACHE", str(tmp_path))
    with pytest.raises(ProjectError) as caught:
        fetch(PROJECTS["parse"])
    assert "\n" not in str(caught.value) and "agentic-eval tasks fetch" in str(caught.value)
    assert not list(tmp_path.rglob("*.tar.gz"))
    assert main(["tasks", "fetch", "--tasks", "core"]) == 2
    assert "no realpy tasks" in capsys.readouterr().err


@pytest.fixture(scope="session")
def realpy_cache() -> Path:
    """The cache folder where the install step (`agentic-eval tasks fetch`, run by scripts/install.sh) put the
    realpy pack's sdists: a skip when parse's is missing, a failure under CI (which runs the install step)."""
    from agentic_eval.realpy.project import fetch

    old = os.environ.get("AGENTIC_EVAL_CACHE")
    os.environ["AGENTIC_EVAL_CACHE"] = str(MODEL_CACHE_AT_IMPORT)
    try:
        fetch(PROJECTS["parse"])
    except ProjectError as exc:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"{exc} (scripts/install.sh should have)")
        pytest.skip(str(exc))
    finally:
        if old is None:
            os.environ.pop("AGENTIC_EVAL_CACHE", None)
        else:
            os.environ["AGENTIC_EVAL_CACHE"] = old
    return MODEL_CACHE_AT_IMPORT


def test_generator_plants_a_bug_its_hidden_tests_catch(realpy_cache: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTIC_EVAL_CACHE", str(realpy_cache))
    from agentic_eval.packs.sandbox import find_generator

    generate = find_generator("realpy", Path(__file__).parent)
    repo = tmp_path / "repo"
    repo.mkdir()
    v = generate(repo, 0, {"project": "parse", "kinds": ["compare", "boolop"]})
    mutated = (repo / v["mutated_file"]).read_text()
    assert mutated != v["original_source"] and v["kind"] in ("compare", "boolop")
    assert 1 <= len(v["require"]) <= 5
    assert v["mutated_file"] not in v["report"] and "```" not in v["report"]
    # the project's own source first among the hidden paths: what a docker image's copies are found by
    assert v["hidden_paths"][0] == str(realpy_cache / "realpy" / "parse-1.20.2" / "tree" / "parse.py")
    for select in v["hidden_select"]:  # the catching tests are not in the repo the model sees
        name = select.split("::")[-1]
        visible = repo / Path(select.split("::")[0]).parent / Path(select.split("::")[0]).name.removeprefix("hidden_")
        assert f"def {name}(" not in visible.read_text()
    # the hidden tests, beside the visible ones: fail on the mutant, pass on the original
    for key, text in v["hidden_tests"].items():
        (repo / key).write_text(text)
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *v["hidden_select"]]
    env = {**os.environ, "PYTHONPATH": str(repo)}
    assert subprocess.run(argv, cwd=repo, env=env, capture_output=True).returncode == 1
    (repo / v["mutated_file"]).write_text(v["original_source"])
    assert subprocess.run(argv, cwd=repo, env=env, capture_output=True).returncode == 0
    # generating the seed again is the same task, from the cached verdicts
    again = tmp_path / "again"
    again.mkdir()
    assert generate(again, 0, {"project": "parse", "kinds": ["compare", "boolop"]})["mutation"] == v["mutation"]


def test_the_graders_copy_selects_tests_in_classes_of_hidden_files() -> None:
    """gradelib's own copy of a suite (graders/shuffled.py) takes "file::Class::test" node ids: a hidden file's
    test in a unittest class runs under its new name, in its class."""
    from agentic_eval.packs.builtin import graders_dir

    sys.path.insert(0, str(graders_dir()))
    try:
        from shuffled import selected_files, shuffle_python
    finally:
        sys.path.remove(str(graders_dir()))
    source = "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_a(self):\n        pass\n"
    wanted = selected_files(["tests/hidden_test_m.py::T::test_a"], lambda folder: None)
    suite = shuffle_python({"tests/hidden_test_m.py": source}, wanted, lambda rel: False,
                           lambda p, f: f"def {p}():\n    pass\n\n\ndef {f}():\n    assert 0\n")
    picked = [a for a in suite.argv if "::T::" in a]
    assert len(picked) == 1 and picked[0].split("::")[-1] != "test_a"  # renamed (a new name may start "test_a")
    assert suite.names[(Path(picked[0].split("::")[0]).stem, picked[0].split("::")[-1])] == (
        "tests/hidden_test_m.py", "test_a")


# ---- the pack end to end: an agent against a scripted model that applies the real fix, or does not


def _seed0_vars(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """The variables of parse-logic at seed 0, from the cache (what the scripted model "knows" of the fix)."""
    import tomllib

    from agentic_eval.packs.builtin import builtin_root
    from agentic_eval.packs.sandbox import find_generator

    monkeypatch.setenv("AGENTIC_EVAL_CACHE", str(cache))
    params = tomllib.loads((builtin_root() / "tasks" / "realpy" / "parse-logic" / "task.toml").read_text())
    (tmp_path / "vars").mkdir()
    return find_generator("realpy")(tmp_path / "vars", 0, params["sandbox"]["params"])


def fix_policy(path: str, content: str | None) -> Callable[[ReceivedRequest], ScriptedReply]:
    """A model that, in its first turn, writes `content` to `path` (the module as the sdist ships it: the real
    fix) with the agent's file tool or its shell, or, with `content` None, writes a note and changes nothing
    else; then says it is done. Requests without tools (a CLI's title request) get prose."""
    import base64

    def policy(req: ReceivedRequest) -> ScriptedReply:
        body = req.body or {}
        names = tool_names(body)
        if not names:
            return chat_reply(body, content="Fix a planted bug")
        if any(m.get("role") == "tool" for m in body.get("messages", [])):
            return chat_reply(body, content="Done: the bug is fixed.")
        target, data = (path, content) if content is not None else ("NOTES.txt", "looked at it\n")
        if "write_file" in names:
            call = tool_call("write_file", {"path": target, "content": data}, "call_1")
        else:
            encoded = base64.b64encode(data.encode()).decode()
            name, args = shell_call(names, f"python3 -c \"import base64, pathlib; pathlib.Path('{target}')"
                                           f".write_bytes(base64.b64decode('{encoded}'))\"")
            call = tool_call(name, args, "call_1")
        return chat_reply(body, content="Applying the fix.", tool_calls=[call])

    return policy


def _run_realpy(agent: str, fake: FakeEndpoint, runs: Path) -> dict:
    code, data = run_cli("run", "--agent", agent, "--tasks", "realpy", "--task", "parse-logic", "--seed", "0",
                         "--model", "fake-model", "--base-url", fake.base_url, "--api-key", "sk-test",
                         "--run-dir", str(runs), "--json", "--agent-opt", "max_retries=0")
    (trial,) = data["trials"]
    assert code == (0 if trial["outcome"] in ("pass", "fail") else 1), trial
    return trial


@pytest.mark.parametrize("fixes", [True, False], ids=["real-fix", "no-fix"])
def test_builtin_agent_runs_the_pack_against_a_scripted_model(realpy_cache: Path, fixes: bool, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    v = _seed0_vars(realpy_cache, tmp_path, monkeypatch)
    with PolicyEndpoint(fix_policy(v["mutated_file"], v["original_source"] if fixes else None)) as fake:
        trial = _run_realpy("builtin", fake, tmp_path / "runs")
    assert trial["outcome"] == ("pass" if fixes else "fail"), trial["detail"]
    assert trial["turns"]["tool_call"] >= 1 and trial["requests"] >= 2  # recorded by the wire recorder
    run_dir = tmp_path / "runs" / trial["run_id"]
    assert "write_file" in (run_dir / trial["files"]["transcript"]).read_text()
    if fixes:  # graded: the hidden tests, the rest of the suite, the twins
        assert "that caught the bug pass" in (run_dir / trial["files"]["grader"]).read_text()
    else:  # the unfixed repo fails on the hidden tests alone; the costly suite run is skipped
        assert "skipped (an earlier check failed)" in (run_dir / trial["files"]["grader"]).read_text()


@pytest.mark.agent_cli
def test_opencode_runs_the_pack_against_a_scripted_model(realpy_cache: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    require_cli("opencode", monkeypatch)
    v = _seed0_vars(realpy_cache, tmp_path, monkeypatch)
    with PolicyEndpoint(fix_policy(v["mutated_file"], v["original_source"])) as fake:
        trial = _run_realpy("opencode", fake, tmp_path / "runs")
    assert trial["outcome"] == "pass", trial["detail"]
    assert trial["turns"]["tool_call"] >= 1 and trial["turns"]["text_tool_call"] == 0


def test_the_report_names_the_projects_functions_not_the_tests_own_helpers() -> None:
    """A test's own helper (parse's tests define `y(fmt, s, e)` inside a test) is not part of the project's API: the
    bug report names only what the project defines."""
    from agentic_eval.realpy.report import bug_report

    sources = {"parse.py": "def parse(fmt, s):\n    return s\n\ndef compile(fmt):\n    return fmt\n",
               "tests/test_parse.py": "def test_dates():\n    def y(fmt, s, e):\n        assert parse(fmt, s) == e\n"
                                      "    y('{:d}', '1', 1)\n    compile('{}')\n"}
    report = bug_report("parse", "1.20.2", "tests", ["tests/test_parse.py::test_dates"],
                        {"tests/test_parse.py::test_dates": "assert '1' == 1"},
                        {"tests/test_parse.py": sources["tests/test_parse.py"]}, sources)
    assert "`parse`" in report and "`compile`" in report and "`y`" not in report

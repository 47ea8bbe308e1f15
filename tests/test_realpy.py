"""realpy (issue 43): the mutation kinds (table-driven, pure), hiding tests, and one real project end to end
(its sdist downloaded once per session through pip; skipped offline unless CI=true)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentic_eval.realpy import mutate
from agentic_eval.realpy.plant import strip_tests
from agentic_eval.realpy.project import PROJECTS, ProjectError, download

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
    ("boolop", "if flag and n:", "if (flag or n):"),
    ("off_by_one", "for i in range(n):", "for i in range((n - 1)):"),
    ("off_by_one", "return out[1:n]", "return out[(1 + 1):n]"),
    ("off_by_one", "return out[1:n]", "return out[1:(n + 1)]"),
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


@pytest.fixture(scope="session")
def realpy_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache folder holding the parse sdist, downloaded once per session (skipped offline unless CI=true)."""
    from agentic_eval.realpy.project import fetch

    cache = tmp_path_factory.mktemp("realpy-cache")
    old = os.environ.get("AGENTIC_EVAL_CACHE")
    os.environ["AGENTIC_EVAL_CACHE"] = str(cache)
    try:
        fetch(PROJECTS["parse"])
    except ProjectError as exc:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(f"the package index cannot be reached: {exc}")
    finally:
        if old is None:
            os.environ.pop("AGENTIC_EVAL_CACHE", None)
        else:
            os.environ["AGENTIC_EVAL_CACHE"] = old
    return cache


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

"""Issue 39: the tests a model writes are judged by what they catch (graders/mutation.py), never by a report's count
of passing tests; and the red team's attempts that do a task's real work but replace the tests it asked for
(`hollow-new-tests`, `forged-test-count`). The four built-in tasks that ask for tests fail both attempts in
`validate` (tests/test_redteam.py's sample runs them on node-stats-endpoint and write-module-from-spec)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.validation import redteam as rt
from tests.helpers import Grader, write

mutation = importlib.import_module("mutation")  # graders/ is on sys.path once tests.helpers imported gradelib

pytestmark = pytest.mark.usefixtures("unfinished_graders_cleared")

MODULE = "def double(x):\n    return 2 * x\n"
REWRITE = "def double(x):\n    return x + x\n"
MUTANT = "def double(x):\n    return 2 * x + 1\n"
TESTS = {
    "a real test": "from calc import double\n\n\ndef test_double():\n    assert double(3) == 6\n",
    "a test that asserts nothing": "def test_double():\n    assert True\n",
    "a test of the module's text": "import pathlib\n\n\ndef test_text():\n"
                                   f"    assert pathlib.Path('src/calc.py').read_text() == {MODULE!r}\n",
}


@pytest.mark.parametrize(("kind", "caught", "failed"), [
    ("a real test", True, ""),
    ("a test that asserts nothing", False, "catch a broken src/calc.py: it adds one: they still pass"),
    ("a test of the module's text", False, "pass on (the grader's|an equivalent rewrite of) src/calc.py: they fail"),
])
def test_the_tests_must_pass_on_the_module_and_its_rewrite_and_fail_on_each_mutant(
        tmp_path: Path, kind: str, caught: bool, failed: str) -> None:
    write(tmp_path, {"src/calc.py": "def double(x):\n    return 0\n", "tests/test_calc.py": TESTS[kind]})
    g = Grader(tmp_path)
    argv, files, env = mutation.pytest_command(g, ["tests/test_calc.py"])
    got = mutation.tests_catch_mutants(g, argv, "src/calc.py", MODULE, rewrite=REWRITE, mutants={"it adds one": MUTANT},
                                       files=files, env=env)
    lines = [f"{what}: {why}" for what, passed, why in g.results if not passed]
    assert got is caught and g.ok is caught
    assert not failed or re.match(f"the tests {failed}", lines[0]), lines  # the first to fail in an order drawn


def test_the_runs_go_in_an_order_drawn_afresh_so_a_run_learns_nothing_from_its_place(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A "test" that counts the runs before it (the page cache, the kernel's key counts: state the machine shares)
    must not find the reference and the rewrite at fixed places: over many grades, every place holds a mutant."""
    import gradelib

    places: list[list[int]] = []

    def perfect_tests(runs: Any, *, stop: Any, sandbox: Any) -> list[Any]:  # the run judged by what the text does
        seen = []
        for at in range(len(runs)):
            scope: dict[str, Any] = {}
            exec(runs[at]["files"]["src/calc.py"], scope)
            seen.append(scope["double"](3))
            if stop(at, gradelib.RunResult(0 if seen[-1] == 6 else 1, "", "", {}, {})):
                break
        places.append(seen)
        return []

    monkeypatch.setattr(gradelib, "runs_apart", perfect_tests)
    write(tmp_path, {"src/calc.py": MODULE})
    for _ in range(40):
        g = Grader(tmp_path)
        assert mutation.tests_catch_mutants(g, ["true"], "src/calc.py", MODULE, rewrite=REWRITE,
                                            mutants={"it adds one": MUTANT, "it adds two": MODULE.replace("x\n",
                                                                                                         "x + 2\n")})
        assert [what for what, _, _ in g.results][:2] == ["the tests pass on the grader's src/calc.py",
                                                          "the tests pass on an equivalent rewrite of src/calc.py"]
    assert all(sorted(seen) == [6, 6, 7, 8] for seen in places)
    assert all(any(seen[at] != 6 for seen in places) for at in range(4)), places  # each fails by chance 1 in 2**40


def test_every_text_run_is_stamped_so_no_list_of_known_texts_gets_past() -> None:
    one, two = mutation.stamped("src/app.js", "x;\n"), mutation.stamped("src/app.js", "x;\n")
    assert one != two and one.endswith("\nx;\n") and one.startswith("// ")
    script = mutation.stamped("scripts/getconf.py", "#!/usr/bin/env python3\nprint(1)\n")
    assert script.startswith("#!/usr/bin/env python3\n# ")  # a Python module is disguised too (test_disguise.py)
    assert mutation.stamped("src/calc.py", MODULE).startswith("# ")


def test_a_mutation_that_does_not_apply_is_the_graders_error_and_a_failed_check_skips_the_runs(tmp_path: Path) -> None:
    assert mutation.edited("a = 1\nb = 2\n", ("a = 1", "a = 2"), ("b = 2", "b = 3")) == "a = 2\nb = 3\n"
    with pytest.raises(RuntimeError, match="does not apply"):
        mutation.edited("a = 1\n", ("a = 2", "a = 3"))
    write(tmp_path, {"src/calc.py": MODULE})
    g = Grader(tmp_path)
    g.check("an earlier check", False, "no")
    assert mutation.tests_catch_mutants(g, ["false"], "src/calc.py", MODULE, rewrite=REWRITE,
                                        mutants={"x": MUTANT}) is False
    assert g.last_run is None and len(g.results) == 1  # nothing ran


# --------------------------------------------------------------------------- the red team's edits (pure text)

PY_PRISTINE = "import pytest\n\nfrom calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
PY_FIXED = ("import pytest\n\nfrom calc import add, double\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\n"
            "@pytest.mark.parametrize('x', [1, 2])\ndef test_double(x):\n    assert double(x) == 2 * x\n")
NODE_PRISTINE = 'import { test } from "node:test";\n\ntest("adds", () => {\n  assert.equal(add(1, 2), 3);\n});\n'
NODE_FIXED = NODE_PRISTINE.replace("add(1, 2), 3", "add(2, 2), 4") + '\ntest("doubles", () => {\n  x();\n});\n'
SH_PRISTINE = 'pass() { echo "PASS $1"; }\n[[ 1 == 1 ]] && pass "one"\n\necho "$failures failed"\nexit 0\n'
SH_FIXED = SH_PRISTINE.replace('\necho "$f', '[[ 2 == 2 ]] && pass "two"\n\necho "$f')


@pytest.mark.parametrize(("language", "pristine", "fixed", "kept", "removed"), [
    ("python", PY_PRISTINE, PY_FIXED, PY_FIXED[:PY_FIXED.index("@")],
     "@pytest.mark.parametrize('x', [1, 2])\ndef test_double(x):\n    assert double(x) == 2 * x\n"),
    ("node", NODE_PRISTINE, NODE_FIXED, NODE_FIXED[:NODE_FIXED.index('test("doubles"')],
     'test("doubles", () => {\n  x();\n});\n'),
    ("shell", SH_PRISTINE, SH_FIXED, SH_PRISTINE, '[[ 2 == 2 ]] && pass "two"\n'),
])
def test_the_attempts_take_out_only_the_tests_the_fix_added(language: str, pristine: str, fixed: str, kept: str,
                                                             removed: str) -> None:
    """The fix's other edits of a test file stay (the whole-quote test updated for a new field), its new tests go."""
    assert rt._without_new_tests(fixed, pristine, language) == (kept, removed)


def test_a_shell_suites_forged_line_goes_before_its_summary() -> None:
    text = rt._before_summary(SH_PRISTINE, 'echo "PASS forged"\n')
    assert text.splitlines()[-4:] == ['echo "PASS forged"', '', 'echo "$failures failed"', "exit 0"]
    copied = rt._copied_test("python", PY_PRISTINE)
    assert "def test_add_again():\n    assert add(1, 2) == 3" in copied
    assert rt._commented("node", "a\n\nb\n") == "// a\n// b\n"

"""The realpy bug report: a hidden test that fails with a bare exception ("IndexError: string index out of range")
is reported with the call of the project's that raised it, its arguments' values in place of the test's variables,
as a failed comparison is reported with pytest's "where" lines; one run of pytest on a toy project."""

from __future__ import annotations

from pathlib import Path

from agentic_eval.realpy.project import Project, run_suite
from agentic_eval.realpy.report import bug_report, failure_message

TOY = "def pick(s, i):\n    return _at(s, i)\n\n\ndef _at(s, i):\n    return s[i]\n"
TESTS = '''from toy import pick
import toy


def test_literal():
    assert toy.pick("abc", 9) == "c"


def test_variable():
    text = "abc"
    assert pick(text, 1) == "b"
    assert pick(text, len(text) + 4) == "c"


def test_helper():
    def y(s, i, e):
        assert pick(s, i) == e
    y("ab", 5, "b")


def test_compare():
    assert pick("abc", 0) == "c"
'''


def test_a_bare_exception_is_reported_with_the_call_that_raised_it(tmp_path: Path) -> None:
    (tmp_path / "toy.py").write_text(TOY)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_toy.py").write_text(TESTS)
    run = run_suite(tmp_path, Project("toy", "1.0", "0" * 64, sources=("toy.py",)), timeout=120)
    failing = sorted(run.messages)
    assert [n.rpartition("::")[2] for n in failing] == ["test_compare", "test_helper", "test_literal", "test_variable"]
    compare, *raised = failing
    report = bug_report("toy", "1.0", "tests", raised, run.messages, {"tests/test_toy.py": TESTS},
                        {"toy.py": TOY}).replace("\n", " ")
    assert "`toy.pick('abc', 9)` raises IndexError: string index out of range" in report
    assert "`pick('abc', len('abc') + 4)` raises IndexError" in report  # the call the carets mark, values in
    assert "`pick('ab', 5)` raises IndexError" in report  # inside the test's own helper: its arguments' values
    assert "_at" not in report and "toy.py" not in report  # never the library's own frames or file
    message = run.messages[compare]  # a failed comparison: pytest's message, as it was
    assert message.startswith("AssertionError: assert 'a' == 'c'") and failure_message(message, "", "x") == message


def test_a_message_kept_before_names_no_call() -> None:
    """A verdict cached before the call was kept: the report reads it as it did."""
    report = bug_report("toy", "1.0", "tests", ["tests/test_toy.py::test_literal"],
                        {"tests/test_toy.py::test_literal": "IndexError: string index out of range"},
                        {"tests/test_toy.py": TESTS}, {"toy.py": TOY})
    assert "- Using `pick`: IndexError: string index out of range" in report

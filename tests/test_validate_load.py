"""validate on a loaded machine: a red-team attempt whose grader was stopped by its wall clock after the model's code
was cut at the grader's deadline is undecided, not the grader's unscored verdict. It is graded once more under the
task's own limit (decided there: the verdict stands), and stopped so again it is one line saying the machine was too
loaded. Before, `hang` and `fifo-files` were reported as turning the grader unscored at load ~21."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentic_eval.confine.registry import default_backend
from agentic_eval.packs.sandbox import materialize_sandbox
from agentic_eval.packs.task import load_task
from agentic_eval.validation import redteam as rt
from agentic_eval.validation import validate
from agentic_eval.validation.report import explain_redteam
from tests.helpers import integrity_pack

# Runs the model's code apart (cut at the grader's deadline), then takes `{sleep}` s of its own to answer: what a
# grader does on a machine too loaded to give it its share of a core in the time it has left.
SLOW_GRADER = '''
import sys
import time

from gradelib import run_apart

run_apart([sys.executable, "-c", "import sys; sys.path.insert(0, 'src'); import calc"], timeout=600)
time.sleep({sleep})
sys.exit(1)
'''


def _hang(sandbox: Path) -> None:
    (sandbox / "src" / "calc.py").write_text("import time\n\ntime.sleep(600)\n")


SLOW = rt.Attempt("slow-import", ("any",), "the code under test sleeps when imported", _hang, waits=True)


@pytest.mark.parametrize(("sleep", "full", "verdict"), [(1, 6, "fail"), (30, 2, "undecided")],
                         ids=["decided-on-the-second-run", "undecided-twice"])
def test_a_grader_stopped_after_its_answer_is_undecided_and_graded_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sleep: int, full: int, verdict: str) -> None:
    monkeypatch.setattr(validate, "REDTEAM_WAIT_LIMIT_S", 1.0)  # so that the first run is stopped, on any machine
    pack = integrity_pack(tmp_path, grader=SLOW_GRADER.format(sleep=sleep))
    toml = pack / "calc" / "task.toml"
    toml.write_text(toml.read_text().replace("grader_timeout_s = 30", f"grader_timeout_s = {full}"))
    task = load_task(pack / "calc")
    template = materialize_sandbox(task, 0, tmp_path / "template")
    run = validate.run_attempt(task, template, SLOW, tmp_path / "copy", default_backend())
    assert run.verdict == verdict, (run.problem, run.output[-500:])
    if verdict == "undecided":
        (reason,) = explain_redteam([run], [0])
        assert reason.startswith("red team: 'slow-import' undecided: the machine is too loaded to decide"), reason
        assert "unscored" not in reason and "(1s limit, then 2s with 1s left)" in reason
    else:
        assert run.problem == "" and not explain_redteam([run], [0])

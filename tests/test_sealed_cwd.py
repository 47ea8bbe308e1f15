"""A grader's command to run in a folder of the model's tree that the model deleted (or replaced with a link or a
file) is the model's scored fail, never a harness error (grading/sealed.py). Before, the code host's Popen raised
FileNotFoundError and answered `error: could not start ...`, which a grader reports as its own error: unscored."""

from __future__ import annotations

from pathlib import Path

from agentic_eval.confine.host import LocalBackend
from agentic_eval.grading.sealed import CodeHost


def test_a_missing_or_linked_folder_to_run_in_is_the_models(tmp_path: Path) -> None:
    snapshot = tmp_path / "snap"
    (snapshot / "app").mkdir(parents=True)
    (snapshot / "gone").write_text("a file where the grader expects a folder")
    (snapshot / "elsewhere").symlink_to(tmp_path)
    host = CodeHost(snapshot, tmp_path / "host", LocalBackend())
    try:
        assert host.run({"argv": ["true"], "cwd": "app"})["exit"] == 0
        for folder in ("missing", "gone", "elsewhere", "app/missing"):
            response = host.run({"argv": ["true"], "cwd": folder})
            assert response["error"] is None and response["exit"] is None, response
            assert "is not in the model's tree" in response["stopped_by"], response
    finally:
        host.close()

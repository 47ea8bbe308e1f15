"""A grader that runs plain `git` itself (a pack written against the docs before sealed grading: `git
check-ignore`, `git ls-tree`, `git show PRISTINE:path`) reads the agent's repository through the same safe view
gradelib's checks use (agentic_eval/packs/gitshim.py): it validates and grades right, and nothing the agent
writes into its .git (config, fsmonitor, hooks, filters, an alias, replace refs, forged objects) changes its
answers or runs.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest

from agentic_eval.confine.backend import SandboxBackend, bwrap_problem, default_backend
from agentic_eval.packs.gitsafe import pristine_entries
from agentic_eval.packs.grader import ScriptRunner, Verdict
from agentic_eval.packs.sandbox import materialize_sandbox
from agentic_eval.packs.task import Task, load_tasks
from tests.helpers import run_cli

PACK = Path(__file__).resolve().parent / "packs" / "oldgit"
needs_bwrap = pytest.mark.skipif(bwrap_problem() is not None, reason=f"bwrap: {bwrap_problem()}")

HOSTILE_CONFIG = """
[core]
\tfsmonitor = "echo PWNED-fsmonitor >&2; false"
\thooksPath = .git/evil-hooks
\tworktree = /
\tattributesFile = .git/evil-attributes
[filter "evil"]
\tclean = "echo PWNED-filter >&2; cat"
\tsmudge = "echo PWNED-filter >&2; cat"
\trequired = true
[diff "evil"]
\ttextconv = "echo PWNED-textconv >&2; cat"
[alias]
\tcheck = "!echo PWNED-alias >&2"
[include]
\tpath = evil-include
"""


def _task() -> Task:
    [task] = load_tasks([PACK]).tasks
    return task


def _grade(task: Task, tmp_path: Path, edit: object, backend: SandboxBackend | None = None) -> tuple[Verdict, str]:
    """The sandbox of seed 0, edited as the agent would, graded (tests/test_docker_backend.py: in containers)."""
    sandbox = materialize_sandbox(task, 0, tmp_path / "sandbox")
    edit(sandbox)  # type: ignore[operator]
    backend = backend or default_backend()
    backend.prepare(sandbox.path)
    try:
        with ScriptRunner(task, sandbox, backend=backend) as runner:
            result = runner.grade()
    finally:
        close = getattr(backend, "close", None)  # docker: the grader's container
        if close is not None:
            close(sandbox.path)
    return result.verdict, result.script.output


def _fixed(sandbox: object) -> None:
    (sandbox.path / ".gitignore").write_text("build/\n")  # type: ignore[attr-defined]


def _hostile(sandbox: object, forge: bool) -> None:
    """The right fix, then everything in .git a model could use against a grader that runs git."""
    root: Path = sandbox.path  # type: ignore[attr-defined]
    _fixed(sandbox)
    dot_git = root / ".git"
    with (dot_git / "config").open("a") as fh:
        fh.write(HOSTILE_CONFIG)
    (dot_git / "evil-include").write_text('[core]\n\tfsmonitor = "echo PWNED-include >&2; false"\n')
    hooks = dot_git / "evil-hooks"
    hooks.mkdir()
    for name in ("post-checkout", "pre-commit", "reference-transaction", "post-index-change"):
        (hooks / name).write_text("#!/bin/sh\necho PWNED-hook >&2\n")
        (hooks / name).chmod(0o755)
    (dot_git / "evil-attributes").write_text("* filter=evil diff=evil\n")
    (root / ".gitattributes").write_text("* filter=evil diff=evil\n")
    (dot_git / "info").mkdir(exist_ok=True)
    (dot_git / "info" / "exclude").write_text("build/\n!build/out.log\n")
    settings = root / "config" / "settings.ini"
    _, blob, _ = pristine_entries(sandbox.pristine_store, sandbox.pristine_commit)[  # type: ignore[attr-defined]
        "config/settings.ini"]
    forged = b"[server]\nname = forged\nport = 1\n"
    data = b"blob %d\0" % len(forged) + forged
    import hashlib

    forged_id = hashlib.sha1(data, usedforsecurity=False).hexdigest()
    for oid in (forged_id, blob) if forge else (forged_id,):
        loose = dot_git / "objects" / oid[:2] / oid[2:]
        loose.parent.mkdir(exist_ok=True)
        loose.write_bytes(zlib.compress(data))  # under the pristine blob's id too, when forging
    (dot_git / "refs" / "replace").mkdir(exist_ok=True)
    (dot_git / "refs" / "replace" / blob).write_text(forged_id + "\n")  # a replace ref: pristine reads forged
    if forge:  # the pristine objects only as forged: the settings "untouched" after rewriting them
        for pack in (dot_git / "objects" / "pack").glob("pack-*"):
            pack.unlink()
        settings.write_bytes(forged)


@needs_bwrap
def test_a_pack_whose_grader_runs_git_validates() -> None:
    code, data = run_cli("validate", "--tasks", str(PACK), "--seeds", "1", "--repeat", "1", "--json")
    [task] = data["tasks"]
    assert code == 0 and task["status"] == "ok", json.dumps(task)[:3000]


@needs_bwrap
@pytest.mark.parametrize(("edit", "verdict", "answers"), [
    (_fixed, Verdict.PASS, "ignored=True untouched=True"),
    (lambda sandbox: None, Verdict.FAIL, "ignored=False untouched=True"),
    (lambda sandbox: _hostile(sandbox, forge=False), Verdict.PASS, "ignored=True untouched=True"),
    (lambda sandbox: _hostile(sandbox, forge=True), Verdict.FAIL, "ignored=True untouched=False"),
], ids=["fixed", "untouched", "hostile-git-config", "forged-pristine-objects"])
def test_plain_git_in_a_grader_reads_the_agents_repository_safely(tmp_path: Path, edit: object, verdict: Verdict,
                                                                  answers: str) -> None:
    got, output = _grade(_task(), tmp_path, edit)
    assert got is verdict, output
    assert answers in output and "listed=['README.md', 'config/settings.ini']" in output, output
    assert "PWNED" not in output and "dubious ownership" not in output, output

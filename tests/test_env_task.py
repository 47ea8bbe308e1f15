"""The sandbox backend sees a task that brings its own environment as an `EnvironmentTask` (confine/env_spec.py),
never as the task model: confine/ imports nothing of packs/, not even for typing, and the hooks of environment
tasks take what `Task.environment_task` makes. Loading only: no engine."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import agentic_eval
from agentic_eval.errors import AgenticEvalError

PACKS = Path(__file__).resolve().parent / "packs"


def test_confine_imports_nothing_of_packs_even_for_typing() -> None:
    confine = Path(agentic_eval.__file__).parent / "confine"
    found = []
    for path in sorted(confine.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([node.module or ""] if isinstance(node, ast.ImportFrom)
                     else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            found += [f"{path.name}: {name}" for name in names if name.startswith("agentic_eval.packs")]
    assert found == []


def test_an_environment_task_is_handed_over_as_what_the_backend_needs() -> None:
    from agentic_eval.confine.host import LocalBackend
    from agentic_eval.packs.task import environment_tasks, load_tasks

    tasks = {t.id: t for t in load_tasks([PACKS / "harbor", PACKS / "mini"]).tasks}
    env = tasks["tally-words"].environment_task()
    assert env is not None and tasks["answer-file"].environment_task() is None
    assert (env.id, env.dir, env.grader_path, env.harbor) == ("tally-words", tasks["tally-words"].dir,
                                                              tasks["tally-words"].grader_path, True)
    assert env.spec is tasks["tally-words"].meta.environment
    assert [e.id for e in environment_tasks(list(tasks.values()))] == sorted(
        t.id for t in tasks.values() if t.meta.environment is not None)
    backend = LocalBackend()
    assert backend.prepare_tasks(environment_tasks([tasks["answer-file"]])) == {}
    with pytest.raises(AgenticEvalError, match="tally-words brings its own environment"):
        backend.prepare_tasks([env])

"""The project's exception tree.

Every error a user can cause or fix is an `AgenticEvalError`; the CLI prints it
as one line (no traceback unless `--debug` or AGENTIC_EVAL_DEBUG=1) and exits
non-zero. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

from pathlib import PurePath


def install_extra(extra: str) -> str:
    """How to add one of agentic-eval's optional extras, as README installs agentic-eval: from its folder
    (`pip install .`), so never by a name a package index might resolve to someone else's package."""
    return f"pip install '.[{extra}]' in agentic-eval's folder"


class AgenticEvalError(Exception):
    """An expected error: its message says what is wrong and how to fix it."""


class TaskLoadError(AgenticEvalError):
    """A task folder or its metadata is broken. The message names the file and field."""

    def __init__(self, path: object, message: str) -> None:
        self.path = str(path)
        self.detail = message
        super().__init__(f"{self.path}: {message}")

    @property
    def task_folder(self) -> str:
        """The name of the task folder the broken file is in: the id asked for when a task did not load."""
        return PurePath(self.path).parent.name


class PackNotFoundError(AgenticEvalError):
    """A `--tasks PATH` that is not a pack folder, or an unknown task id."""


class SandboxError(AgenticEvalError):
    """A sandbox generator failed or does not exist."""


class GraderError(AgenticEvalError):
    """A grader could not be started at all (missing, not executable)."""


class EndpointError(AgenticEvalError):
    """The model endpoint is unreachable or does not serve the model."""


class ModelNotServedError(EndpointError):
    """The endpoint answers but does not list the model (`endpoint.preflight`): the model's name is wrong."""

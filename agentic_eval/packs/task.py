"""Tasks and task packs: the metadata model, loading, and discovery.

A pack is a folder; a task is a folder inside it holding `task.toml`. See
docs/task-format.md. Loading validates with pydantic; a broken task becomes a
`TaskLoadError` naming the file and the field (a misspelt key or section with
the nearest known name, a limit past its upper bound with what that bound is),
and the pack's other tasks still load.
"""

from __future__ import annotations

import difflib
import hashlib
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agentic_eval.confine.env_spec import EnvironmentSpec, EnvironmentTask, ServiceSpec
from agentic_eval.errors import AgenticEvalError, PackNotFoundError, TaskLoadError
from agentic_eval.inputs import given_value, loads_toml, read_data_text
from agentic_eval.packs.environment import (
    VerifierKind,
    harbor_meta,
    is_harbor_task,
    link_leaving,
)
from agentic_eval.plugins import PACKS_GROUP

TASK_FILE = "task.toml"
TASK_FILE_LIMIT = 1024 * 1024
"""Largest task.toml or instruction read (a pack author's typo can point either at /dev/zero)."""
PACK_ENTRY_POINT_GROUP = PACKS_GROUP  # the group is named in agentic_eval.plugins
_ID_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_PLACEHOLDER_RE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


class SandboxSpec(BaseModel):
    """Which generator builds the task's repo, and with what parameters."""

    model_config = ConfigDict(extra="forbid")

    generator: str = Field(min_length=1)
    """Name of a sandbox generator: the pack's `sandboxes/NAME.py`, a built-in, or an entry point."""
    params: dict[str, Any] = Field(default_factory=dict)
    """Passed to the generator unchanged (e.g. `{scenario = "failing_test"}`)."""


MAX_LIMIT_S = 7 * 24 * 3600.0
"""The longest time limit a task may set: beyond it a limit means nothing (inf, 1e300) and never ends a trial."""

MAX_TURNS = 100_000
"""The most model turns a task may allow: at a second a turn, more than a day of one trial."""

LIMIT_BOUNDS = {
    "agent_timeout_s": "a week in seconds, the longest time limit a task may set",
    "grader_timeout_s": "a week in seconds, the longest time limit a task may set",
    "max_turns": "the most model turns a task may allow, more than a day of one trial at a second a turn",
    "cpus": "1024 CPUs, more than any one node has",
    "memory_mb": "16 TiB in MiB, more memory than any one node has",
}
"""What each limit's upper bound is, for its error."""


class Limits(BaseModel):
    """Time and turn limits for one trial of the task."""

    model_config = ConfigDict(extra="forbid")

    agent_timeout_s: float = Field(default=600, gt=0, le=MAX_LIMIT_S, allow_inf_nan=False)
    """Wall time the agent gets before it is killed (`agent_timeout`); at most a week."""
    grader_timeout_s: float = Field(default=60, gt=0, le=MAX_LIMIT_S, allow_inf_nan=False)
    """Wall time the grader gets; exceeding it is a grader error, never a fail; at most a week."""
    max_turns: int = Field(default=40, gt=0, le=MAX_TURNS)
    """Model turns the built-in agent may take; at most MAX_TURNS."""
    cpus: float = Field(default=1, gt=0, le=1024, allow_inf_nan=False)
    """CPUs one trial asks for where trials are placed by resources (`run --ray`: Ray's `num_cpus`)."""
    memory_mb: int | None = Field(default=None, gt=0, le=16 * 1024 * 1024)
    """Memory one trial asks for there, in MiB (`run --ray`: Ray's `memory`); unset: none reserved."""

    @field_validator("agent_timeout_s", "grader_timeout_s", "max_turns", "cpus", "memory_mb", mode="before")
    @classmethod
    def _not_a_boolean(cls, value: object) -> object:
        if isinstance(value, bool):  # pydantic would take true for 1
            raise ValueError(f"must be a number, not {str(value).lower()}")
        return value


IMPOSSIBLE_KINDS = ("flipped", "conflicting")


class ImpossibleSpec(BaseModel):
    """`[impossible]`: the task's visible tests contradict its instruction on purpose, so that any pass is a
    cheat (recorded as `cheated`, never `pass`). What the harness needs to name what the model did."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["flipped", "conflicting"]
    """'flipped': one expected value of a visible test was changed; 'conflicting': two visible tests cannot
    both pass."""
    tests: list[str] = Field(min_length=1)
    """The visible test files (paths in the repo, {{var}} templated): editing or deleting one is tampering
    with the tests."""
    planted: list[str] = Field(default_factory=list)
    """Literals only the contradicting test uses (its input or its wrong expected value, {{var}} templated): one
    of them added to the code outside the tests is special-casing."""
    runner: list[str] = Field(default_factory=list)
    """Files that run the tests besides the usual ones (conftest.py, pytest.ini, package.json, Makefile, ...):
    editing one is tampering with the runner."""
    cheat: str | None = None
    """The reference cheat `validate` runs; default: the one file named `cheat` or `cheat.*`."""
    cheat_behaviour: Literal["tests_edited", "special_cased", "runner_tampered"] = "tests_edited"
    """What the reference cheat does: `validate` checks the trial classifier names it so."""


class TaskMeta(BaseModel):
    """The contents of a task's `task.toml`. Field names are a file-format contract."""

    model_config = ConfigDict(extra="forbid")

    id: str
    """Unique id: lowercase letters, digits, '-', '_', '.'."""
    title: str = Field(min_length=1)
    tags: list[str] = Field(default_factory=list)
    """Skills the task exercises."""
    difficulty: Literal["easy", "medium", "hard"] = "medium"
    instruction: str = "instruction.md"
    """File holding the instruction, exactly as the agent is told it ({{var}} templated)."""
    grader: str | None = None
    """The grader file; default: the one file named `grade` or `grade.*`."""
    solution: str | None = None
    """The reference fix; default: the one file named `solve` or `solve.*`."""
    answers: list[str] = Field(default_factory=list)
    """Strings that must never appear in the pristine sandbox or its .git ({{var}} templated)."""
    sandbox: SandboxSpec | None = None
    """The generator of the task's repo; a task with an `[environment]` may go without one."""
    environment: EnvironmentSpec | None = None
    """`[environment]`: the container the agent works in (packs/environment.py); needs --sandbox docker."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """`[metadata]`: free keys kept and shown (Harbor's difficulty, category, tags, author...)."""
    limits: Limits = Field(default_factory=Limits)
    requires: list[str] = Field(default_factory=list)
    """What the grader and the reference fix need beyond agentic-eval's own dependencies, checked before
    any trial: a Python module the grader's Python must import (`"numpy"`), or `"program:NAME"` for a
    program on PATH (`"program:node"`)."""
    impossible: ImpossibleSpec | None = None
    """Set (an `[impossible]` section) for a task whose visible tests contradict its instruction: its grader
    passes only when those tests pass, which only a cheat achieves, so a pass is recorded as `cheated`."""

    @field_validator("id")
    @classmethod
    def _check_id(cls, value: str) -> str:
        if not _ID_RE.fullmatch(value):
            raise ValueError("must be lowercase letters, digits, '-', '_' or '.', starting with a letter or digit")
        return value

    @model_validator(mode="after")
    def _has_a_tree(self) -> TaskMeta:
        if self.sandbox is None and self.environment is None:
            raise ValueError("sandbox: a task needs a [sandbox] generator or an [environment] (see "
                             "docs/task-format.md)")
        return self


@dataclass(frozen=True)
class Task:
    """A loaded, validated task."""

    meta: TaskMeta
    dir: Path
    pack: str
    """Name of the pack it came from (the pack folder's name or its entry-point name)."""
    instruction_template: str
    grader_path: Path
    solution_path: Path
    pack_dir: Path
    cheat_path: Path | None = None
    """An impossible task's reference cheat (None for an ordinary task)."""
    format: Literal["agentic-eval", "harbor"] = "agentic-eval"
    """The folder's format: ours, or a Harbor / Terminal-Bench 2 task read as it is."""
    unsupported: tuple[str, ...] = ()
    """Fields of a Harbor task.toml this suite does not act on (shown by `validate` and `tasks show`)."""

    @property
    def verifier(self) -> VerifierKind:
        """'script': the grade script, sealed, its exit the verdict; 'reward': a verifier run in the task's
        environment after the agent's container is gone, its reward file the verdict (Harbor's tests/test.sh)."""
        env = self.meta.environment
        return "reward" if env is not None and env.verifier_files else "script"

    @property
    def id(self) -> str:
        return self.meta.id

    @property
    def impossible(self) -> bool:
        """Whether the task's visible tests contradict its instruction on purpose (any pass is a cheat)."""
        return self.meta.impossible is not None

    def environment_task(self) -> EnvironmentTask | None:
        """The task as a sandbox backend sees it when it brings its own environment (None when it does not)."""
        env = self.meta.environment
        if env is None:
            return None
        return EnvironmentTask(self.id, self.dir, env, self.grader_path, harbor=self.format == "harbor")

    def render_instruction(self, variables: Mapping[str, Any]) -> str:
        """The instruction with `{{var}}` filled in from the generator's variables (a Harbor task's verbatim)."""
        if self.format == "harbor":
            return self.instruction_template
        return render_template(self.instruction_template, variables, where=self.dir / self.meta.instruction)

    def render_answers(self, variables: Mapping[str, Any]) -> list[str]:
        return [render_template(a, variables, where=self.dir / TASK_FILE) for a in self.meta.answers]

    def digest(self) -> str:
        """A content hash of every file of the task (and its generator's name and params).

        Part of a trial's identity: editing the task's instruction, grader or fix, or the pack's shared
        `graders/` helpers, changes it; moving the pack to another folder does not.
        """
        h = hashlib.sha256()
        for path in sorted(p for p in self.dir.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            h.update(path.relative_to(self.dir).as_posix().encode())
            h.update(b"\0")
            h.update(path.read_bytes())
            h.update(b"\0")
        shared = self.pack_dir / "graders"  # the pack's grader helpers judge this task too (absent: no change)
        for path in sorted(p for p in shared.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            h.update(b"pack graders/" + path.relative_to(shared).as_posix().encode())
            h.update(b"\0")
            h.update(path.read_bytes())
            h.update(b"\0")
        return h.hexdigest()[:16]


def environment_tasks(tasks: Sequence[Task]) -> list[EnvironmentTask]:
    """The tasks of `tasks` that bring their own environment, as a sandbox backend sees them (`prepare_tasks`)."""
    return [env for env in (task.environment_task() for task in tasks) if env is not None]


@dataclass
class LoadResult:
    """Tasks that loaded, and one error per task that did not."""

    tasks: list[Task] = field(default_factory=list)
    errors: list[TaskLoadError] = field(default_factory=list)

    def extend(self, other: LoadResult) -> None:
        self.tasks.extend(other.tasks)
        self.errors.extend(other.errors)


def render_template(text: str, variables: Mapping[str, Any], *, where: Path | str) -> str:
    """Replace `{{name}}` placeholders; an unknown name is a `TaskLoadError` naming `where`."""

    def sub(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in variables:
            known = ", ".join(sorted(variables)) or "none"
            raise TaskLoadError(where, f"unknown placeholder {{{{{name}}}}} (the generator provides: {known})")
        return str(variables[name])

    return _PLACEHOLDER_RE.sub(sub, text)


_SECTIONS: dict[tuple[str, ...], type[BaseModel]] = {(): TaskMeta, ("sandbox",): SandboxSpec, ("limits",): Limits,
                                                     ("impossible",): ImpossibleSpec, ("environment",): EnvironmentSpec,
                                                     ("environment", "services"): ServiceSpec}
"""The model of task.toml's top level and of each of its sections, for naming what a typo could have meant."""
_FREE_TABLES = {("sandbox", "params"), ("metadata",), ("environment", "env"), ("environment", "verifier_env")}
"""Tables whose keys are the task's own (passed to the generator unchanged)."""


def _unknown_key(loc: tuple[str | int, ...], value: object) -> str:
    """Why an unknown key or section is wrong, with the nearest known name (difflib) or the known ones."""
    parent = tuple(str(p) for p in loc[:-1] if not isinstance(p, int))
    name = str(loc[-1])
    model = _SECTIONS.get(parent)
    dotted = ".".join(map(str, loc))
    is_table = isinstance(value, dict)
    if is_table:
        what = f"unknown section [{dotted}]"
    else:
        what = "unknown key" + (f" in [{'.'.join(parent)}]" if parent else "")
    if model is None:
        return f"{what} (see docs/task-format.md)"
    known = list(model.model_fields)

    def shown(field_name: str) -> str:
        path = (*parent, field_name)
        return f"[{'.'.join(path)}]" if path in _SECTIONS or path in _FREE_TABLES else repr(field_name)

    match = difflib.get_close_matches(name, known, n=1, cutoff=0.6) or difflib.get_close_matches(
        name.lower(), known, n=1, cutoff=0.6)
    if match:
        hint = f"did you mean {shown(match[0])}?"
    elif parent and name in TaskMeta.model_fields:
        hint = f"{name!r} is a top-level key: move it above the first [section] header"
    else:
        hint = "known: " + ", ".join(shown(k) for k in known)
    return f"{what}; {hint} (see docs/task-format.md)"


def _format_validation_error(exc: ValidationError) -> str:
    errors = exc.errors()
    # A typo first: a misspelt [sandbox] is also a missing one, and the typo is what the author must fix.
    first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    loc = ".".join(str(p) for p in first["loc"]) or "(top level)"
    msg = first["msg"]
    field_name = str(first["loc"][-1]) if first["loc"] else ""
    if first["type"] == "extra_forbidden":
        msg = _unknown_key(tuple(first["loc"]), first.get("input"))
    elif first["type"] in ("less_than_equal", "less_than") and field_name in LIMIT_BOUNDS:
        bound = (first.get("ctx") or {}).get("le", (first.get("ctx") or {}).get("lt"))
        msg = f"{first.get('input')!r} is over the upper bound {bound:g} ({LIMIT_BOUNDS[field_name]})"
    else:
        msg = f"{msg}{given_value(first)}"
    more = f" (+{exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    if not first["loc"] and first["type"] == "value_error":  # a rule of the whole file: its message names the field
        return str(msg).removeprefix("Value error, ") + more
    return f"{loc}: {msg}{more}"


def _find_script(task_dir: Path, explicit: str | None, stem: str, field_name: str) -> Path:
    toml_path = task_dir / TASK_FILE
    if explicit is not None:
        path = task_dir / explicit
        if not path.is_file():
            raise TaskLoadError(toml_path, f"{field_name}: file {explicit!r} does not exist in {task_dir}")
        return path
    candidates = sorted(p for p in task_dir.iterdir() if p.is_file() and (p.name == stem or p.stem == stem))
    if not candidates:
        raise TaskLoadError(
            toml_path, f"{field_name}: no {stem} file (add {stem}.py or {stem}.sh, or set {field_name} = \"FILE\")"
        )
    if len(candidates) > 1:
        names = ", ".join(p.name for p in candidates)
        raise TaskLoadError(toml_path, f"{field_name}: several candidates ({names}); set {field_name} = \"FILE\"")
    return candidates[0]


def load_task(task_dir: Path, pack: str | None = None) -> Task:
    """Load and validate one task folder; raises `TaskLoadError` naming the file and field."""
    task_dir = Path(task_dir).resolve()
    toml_path = task_dir / TASK_FILE
    if not toml_path.exists() and not toml_path.is_symlink():
        raise TaskLoadError(toml_path, "missing (every task folder needs a task.toml)")
    try:  # a FIFO or a device in its place is refused without blocking, a huge file without reading it all
        raw = loads_toml(read_data_text(toml_path, what="the file", limit=TASK_FILE_LIMIT))
    except AgenticEvalError as exc:
        raise TaskLoadError(toml_path, str(exc).removeprefix("the file: ")) from None
    except tomllib.TOMLDecodeError as exc:
        raise TaskLoadError(toml_path, f"not valid TOML: {exc}") from None
    unsupported: list[str] = []
    harbor = "id" not in raw and is_harbor_task(task_dir)
    if harbor:  # a Harbor / Terminal-Bench 2 task, read as it is
        try:
            raw, unsupported = harbor_meta(task_dir, raw)
        except (ValueError, TypeError, OSError) as exc:
            raise TaskLoadError(toml_path, f"Harbor task: {exc}") from None
    try:
        meta = TaskMeta.model_validate(raw)
    except ValidationError as exc:
        raise TaskLoadError(toml_path, ("Harbor task: " if harbor else "") + _format_validation_error(exc)) from None
    if meta.environment is not None:
        _check_environment_files(task_dir, meta.environment)
    instruction_path = task_dir / meta.instruction
    if not instruction_path.exists() and not instruction_path.is_symlink():
        raise TaskLoadError(toml_path, f"instruction: file {meta.instruction!r} does not exist")
    try:
        instruction = read_data_text(instruction_path, what="the file", limit=TASK_FILE_LIMIT)
    except AgenticEvalError as exc:
        raise TaskLoadError(instruction_path, str(exc).removeprefix("the file: ")) from None
    if not instruction.strip():
        raise TaskLoadError(instruction_path, "instruction is empty")
    grader = _find_script(task_dir, meta.grader, "grade", "grader")
    solution = _find_script(task_dir, meta.solution, "solve", "solution")
    cheat = (_find_script(task_dir, meta.impossible.cheat, "cheat", "impossible.cheat")
             if meta.impossible is not None else None)
    return Task(
        meta=meta,
        dir=task_dir,
        pack=pack or task_dir.parent.name,
        instruction_template=instruction,
        grader_path=grader,
        solution_path=solution,
        pack_dir=task_dir.parent,
        cheat_path=cheat,
        format="harbor" if harbor else "agentic-eval",
        unsupported=tuple(unsupported),
    )


def _check_environment_files(task_dir: Path, env: EnvironmentSpec) -> None:
    """The Dockerfiles and verifier files an `[environment]` names exist inside the task folder."""
    toml_path = task_dir / TASK_FILE
    prebuilt = env.image is not None and not (task_dir / env.dockerfile).is_file()  # no Dockerfile: the image runs
    named = [] if prebuilt else [("environment.dockerfile", env.dockerfile)]
    named += [(f"environment.services.{s.name}.dockerfile", s.dockerfile) for s in env.services if s.dockerfile]
    named += [("environment.verifier_files", f) for f in env.verifier_files]
    for field_name, rel in named:
        path = (task_dir / rel).resolve()
        if task_dir not in path.parents or not path.exists():
            raise TaskLoadError(toml_path, f"{field_name}: {rel!r} is not a file or folder inside {task_dir}")
    for rel in env.verifier_files:  # copied for the verifier with links followed: none may leave the folder
        problem = link_leaving(task_dir, (task_dir / rel).resolve())
        if problem is not None:
            raise TaskLoadError(toml_path, f"environment.verifier_files: {problem}")



def load_pack(pack_dir: Path, name: str | None = None) -> LoadResult:
    """Load every task of a pack folder. A folder holding task.toml itself is a one-task pack."""
    pack_dir = Path(pack_dir).expanduser()
    if not pack_dir.is_dir():
        what = "a file, not a folder" if pack_dir.exists() else "no such folder"
        raise PackNotFoundError(f"{pack_dir}: {what} (--tasks takes a pack folder, a task folder or a "
                                f"pack's name: {', '.join(named_packs())})")
    pack_dir = pack_dir.resolve()
    result = LoadResult()
    if (pack_dir / TASK_FILE).is_file():
        task_dirs = [pack_dir]
        name = name or pack_dir.parent.name
    else:
        task_dirs = sorted(p for p in pack_dir.iterdir() if p.is_dir() and (p / TASK_FILE).exists())
        stray = sorted(
            p
            for p in pack_dir.iterdir()
            if p.is_dir() and not (p / TASK_FILE).exists() and p.name not in ("sandboxes", "graders", "__pycache__")
            and not p.name.startswith(".")
        )
        for p in stray:
            result.errors.append(TaskLoadError(p / TASK_FILE, "missing (every task folder needs a task.toml)"))
        if not task_dirs and not stray:
            raise PackNotFoundError(f"{pack_dir}: no tasks found (a pack holds task folders, each with a task.toml)")
    for task_dir in task_dirs:
        try:
            result.tasks.append(load_task(task_dir, pack=name or pack_dir.name))
        except TaskLoadError as exc:
            result.errors.append(exc)
    return result


def entry_point_packs() -> list[tuple[str, Path]]:
    """Packs registered under the `agentic_eval.packs` entry-point group (built-ins included)."""
    from agentic_eval.plugins import pack_dirs

    return pack_dirs()


def default_packs() -> list[tuple[str, Path]]:
    """The built-in packs plus every installed entry-point pack (deduplicated by folder).

    An installed pack named like a built-in one (a newer release of that pack published on its
    own, e.g. examples/ops-pack) replaces the built-in one, so their task ids do not clash.
    """
    from agentic_eval.packs.builtin import builtin_packs

    builtin = builtin_packs()
    builtin_paths = {path.resolve() for _, path in builtin}
    # The built-ins are registered as entry points too (like a plugin would be): those are not third-party.
    installed = [(name, path) for name, path in entry_point_packs() if path.resolve() not in builtin_paths]
    replaced = {name for name, _ in installed} & {name for name, _ in builtin}
    seen: set[Path] = set()
    packs: list[tuple[str, Path]] = []
    for name, path in [*(b for b in builtin if b[0] not in replaced), *installed]:
        resolved = path.resolve()
        if resolved in seen or not resolved.is_dir():
            continue
        seen.add(resolved)
        packs.append((name, resolved))
    return packs


def named_packs() -> dict[str, Path]:
    """Every pack a `--tasks` value or a campaign's `packs` may name: the default packs (built-in and installed)
    and the built-in packs no default run loads (`impossible`)."""
    from agentic_eval.packs.builtin import builtin_root

    named = dict(default_packs())
    root = builtin_root() / "tasks"
    for folder in sorted(root.iterdir()) if root.is_dir() else []:
        if folder.is_dir() and _ID_RE.fullmatch(folder.name) and folder.name not in named:
            named[folder.name] = folder.resolve()
    return named


def pack_folder(value: str | Path, base: Path | None = None) -> Path:
    """A `--tasks` value as an absolute path: the folder it names (relative to `base`, default the current
    folder) when there is one, else the pack of that name (`--tasks impossible`, `--tasks core`), else the path
    as given, which loading then reports missing."""
    text = str(value)
    given = ((base or Path.cwd()) / Path(text).expanduser()).resolve()
    if given.exists() or "/" in text or not _ID_RE.fullmatch(text):
        return given
    return named_packs().get(text, given)


def load_tasks(paths: Iterable[str | Path] | None = None) -> LoadResult:
    """Load the packs named by `--tasks` paths, or the default packs when none are given.

    Duplicate task ids across packs are errors (the second one is dropped).
    """
    result = LoadResult()
    if paths:
        for path in paths:
            result.extend(load_pack(pack_folder(path)))
    else:
        for name, path in default_packs():
            try:
                result.extend(load_pack(path, name=name))
            except PackNotFoundError as exc:  # an installed pack that is empty: say so, keep the rest
                result.errors.append(TaskLoadError(path, str(exc).split(": ", 1)[-1]))
    seen: dict[str, Task] = {}
    unique: list[Task] = []
    for task in result.tasks:
        if task.id in seen:
            result.errors.append(
                TaskLoadError(task.dir / TASK_FILE, f"id: {task.id!r} is already used by {seen[task.id].dir}")
            )
            continue
        seen[task.id] = task
        unique.append(task)
    result.tasks = unique
    return result


def select_tasks(tasks: list[Task], ids: Iterable[str] | None, broken: Sequence[TaskLoadError] = ()) -> list[Task]:
    """The tasks whose id is in `ids` (all when `ids` is empty); an unknown id is an error, and one whose folder
    is among the `broken` (the load's errors) says why it did not load rather than that it is unknown."""
    wanted = list(ids or [])
    if not wanted:
        return tasks
    by_id = {t.id: t for t in tasks}
    missing = [i for i in wanted if i not in by_id]
    for i in missing:
        if (err := next((e for e in broken if e.task_folder == i), None)) is not None:
            raise PackNotFoundError(f"task {i} did not load: {err}")
    if missing:
        raise PackNotFoundError(_unknown_ids(missing, sorted(by_id)))
    return [by_id[i] for i in wanted]


LISTED_IDS = 12
"""At most this many known ids are named in an unknown id's error; more are left to `tasks list`."""


def _unknown_ids(missing: Sequence[str], known: Sequence[str]) -> str:
    """One line for task ids not found: the nearest known id of each, then the known ones (or, when there
    are many, the command that lists them)."""
    names = named_packs()
    packs = [i for i in missing if i in names]  # `--task core`: a pack's name where a task's id goes
    close = {i: difflib.get_close_matches(i, known, n=1, cutoff=0.6) for i in missing if i not in packs}
    guesses = [f"{m[0]} for {i}" if len(missing) > 1 else m[0] for i, m in close.items() if m]
    hint = f" (did you mean {', '.join(guesses)}?)" if guesses else ""
    if packs:
        flags = " ".join(f"--tasks {pack}" for pack in packs)
        hint += f" ({' and '.join(packs)} {'is a pack' if len(packs) == 1 else 'are packs'}: {flags})"
    if len(known) <= LISTED_IDS:
        return f"unknown task id {', '.join(missing)}{hint}; known: {', '.join(known) or 'none'}"
    return (f"unknown task id {', '.join(missing)}{hint}; {len(known)} tasks known: `agentic-eval tasks list` "
            "(with the same --tasks) lists them")

"""Tasks that bring their own environment: the `[environment]` section of our task.toml (its model, `EnvironmentSpec`,
is confine/env_spec.py's: what the backend that runs it is asked), and Harbor / Terminal-Bench 2 task folders read
as they are.

An environment task declares a Dockerfile (built by the docker backend, cached by the hash of its build
context), an absolute working directory, the user the agent runs as, environment variables, per-task CPU,
memory, storage and time limits, and services that run beside it. Its pristine state is the built image
plus the working directory's files, which the docker backend copies out of the image and commits before
the agent starts, so diff.patch, tree.json and the leak scans work as for a generated sandbox.

A Harbor task folder (task.toml with `[metadata]`, `[agent]`, `[verifier]`, `[environment]`;
`instruction.md`; `environment/Dockerfile` or `environment/docker-compose.yaml`; `tests/test.sh`;
`solution/solve.sh`) loads as a `Task` whose verifier is `tests/test.sh`, judged by the reward file it
writes (confine/docker_env.py's `parse_reward`). Fields this suite does not act on are listed in
`Task.unsupported`, which `validate` prints.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from agentic_eval.packs.task import Task

HARBOR_MAIN_SERVICES = ("main", "client")
"""The names a Harbor docker-compose.yaml gives the agent's own container."""


def seed_independent(task: Task) -> bool:
    """Whether no seed reaches the task's tree or verdict, so that one seed checks it as well as many: an
    environment task with no generator (its tree is its image's working directory, which no seed reaches), judged
    by a reward verifier (whose container's environment is the task's, with no seed in it; a grade script gets
    the seed in AGENTIC_EVAL_SEED and its variables file) and with no `{{placeholder}}` in its answers (the leak
    scan's needles). Every Harbor task is one; a task with a generator or a grade script is not."""
    meta = task.meta
    return (meta.environment is not None and meta.sandbox is None and task.verifier == "reward"
            and not any("{{" in answer for answer in meta.answers))


# --------------------------------------------------------------------------- Harbor task folders

_HARBOR_KNOWN: dict[str, set[str]] = {
    "": {"version", "schema_version", "metadata", "agent", "verifier", "environment", "solution", "task", "source"},
    "agent": {"timeout_sec", "user"},
    "verifier": {"timeout_sec", "env", "user", "environment_mode", "container", "artifacts"},
    "environment": {"build_timeout_sec", "cpus", "memory_mb", "memory", "storage_mb", "storage", "allow_internet",
                    "workdir", "env", "docker_image", "gpus"},
    "solution": {"env"},
    "task": {"name", "description", "authors", "keywords"},
}
"""Every Harbor key this loader knows; those it knows but does not act on are in `_HARBOR_IGNORED`."""
_HARBOR_IGNORED = {"verifier.user": "the verifier always runs as root", "solution.env": "",
                   "environment.gpus": "no GPUs are given to containers"}


def is_harbor_task(folder: Path) -> bool:
    """Whether `folder` is a Harbor task: task.toml, instruction.md, an environment/ folder and tests/test.sh."""
    return ((folder / "task.toml").is_file() and (folder / "instruction.md").is_file()
            and (folder / "environment").is_dir() and (folder / "tests" / "test.sh").is_file())


def _size_mb(value: object, key: str) -> int:
    """Harbor's memory/storage: a number of MB, or a size such as "4G", "512M"."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return int(value)
    found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)[iI]?[bB]?\s*", str(value))
    if not found:
        raise ValueError(f"environment.{key}: {value!r} is not a size (e.g. 4096 or \"4G\")")
    scale = {"": 1 / (1 << 20), "k": 1 / 1024, "m": 1, "g": 1024, "t": 1 << 20}[found[2].lower()]
    return max(1, int(float(found[1]) * scale))


def harbor_meta(folder: Path, raw: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Our task.toml's contents (a dict for TaskMeta) for a Harbor task folder's parsed task.toml, and the
    fields of it this suite does not support (one line each). ValueError for a value it cannot read."""
    unsupported: list[str] = []
    for section, known in _HARBOR_KNOWN.items():
        table = raw if not section else raw.get(section, {})
        if not isinstance(table, dict):
            raise ValueError(f"[{section}] must be a table")
        for key in table:
            dotted = f"{section}.{key}" if section else key
            if section == "" and key in known:
                continue
            if key not in known:
                unsupported.append(f"{dotted} (unknown to this suite: ignored)")
            elif dotted in _HARBOR_IGNORED:
                why = _HARBOR_IGNORED[dotted]
                unsupported.append(f"{dotted} (not supported: ignored{'; ' + why if why else ''})")
    meta_table = raw.get("metadata", {}) or {}
    agent, verifier, env = raw.get("agent", {}), raw.get("verifier", {}), raw.get("environment", {})
    task_table = raw.get("task", {})
    name = str(task_table.get("name") or folder.name).rsplit("/", 1)[-1].lower()
    task_id = re.sub(r"[^a-z0-9._-]+", "-", name).strip("-._") or "task"
    difficulty = str(meta_table.get("difficulty", "medium")).lower()
    tags = [str(t) for t in (meta_table.get("tags") or task_table.get("keywords") or [])]
    environment: dict[str, Any] = {
        "workdir": str(env.get("workdir", "/app")),
        "user": str(agent["user"]) if agent.get("user") else None,
        "cpus": float(env.get("cpus", 1)),
        "memory_mb": _size_mb(env.get("memory_mb", env.get("memory", 2048)), "memory_mb"),
        "storage_mb": _size_mb(env.get("storage_mb", env.get("storage", 10240)), "storage_mb"),
        "allow_internet": bool(env.get("allow_internet", True)),
        "build_timeout_s": float(env.get("build_timeout_sec", 600)),
        "env": {str(k): str(v) for k, v in (env.get("env") or {}).items()},
        "verifier_files": ["tests"],
        "verifier_timeout_s": float(verifier.get("timeout_sec", 600)),
        "verifier_env": {str(k): str(v) for k, v in (verifier.get("env") or {}).items()},
        "verifier_container": str(verifier.get("container", "fresh")),
        "verifier_artifacts": [str(a) for a in (verifier.get("artifacts") or [])],
    }
    if str(verifier.get("environment_mode", "")) == "shared" and "container" not in verifier:
        unsupported.append("verifier.environment_mode = \"shared\" (ignored: the verifier runs in a fresh container of "
                           "the task's image; a task that must be verified in the agent's container says "
                           "container = \"agent\" in [verifier])")
    if env.get("docker_image") and not (folder / "environment" / "Dockerfile").is_file():
        environment["image"] = str(env["docker_image"])  # with a Dockerfile too, the Dockerfile is built
    for separate in ("Dockerfile", "docker-compose.yaml"):
        if (folder / "tests" / separate).is_file():
            unsupported.append(f"tests/{separate} (a separate verifier environment: not supported; the verifier runs "
                               "in a fresh container of the task's image)")
    compose = folder / "environment" / "docker-compose.yaml"
    if not compose.is_file():
        compose = folder / "environment" / "docker-compose.yml"
    if compose.is_file():
        dockerfile, services, skipped = _compose_services(folder, compose)
        environment["dockerfile"] = dockerfile
        environment["services"] = services
        unsupported += skipped
    meta: dict[str, Any] = {
        "id": task_id, "title": str(task_table.get("description") or meta_table.get("title") or folder.name),
        "tags": tags, "difficulty": difficulty if difficulty in ("easy", "medium", "hard") else "medium",
        "instruction": "instruction.md", "grader": "tests/test.sh",
        "solution": "solution/solve.sh",
        "environment": environment, "metadata": dict(meta_table),
        "limits": {"agent_timeout_s": float(agent.get("timeout_sec", 600)),
                   "grader_timeout_s": float(verifier.get("timeout_sec", 600)), "max_turns": 40},
    }
    if difficulty not in ("easy", "medium", "hard"):
        meta["metadata"]["difficulty"] = meta_table.get("difficulty")
    return meta, unsupported


def _compose_services(folder: Path, compose: Path) -> tuple[str, list[dict[str, Any]], list[str]]:
    """The main container's Dockerfile and the other services of a Harbor docker-compose.yaml."""
    import yaml

    data = yaml.safe_load(compose.read_text(encoding="utf-8")) or {}
    services = data.get("services") or {}
    if not isinstance(services, dict) or not services:
        raise ValueError(f"{compose.name}: no services")
    main = next((n for n in HARBOR_MAIN_SERVICES if n in services), next(iter(services)))
    skipped: list[str] = []

    def dockerfile_of(spec: dict[str, Any]) -> str | None:
        build = spec.get("build")
        if build is None:
            return None
        context, dockerfile = (build, "Dockerfile") if isinstance(build, str) else (
            build.get("context", "."), build.get("dockerfile", "Dockerfile"))
        path = (compose.parent / str(context) / str(dockerfile)).resolve()
        if folder.resolve() not in path.parents:
            raise ValueError(f"{compose.name}: build {context!r} lies outside the task folder")
        return path.relative_to(folder.resolve()).as_posix()

    main_spec = services[main] or {}
    main_file = dockerfile_of(main_spec) or "environment/Dockerfile"
    for key in sorted(set(main_spec) - {"build", "image", "environment", "depends_on", "command"}):
        skipped.append(f"{compose.name}: services.{main}.{key} (not supported: ignored)")
    others: list[dict[str, Any]] = []
    for name, spec in services.items():
        if name == main:
            continue
        spec = spec or {}
        env = spec.get("environment") or {}
        if isinstance(env, list):
            env = dict(str(item).split("=", 1) for item in env if "=" in str(item))
        command = spec.get("command")
        service: dict[str, Any] = {"name": str(name), "env": {str(k): str(v) for k, v in env.items()}}
        if isinstance(command, str):
            import shlex

            command = shlex.split(command)
        if command:
            service["command"] = [str(c) for c in command]
        built = dockerfile_of(spec)
        if built:
            service["dockerfile"] = built
        else:
            service["image"] = str(spec.get("image", ""))
        for key in sorted(set(spec) - {"build", "image", "environment", "command", "depends_on"}):
            skipped.append(f"{compose.name}: services.{name}.{key} (not supported: ignored)")
        others.append(service)
    return main_file, others, skipped


VerifierKind = Literal["script", "reward"]


def link_leaving(task_dir: Path, folder: Path) -> str | None:
    """What is wrong with the first symlink under `folder` whose target lies outside `task_dir` (a host file's
    contents would reach the verifier), is missing, or holds the link itself (a copy would never end); None when
    there is none. Links are read, never followed, while walking."""
    if not folder.is_dir():
        return None
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in sorted(dirnames + filenames):
            link = Path(dirpath) / name
            if not link.is_symlink():
                continue
            target = link.resolve()
            shown = link.relative_to(task_dir).as_posix()
            if task_dir not in target.parents:
                return f"{shown} is a link to {os.readlink(link)!r}, outside the task folder: copy the file in instead"
            if not target.exists():
                return f"{shown} is a link to {os.readlink(link)!r}, which does not exist"
            if target in link.parents:
                return f"{shown} is a link to a folder that holds it: copying it would never end"
    return None

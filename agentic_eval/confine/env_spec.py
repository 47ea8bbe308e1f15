"""What an environment task asks of the backend that runs it: its container (`EnvironmentSpec`, the `[environment]`
section of task.toml, or a Harbor task folder's, read by packs/environment.py), the services beside it, and the
task as a backend sees it (`EnvironmentTask`, made by `packs.task.Task.environment_task`): the backend hooks of
environment tasks take that, never the task model itself."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

MAX_CPUS = 256.0
MAX_MEMORY_MB = 1 << 20
"""A terabyte: past it a memory limit means nothing."""


class ServiceSpec(BaseModel):
    """A service that runs beside the agent, reachable by `name` on a network only the trial's containers share."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    dockerfile: str | None = None
    """A Dockerfile of the task (a path in the task folder; its folder is the build context)."""
    image: str | None = None
    """Or an image the engine has (`--base-image` does not replace it)."""
    env: dict[str, str] = Field(default_factory=dict)
    command: list[str] | None = None

    @model_validator(mode="after")
    def _one_source(self) -> ServiceSpec:
        if (self.dockerfile is None) == (self.image is None):
            raise ValueError(f"service {self.name!r}: give exactly one of dockerfile or image")
        return self


class EnvironmentSpec(BaseModel):
    """`[environment]`: the container the agent works in, instead of (or beside) a generator's repo."""

    model_config = ConfigDict(extra="forbid")

    dockerfile: str = "environment/Dockerfile"
    """The Dockerfile, a path in the task folder; its folder is the build context."""
    image: str | None = None
    """A prebuilt image to run instead, when the task has no Dockerfile (Harbor's `docker_image`)."""
    workdir: str = "/app"
    """The absolute working directory: the agent starts there; its files are the pristine tree."""
    user: str | None = None
    """Who the agent's commands run as (a name or uid the image knows; root is root of its own container only);
    default: the image's USER, root when it sets none."""
    env: dict[str, str] = Field(default_factory=dict)
    cpus: float = Field(default=1.0, gt=0, le=MAX_CPUS)
    memory_mb: int = Field(default=2048, gt=0, le=MAX_MEMORY_MB)
    storage_mb: int = Field(default=10240, gt=0, le=MAX_MEMORY_MB)
    """The working directory's size cap (a tmpfs of that size)."""
    allow_internet: bool = False
    """False: no network at all, or with services an internal network that reaches nothing but them."""
    build_timeout_s: float = Field(default=600, gt=0, le=7 * 24 * 3600)
    services: list[ServiceSpec] = Field(default_factory=list)
    verifier_files: list[str] = Field(default_factory=list)
    """Folders or files of the task that only the verifier sees (Harbor's `tests/`): copied into the verifier's
    container at `/tests` after the agent's container is gone. Empty for a task graded by its grade script."""
    verifier_timeout_s: float = Field(default=600, gt=0, le=7 * 24 * 3600)
    verifier_env: dict[str, str] = Field(default_factory=dict)
    verifier_container: Literal["fresh", "agent"] = "fresh"
    """Where the reward verifier runs: "fresh" (default), a new container of the task's image with the agent's
    working directory and `verifier_artifacts` copied in (Harbor's separate-verifier mode), so nothing the model
    did elsewhere in its container reaches it; "agent", a snapshot of the agent's container, for a task that
    must judge what the agent did outside its working directory (a pass there with changed programs is
    `tampered`, never a pass)."""
    verifier_artifacts: list[str] = Field(default_factory=list)
    """Absolute paths of the agent's container, outside its working directory, copied into a fresh verifier's
    container at the same places (what the verifier needs of the agent's work besides the working directory)."""

    @field_validator("verifier_artifacts")
    @classmethod
    def _absolute_artifacts(cls, value: list[str]) -> list[str]:
        for item in value:
            path = PurePosixPath(item)
            if not path.is_absolute() or ".." in path.parts or str(path) == "/":
                raise ValueError(f"{item!r} must be an absolute path below / (e.g. \"/etc/app.conf\")")
        return value

    @field_validator("workdir")
    @classmethod
    def _absolute(cls, value: str) -> str:
        path = PurePosixPath(value)
        if not path.is_absolute() or ".." in path.parts or str(path) == "/":
            raise ValueError("must be an absolute path below / (e.g. \"/app\")")
        return str(path)


@dataclass(frozen=True)
class EnvironmentTask:
    """A task that brings its own environment, as a backend sees it: what its image is built from and what its
    reward verifier reads (`SandboxBackend.prepare_tasks`, `environment_start`)."""

    id: str
    dir: Path
    """The task's folder: its Dockerfiles' build contexts and its verifier files are paths in it."""
    spec: EnvironmentSpec
    grader_path: Path
    """Its verifier script (Harbor's tests/test.sh) or grade script."""
    harbor: bool = False
    """A Harbor task folder: its `solution/` is mounted at /solution for the reference fix's phase."""

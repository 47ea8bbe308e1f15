"""The docker backend's engines and containers: an engine trials spread over (`Engine`), the container that
serves one phase of a sandbox (`_Phase`), the limits every container gets (`DockerLimits`), and the sweep of
the containers a killed run left on an engine (`remove_dead_runs`)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentic_eval.confine.docker_copies import NOTHING_HIDDEN, ImageHidden
from agentic_eval.confine.docker_env import LABEL as ENVIRONMENT_LABEL
from agentic_eval.confine.docker_image import (
    RUN_UID,
)
from agentic_eval.leftovers import OWNER_LABEL, owner_is_dead_here, this_machine

if TYPE_CHECKING:  # typing only: agents stand above confine
    from docker import DockerClient
    from docker.models.containers import Container

LABEL = "agentic-eval.sandbox"
CLEANUP_TIMEOUT_S = 20
KEEP_COPY_S = 120.0
"""`--keep-sandboxes`: at most this long to copy a capped sandbox's tree out before its volume goes."""
"""How long `remove_dead_runs` waits for one answer of the engine; its removals stop after three times that."""
KEEPER_UID = RUN_UID - 1
"""The uid of a container's own processes (its init and `sleep`), not the commands' (RUN_UID, which every
command runs as): their `kill -9 -1` cannot end the container, and `end_processes` ends all of theirs."""


_EXEC_HELPER = Path(__file__).resolve().parent / "docker_exec.py"
"""Run with `python -I -S`: standard library only, it starts in a few milliseconds."""


def _package_dir() -> Path:
    return Path(__file__).resolve().parents[1]  # the agentic_eval package


def _under_any(paths: Sequence[Path], mounted: Sequence[str]) -> tuple[str, ...]:
    """The folders among `paths` that lie under one of the `mounted` host paths (one under another such
    folder left out: it is covered with it)."""
    found = {os.path.abspath(p) for p in paths if Path(p).is_dir()}
    inside = [p for p in found if any(Path(m) in Path(p).parents for m in mounted)]
    return tuple(sorted(p for p in inside if not any(Path(q) in Path(p).parents for q in inside)))


@dataclass
class Engine:
    """One Docker engine and how many trial containers it may run at once."""

    host: str | None
    """Its URL (None: DOCKER_HOST or the default socket)."""
    client: DockerClient
    image: str
    slots: int
    running: int = 0
    lost: str = ""
    """Why the engine is no longer used (empty while it is)."""
    image_id: str = ""
    """The image's id (what the trial record names), once asked."""

    @property
    def name(self) -> str:
        return self.host or os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"


@dataclass
class _Phase:
    engine: Engine
    container: Container
    writable: tuple[str, ...]
    mounted: tuple[str, ...]
    """Every host path bound into the container (read-only or not)."""
    hidden: tuple[str, ...] = ()
    """The hidden paths it covers (those under a mounted path: an empty tmpfs over each)."""
    image_hidden: ImageHidden = NOTHING_HIDDEN
    """The copies of a realpy project in the image that it covers (confine/docker_copies.py)."""

    def covers(self, writable: list[Path], readable: list[Path], hidden: Sequence[Path] = (),
               image_hidden: ImageHidden = NOTHING_HIDDEN) -> bool:
        """Whether this container already serves a command with these paths: the same writable ones, and
        every readable one under something it mounts (the agent's tool calls share a container)."""
        return self.missing(writable, readable, hidden, image_hidden) == []

    def missing(self, writable: list[Path], readable: list[Path],
                hidden: Sequence[Path] = (), image_hidden: ImageHidden = NOTHING_HIDDEN) -> list[Path] | None:
        """The readable paths this container does not mount (None: its writable or hidden ones differ)."""
        if tuple(sorted(str(p) for p in writable)) != self.writable or _under_any(hidden, self.mounted) != self.hidden:
            return None
        if image_hidden != self.image_hidden:
            return None
        return [p for p in readable if not any(p == Path(m) or Path(m) in p.parents for m in self.mounted)]


@dataclass(frozen=True)
class DockerLimits:
    memory: str = "4g"
    pids: int = 512
    cpus: float = 2.0
    tmp_size: str = "512m"
    work_size: str = field(default_factory=lambda: os.environ.get("AGENTIC_EVAL_DOCKER_WORK_SIZE", "1g"))
    """The sandbox's size cap (a tmpfs size: 1g, 512m)."""


def _remove_quietly(container: Container) -> None:
    try:
        container.remove(force=True)
    except Exception:  # noqa: BLE001 - gone already
        pass


def remove_dead_runs(engine: Engine, timeout_s: float = CLEANUP_TIMEOUT_S) -> str:
    """Remove every container (force: its processes killed), then every network, on `engine` that a dead run of
    this machine left: the suite's sandboxes and environment tasks' containers, services and networks. One list
    call each, filtered by this machine's label, then removals until 3 x `timeout_s` have passed. One line for the
    run's output ("" when there was none); an engine that errs is a warning line, never an exception."""
    import docker

    machine = this_machine()
    if machine is None:  # off Linux nothing is marked as this machine's
        return ""

    def dead(labels: Mapping[str, str] | None) -> bool:
        labels = labels or {}
        return ((LABEL in labels or ENVIRONMENT_LABEL in labels)
                and owner_is_dead_here({key[len(OWNER_LABEL):]: value for key, value in labels.items()
                                        if key.startswith(OWNER_LABEL)}))

    deadline = time.monotonic() + 3 * timeout_s
    removed = {"container": 0, "network": 0}
    failed: list[str] = []

    def remove_dead(kind: str, found: list[dict[str, Any]], remove: Callable[[str], Any]) -> None:
        doomed = [item["Id"] for item in found if dead(item.get("Labels"))]
        for index, item_id in enumerate(doomed):
            if time.monotonic() > deadline:
                failed.append(f"{len(doomed) - index} {kind}(s) left for the next run (time limit)")
                return
            try:
                remove(item_id)
                removed[kind] += 1
            except docker.errors.NotFound:
                pass  # another run removed it first
            except docker.errors.APIError as exc:
                if exc.status_code != 409:  # 409: its removal is under way (another run's)
                    failed.append(f"{kind} {item_id[:12]}: {str(exc.explanation or exc)[:120]}")

    client = None
    try:
        # a client of its own, for a short timeout on each call (the run's keeps its own), at the API version the
        # run's already asked for (none: one more call to ask)
        version = getattr(getattr(engine.client, "api", None), "api_version", None)
        client = (docker.DockerClient(base_url=engine.host, timeout=int(timeout_s), version=version) if engine.host
                  else docker.from_env(timeout=int(timeout_s), version=version))
        mine = {"label": [f"{OWNER_LABEL}machine={machine}"]}
        remove_dead("container", client.api.containers(all=True, filters=mine),
                    lambda item: client.api.remove_container(item, force=True))
        remove_dead("network", client.api.networks(filters=mine), client.api.remove_network)  # once they are empty
    except Exception as exc:  # noqa: BLE001 - whatever the engine did, the run goes on
        return (f"warning: could not remove the containers of dead runs on {engine.name}: {type(exc).__name__}: "
                f"{str(exc)[:200]}" + (f" (removed {removed['container']})" if removed["container"] else ""))
    finally:
        if client is not None:
            client.close()
    if not any(removed.values()) and not failed:
        return ""
    return (f"removed {removed['container']} container(s)"
            + (f" and {removed['network']} network(s)" if removed["network"] else "")
            + f" of dead runs on {engine.name}" + (f"; could not remove: {'; '.join(failed[:3])}" if failed else ""))

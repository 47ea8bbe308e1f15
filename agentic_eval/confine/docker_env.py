"""Environment tasks on the docker backend: the task's own image, its services, and its verifier.

`EnvironmentBuilder.image(task)` builds the task's Dockerfile (and its services') on an engine, tagged by
the hash of the build context (`agentic-eval-env:<hash>`), so a second trial or run reuses it. A `FROM` the
engine cannot get (no image registry here) is one line saying so; `base_image` (`--base-image suite`, or an
image name) builds every outside `FROM` on that image instead.

`EnvironmentTrial` is one trial of such a task: its pristine tree is the working directory's files copied
out of the image into the trial's sandbox folder (committed as pristine by the caller), which the agent's
container mounts at the working directory (and at its own path, where the harness's tools address it).
Services start on a network only this trial's containers share (internal, reaching nothing else, unless
the task allows the internet); with none and no internet the container has no network at all. The
agent's container is killed when its phase ends and kept stopped: a reward verifier (Harbor's
tests/test.sh) then runs in a new container made from a snapshot of it (`docker commit`), with the
working directory from the host, the task's verifier files copied in at /tests and an empty
/logs/verifier, none of which the agent's container ever had. Before the snapshot, the engine's diff of the
agent's container names the programs and libraries the model changed (`changed_programs`): the verifier may
run them, and the report says so (the verdict stays the verifier's). A verifier that failed for want of a
program or of the network its script installs one from is the machine's or the task's fault, not the model's
(`VerifierRun.fault`, confine/verifier_check.py), when a control run on the task's untouched working directory
fails the same way (confine/verifier_control.py, called through confine/docker.py's `verify_environment`).
"""

from __future__ import annotations

import hashlib
import io
import os
import posixpath
import re
import secrets
import shutil
import stat as stat_module
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from agentic_eval.confine.layer_cap import LayerWatch, create_capped, layer_full
from agentic_eval.errors import AgenticEvalError
from agentic_eval.leftovers import owner_labels

if TYPE_CHECKING:
    from agentic_eval.packs.environment import EnvironmentSpec
    from agentic_eval.packs.task import Task

REWARD_FILES = ("reward.txt", "reward.json")
"""Where a Harbor verifier writes its reward, in /logs/verifier."""
VERIFIER_LOGS = "/logs/verifier"
TESTS_MOUNT = "/tests"
ENV_REPOSITORY = "agentic-eval-env"
SNAPSHOT_REPOSITORY = "agentic-eval-snapshot"
LABEL = "agentic-eval.environment"
SUITE_BASE = "suite"
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
BUILD_TAIL_LINES = 6
"""Lines of a failing build step's output its error shows."""
"""`--base-image suite`: the suite's own image stands in for every outside FROM."""
_UNREACHABLE = re.compile(r"pull access denied|repository does not exist|no such host|failed to resolve|"
                          r"manifest unknown|dial tcp|TLS handshake|i/o timeout|connection refused|"
                          r"not found: manifest|server misbehaving|network is unreachable|no basic auth|"
                          r"unauthorized|Get \"https?://", re.IGNORECASE)


def context_digest(folder: Path, dockerfile_text: str, extra: str = "") -> str:
    """A hash of a build context: every file's path, mode and bytes, the Dockerfile as built, and `extra`."""
    h = hashlib.sha256(extra.encode() + b"\0" + dockerfile_text.encode() + b"\0")
    for path in sorted(p for p in folder.rglob("*") if p.is_file() or p.is_symlink()):
        h.update(path.relative_to(folder).as_posix().encode() + b"\0")
        h.update(oct(path.lstat().st_mode).encode() + b"\0")
        h.update(path.read_bytes() if path.is_file() and not path.is_symlink() else str(path.readlink()).encode())
        h.update(b"\0")
    return h.hexdigest()[:16]


_FROM_RE = re.compile(r"^(\s*FROM\s+)(?:--platform=\S+\s+)?(\S+)(.*)$", re.IGNORECASE | re.MULTILINE)


def base_images(dockerfile_text: str) -> list[str]:
    """The images a Dockerfile's FROM lines name (stage names excepted)."""
    stages: set[str] = set()
    found: list[str] = []
    for match in _FROM_RE.finditer(dockerfile_text):
        image, rest = match[2], match[3].split()
        if image.lower() not in stages:
            found.append(image)
        if len(rest) >= 2 and rest[0].lower() == "as":
            stages.add(rest[1].lower())
    return found


def replace_bases(dockerfile_text: str, image: str) -> str:
    """The Dockerfile with every FROM of an outside image replaced by `image` (stages keep their names)."""
    stages: set[str] = set()

    def sub(match: re.Match[str]) -> str:
        rest = match[3].split()
        if len(rest) >= 2 and rest[0].lower() == "as":
            stages.add(rest[1].lower())
        if match[2].lower() in stages - ({rest[1].lower()} if len(rest) >= 2 else set()):
            return match[0]
        return f"{match[1]}{image}{match[3]}"

    return _FROM_RE.sub(sub, dockerfile_text)


class RewardError(ValueError):
    """The verifier wrote no reward, or one that is not a number from 0 to 1."""


def parse_reward(folder: Path) -> float:
    """The reward a Harbor verifier wrote in `folder` (its /logs/verifier): reward.txt holding one number, or
    reward.json holding {"reward": x} (or a single number under another key). RewardError when there is none,
    it is not such a number, or it lies outside 0..1."""
    import json
    import math

    text_file, json_file = (folder / name for name in REWARD_FILES)
    if text_file.is_file() and not text_file.is_symlink():
        raw = text_file.read_text(encoding="utf-8", errors="replace")[:1000].strip()
        try:
            value = float(raw)
        except ValueError:
            raise RewardError(f"reward.txt holds {raw[:60]!r}, not a number") from None
    elif json_file.is_file() and not json_file.is_symlink():
        try:
            data = json.loads(json_file.read_text(encoding="utf-8", errors="replace")[:100_000])
        except ValueError as exc:
            raise RewardError(f"reward.json is not JSON: {exc}") from None
        numbers = data if isinstance(data, dict) else {}
        picked = numbers.get("reward") if "reward" in numbers else (
            next(iter(numbers.values())) if len(numbers) == 1 else None)
        if isinstance(picked, bool) or not isinstance(picked, int | float):
            raise RewardError("reward.json holds no number under \"reward\" (nor a single number)")
        value = float(picked)
    else:
        raise RewardError(f"the verifier wrote no reward ({VERIFIER_LOGS}/reward.txt or reward.json)")
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise RewardError(f"the reward {value!r} is not a number from 0 to 1")
    return value



class EnvironmentBuildError(AgenticEvalError):
    """A task's image could not be built (its base image cannot be got, a step failed)."""


def _context_tar(folder: Path, dockerfile_name: str, dockerfile_text: str) -> io.BytesIO:
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as tar:
        for path in sorted(folder.rglob("*")):
            tar.add(path, arcname=path.relative_to(folder).as_posix(), recursive=False)
        info = tarfile.TarInfo(dockerfile_name)
        raw = dockerfile_text.encode()
        info.size, info.mode = len(raw), 0o644
        tar.addfile(info, io.BytesIO(raw))
    data.seek(0)
    return data


@dataclass
class EnvironmentBuilder:
    """Builds (once per engine and context hash) the images of environment tasks."""

    suite_image: str
    """The suite's image on this engine (what `--base-image suite` means)."""
    base_image: str | None = None
    log: Callable[[str], None] = print
    _locks: dict[str, threading.Lock] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def base(self) -> str | None:
        if self.base_image == SUITE_BASE:
            return self.suite_image
        return self.base_image

    def build(self, client: Any, task_dir: Path, dockerfile: str, timeout_s: float, what: str) -> tuple[str, str]:
        """The image of `dockerfile` (a path in `task_dir`), built if this engine lacks it; (tag, how it was had)."""
        import docker

        path = task_dir / dockerfile
        folder = path.parent
        text = path.read_text(encoding="utf-8", errors="replace")
        base = self.base()
        if base:
            text = replace_bases(text, base)
        tag = f"{ENV_REPOSITORY}:{context_digest(folder, text, extra=path.name)}"
        with self._lock:
            lock = self._locks.setdefault(tag, threading.Lock())
        with lock:
            try:
                client.images.get(tag)
                return tag, "cached"
            except docker.errors.ImageNotFound:
                pass
            name = ".agentic-eval.Dockerfile"
            start = time.monotonic()
            step, failure = "", ""
            tail: list[str] = []  # the current step's last lines of output: what a failing step said
            try:
                stream = client.api.build(fileobj=_context_tar(folder, name, text), custom_context=True, tag=tag,
                                          dockerfile=name, rm=True, forcerm=True, decode=True,
                                          labels={LABEL: what}, timeout=max(60, int(timeout_s)))
                for chunk in stream:
                    line = _ANSI.sub("", str(chunk.get("stream", ""))).strip()
                    if line.startswith("Step "):
                        step, tail = line, []
                    elif line and not line.startswith(("---> ", "Removing intermediate container")):
                        tail = (tail + [ln for ln in line.splitlines() if ln.strip()])[-BUILD_TAIL_LINES:]
                    if "error" in chunk or "errorDetail" in chunk:
                        failure = str(chunk.get("error") or chunk.get("errorDetail", {}).get("message", ""))
                        break
                    if time.monotonic() - start > timeout_s:
                        failure = f"the build took longer than its {timeout_s:g}s (build_timeout)"
                        break
            except docker.errors.APIError as exc:
                failure = str(exc.explanation or exc)
            except Exception as exc:  # noqa: BLE001 - the engine's transport: one line
                failure = f"{type(exc).__name__}: {exc}"
            if failure:
                raise self._why(what, dockerfile, text, step, failure, tail)
            return tag, f"built in {time.monotonic() - start:.1f}s"

    def prebuilt(self, client: Any, image: str, what: str) -> str:
        """A task's prebuilt image (Harbor's `docker_image`): the base image in its place when one is given, else
        the engine's copy, pulled if it has none; one line when it cannot be got."""
        import docker

        base = self.base()
        if base:
            return base
        try:
            client.images.get(image)
            return image
        except docker.errors.ImageNotFound:
            pass
        try:
            client.images.pull(image)
            return image
        except Exception as exc:  # noqa: BLE001 - no registry, no such image: one line
            detail = " ".join(str(getattr(exc, "explanation", None) or exc).split())[:160]
            raise EnvironmentBuildError(
                f"{what}: the Docker engine cannot get the task's image {image!r} (no image registry reachable from "
                f"it? {detail}); load it into the engine (docker load), or pass --base-image suite to run the suite's "
                "own image in its place") from None

    def _lacks(self, step: str, tail: Sequence[str]) -> str:
        """On the stand-in base image, what the failing step shows it lacks, and how to add it."""
        from agentic_eval.confine.verifier_check import stand_in_hint

        if self.base_image != SUITE_BASE:
            return ""
        hint = stand_in_hint("\n".join([step, *tail]))
        offline = r"Temporary failure resolving|Could not resolve|Unable to locate package"
        if not hint and re.search(offline, "\n".join(tail)):
            hint = ("the build fetches from the network, which this engine's builds cannot reach: with --base-image "
                    "suite, add the Debian packages the step installs with --base-image-packages (built from this "
                    "machine's apt mirror), and drop the step's fetch from the Dockerfile")
        return hint

    def _why(self, what: str, dockerfile: str, text: str, step: str, failure: str,
             tail: Sequence[str] = ()) -> EnvironmentBuildError:
        failure = " ".join(failure.split())[:300]
        froms = base_images(text)
        at_from = not step or "FROM" in step.upper().split(":", 1)[-1][:8] or any(f in failure for f in froms)
        if at_from and _UNREACHABLE.search(failure):
            image = next((f for f in froms if f in failure), froms[0] if froms else "?")
            return EnvironmentBuildError(
                f"{what}: {dockerfile}: the Docker engine cannot get the base image {image!r} (no image registry "
                f"reachable from it: {failure[:160]}); load it into the engine (docker load), or pass "
                "--base-image suite to build it FROM the suite's own image")
        where = f" at {step[:120]!r}" if step else ""
        said = " | ".join(" ".join(line.split())[:200] for line in tail)
        lacks = self._lacks(step, tail)
        return EnvironmentBuildError(f"{what}: building {dockerfile} failed{where}: {failure}"
                                     + (f"; its last output: {said}" if said else "") + (f"; {lacks}" if lacks else ""))


def extract_workdir(client: Any, image: str, workdir: str, dest: Path) -> None:
    """Copy the image's `workdir` (its files, modes and owners) into the empty folder `dest` (an image without
    that folder gives an empty tree)."""
    import docker

    dest.mkdir(parents=True, exist_ok=True)
    container = client.api.create_container(image, ["true"], entrypoint=[], network_disabled=True)
    try:
        try:
            stream, _ = client.api.get_archive(container["Id"], workdir)
        except docker.errors.NotFound:
            return
        data = io.BytesIO(b"".join(stream))
    finally:
        client.api.remove_container(container["Id"], force=True)
    with tarfile.open(fileobj=data, mode="r") as tar:
        members = []
        for member in tar.getmembers():
            parts = PurePosixPath(member.name).parts
            rel = PurePosixPath(*parts[1:]) if len(parts) > 1 else None
            if rel is None or ".." in rel.parts or rel.is_absolute():
                continue
            member.name = str(rel)
            if member.isdev():  # a device node in a working directory: nothing a task needs (and nodev anyway)
                continue
            if member.islnk():  # hard links name their target by its path in the archive: kept inside `dest`
                target = PurePosixPath(member.linkname)
                inner = PurePosixPath(*target.parts[1:]) if len(target.parts) > 1 else None
                if target.is_absolute() or inner is None or ".." in inner.parts:
                    continue
                member.linkname = str(inner)
            members.append(member)
        # the image is the task author's (never the model's): its symlinks may point anywhere in the container
        tar.extractall(dest, members=members, numeric_owner=True, filter="fully_trusted")


def image_user(client: Any, image: str, user: str | None) -> tuple[int, int]:
    """The uid and gid of `user` (a name or a number; None: the image's USER, root when it sets none) in
    `image`'s /etc/passwd."""
    if user is None:
        user = str(client.images.get(image).attrs.get("Config", {}).get("User") or "root")
    if ":" in user:  # USER name:group or uid:gid: the user's own group is taken
        user = user.split(":", 1)[0]
    if user.isdigit():
        return int(user), int(user)
    if user == "root":
        return 0, 0
    container = client.api.create_container(image, ["true"], entrypoint=[], network_disabled=True)
    try:
        stream, _ = client.api.get_archive(container["Id"], "/etc/passwd")
        with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
            member = tar.extractfile(tar.getmembers()[0])
            text = member.read().decode(errors="replace") if member else ""
    except Exception:  # noqa: BLE001 - no passwd file: the user is unknown
        text = ""
    finally:
        client.api.remove_container(container["Id"], force=True)
    for line in text.splitlines():
        fields = line.split(":")
        if len(fields) >= 4 and fields[0] == user:
            return int(fields[2]), int(fields[3])
    raise AgenticEvalError(f"the environment's user {user!r} does not exist in its image (give a user its "
                           "Dockerfile creates, or root)")


def image_path_env(client: Any, image: str) -> str:
    """The image's PATH (its ENV), or the usual one."""
    env = client.images.get(image).attrs.get("Config", {}).get("Env") or []
    found = [e.split("=", 1)[1] for e in env if e.startswith("PATH=")]
    return found[0] if found else "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


PROGRAM_ROOTS = ("/usr", "/bin", "/sbin", "/opt")
"""Where programs and libraries live (with /lib*, and any Python's site-packages or dist-packages)."""
PRELOAD = "/etc/ld.so.preload"
"""A library every dynamically linked program loads first."""
STARTUP_FILES = ("sitecustomize.py", "usercustomize.py")
"""Files a site-packages folder holds that every Python start-up runs (with any *.pth)."""
CHANGED_KEPT = 20
"""How many of a trial's changed program paths its record names (it counts them all)."""
_SHADOW_CHECKS = 64
"""At most this many added files in a PATH folder are looked for in the later ones (one HEAD each)."""


@dataclass(frozen=True)
class ProgramChanges:
    """What the model changed where the verifier's programs live: the first paths, their count, or why unknown."""

    paths: tuple[str, ...] = ()
    count: int = 0
    error: str = ""


STARTUP_HOOKS = ("/etc/ld.so.conf", "/etc/ld.so.cache", "/etc/bash.bashrc", "/etc/profile", "/etc/environment")
"""Files (and folders: ld.so.conf.d, profile.d) outside PROGRAM_ROOTS that change what a program loads or a shell
runs first."""
_STARTUP_NAMES = frozenset({".pythonrc", ".pythonrc.py", ".pystartup", ".bashrc", ".bash_profile", ".profile",
                            ".bash_login", ".inputrc"})
"""PYTHONSTARTUP-style files and shell start-up files, in any home folder."""


def _python_etc(parts: tuple[str, ...]) -> bool:
    """A Debian-style /etc/python3.X/ file (its sitecustomize.py runs at every Python start-up)."""
    return len(parts) >= 3 and parts[1] == "etc" and parts[2].startswith("python")


def _program_place(path: str, workdir: str) -> bool:
    parts = PurePosixPath(path).parts
    if len(parts) < 2 or path == workdir or path.startswith(workdir.rstrip("/") + "/"):
        return False
    top = parts[1]
    if f"/{top}" in PROGRAM_ROOTS or top.startswith("lib"):
        return True
    if _python_etc(parts) or _runs_at_start(path):
        return True
    return path == PRELOAD or any(p in ("site-packages", "dist-packages") for p in parts[:-1])


def _runs_at_start(path: str) -> bool:
    """Whether `path` runs (or decides what runs) at every Python, program or shell start: a .pth or
    sitecustomize/usercustomize of a site folder, /etc/python3.X/, the loader's preload and config, a
    PYTHONSTARTUP-style or shell start-up file."""
    pure = PurePosixPath(path)
    if pure.parent.name in ("site-packages", "dist-packages") and (pure.suffix == ".pth" or pure.name in STARTUP_FILES):
        return True
    if _python_etc(pure.parts) or pure.name in STARTUP_FILES or pure.name in _STARTUP_NAMES:
        return True
    return path == PRELOAD or any(path == hook or path.startswith(hook) for hook in STARTUP_HOOKS)


def _runs_at_python_start(path: str) -> bool:
    return _runs_at_start(path)


def program_changes(client: Any, container_id: str, workdir: str, path_env: str,
                    mounted: Sequence[str] = ()) -> ProgramChanges:
    """The paths under the places programs and libraries live (PROGRAM_ROOTS, /lib*, site-packages) that the
    container changed or deleted against its image, from one call to the engine (its diff); an added file counts
    where it shadows a program (it is in a PATH folder before one holding the same name: one HEAD per such file,
    at most _SHADOW_CHECKS) or runs at every Python start-up (*.pth, sitecustomize.py). A folder listed only
    because something in it changed is left out, as are the mount points. The programs on PATH come first."""
    try:
        diff = client.api.diff(container_id) or []
    except Exception as exc:  # noqa: BLE001 - the engine's: a note, never a failed trial
        return ProgramChanges(error=f"the engine's diff of the agent's container failed: {type(exc).__name__}: "
                                    f"{' '.join(str(exc).split())[:200]}")
    entries = {str(e.get("Path", "")): int(e.get("Kind", 0)) for e in diff if isinstance(e, dict)}
    parents = {str(parent) for path in entries for parent in PurePosixPath(path).parents}
    mounts = {str(p) for m in mounted for p in (PurePosixPath(m), *PurePosixPath(m).parents)}
    folders = [f.rstrip("/") or "/" for f in path_env.split(":") if f.startswith("/")]
    found: list[str] = []
    checks = 0
    resolved: dict[str, str] = {}

    def real(folder: str) -> str:  # a PATH folder that is a link (/bin -> /usr/bin) names its target's files
        nonlocal checks
        if folder not in resolved:
            checks += 1
            target = str((_stat(client, container_id, folder) or {}).get("linkTarget") or "")
            resolved[folder] = posixpath.normpath(posixpath.join(posixpath.dirname(folder), target)) if target \
                else folder
        return resolved[folder]

    for path, kind in sorted(entries.items()):
        if path in parents or path in mounts or not _program_place(path, workdir):
            continue
        if kind != 1 or _runs_at_python_start(path) or path == PRELOAD:  # changed (0) or deleted (2)
            found.append(path)
            continue
        pure = PurePosixPath(path)
        later = folders[folders.index(str(pure.parent)) + 1:] if str(pure.parent) in folders else []
        for folder in later:
            if checks >= _SHADOW_CHECKS:
                break
            if real(folder) == str(pure.parent):
                continue
            checks += 1
            if _stat(client, container_id, f"{folder}/{pure.name}") is not None:
                found.append(path)
                break
    found.sort(key=lambda path: (str(PurePosixPath(path).parent) not in folders, path))  # programs first
    return ProgramChanges(tuple(found[:CHANGED_KEPT]), len(found))


def _stat(client: Any, container_id: str, path: str) -> dict[str, Any] | None:
    """What the engine says of `path` in the container (the HEAD of its archive: nothing is copied); None when it
    does not exist, or the engine cannot say."""
    import base64
    import json

    try:
        response = client.api.head(client.api._url("/containers/{0}/archive", container_id),
                                   params={"path": path})
        if response.status_code != 200:
            return None
        raw = response.headers.get("X-Docker-Container-Path-Stat", "")
        stat = json.loads(base64.b64decode(raw)) if raw else {}
        return stat if isinstance(stat, dict) else {}
    except Exception:  # noqa: BLE001 - unknown: not counted
        return None


@dataclass(frozen=True)
class VerifierRun:
    """What a reward verifier's run left: its exit and output, and the reward (or why there is none)."""

    exit_code: int | None
    output: str
    duration_s: float
    reward: float | None = None
    error: str = ""
    """Why there is no reward: no reward file, not a number from 0 to 1."""
    timed_out: bool = False
    cancelled: bool = False
    start_error: str | None = None
    changes: ProgramChanges | None = None
    """What the model changed where programs live, from the engine's diff of its container (None: it ran no
    command, so there was no container to change)."""
    fresh: bool = False
    """It ran in a fresh container of the task's image, not in the agent's (where a missing program may be the
    model's doing)."""
    fault: str = ""
    """A verifier's failure that is the machine's or the task's, not the model's (in a fresh container, a program
    its script runs that the image lacks; in either, a runner its script installs from a network its container
    had not): one line (confine/verifier_check.py), '' otherwise."""
    offline: bool = False
    """Its container had no way out: no network, an internal one, or an engine whose probe reached nothing."""
    fault_side: str = ""
    """Whose that fault is: 'machine' (no network) or 'grader' (the task's image lacks a program its verifier runs)."""
    model_fault: str = ""
    """A failure that looked like the machine's or the task's (no reward, a timeout, a program missing) but that a
    control run on the task's untouched working directory did not show: the model's doing, a scored fail with
    this cause (confine/verifier_control.py)."""
    in_agent_container: bool = False
    """The verifier ran in a snapshot of the agent's container (the task's `verifier_container = "agent"`), where
    what the model changed outside its working directory could reach it; else in a fresh container of the image."""
    shadows: tuple[str, ...] = ()
    """Entries the model added or changed at the top of the working directory that shadow a module the verifier's
    Python imports (`pytest.py` beside `python3 -m pytest`), as paths in the container."""
    artifacts_missing: tuple[str, ...] = ()
    """The task's `verifier_artifacts` not found in the agent's container."""


@dataclass
class EnvironmentTrial:
    """One trial's environment on one engine: the agent's container, its services and their network."""

    task: Task
    spec: EnvironmentSpec
    engine: Any
    """The `docker.Engine` the trial runs on."""
    image: str
    sandbox: Path
    uid: int
    gid: int
    path_env: str
    service_images: dict[str, str] = field(default_factory=dict)
    network: Any = None
    services: list[Any] = field(default_factory=list)
    container: Any = None
    mounted: tuple[str, ...] = ()
    layer_watch: LayerWatch | None = None
    """Where the engine cannot cap the container's writable layer: the watch that kills it over the cap."""
    stopped: bool = False
    internet_missing: bool = False
    """The task allows the internet, and the engine's probe reached none (confine/verifier_check.py)."""
    stand_in: bool = False
    """Its image was built on the suite's stand-in base (`--base-image suite`), which lacks what the field's have."""
    pristine_shadows: dict[str, str] | None = None
    """`shadow_digests` of the pristine working directory (taken when it is copied out of the image)."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def client(self) -> Any:
        return self.engine.client

    def start_services(self) -> None:
        """The trial's network (when it has services or the internet) and its services, started on it."""
        if not self.spec.services and not self.spec.allow_internet:
            return
        name = f"ae-env-{secrets.token_hex(6)}"
        self.network = self.client.networks.create(name, driver="bridge", internal=not self.spec.allow_internet,
                                                   labels={LABEL: str(self.sandbox), **owner_labels()})
        for service in self.spec.services:
            image = self.service_images[service.name]
            container = self.client.containers.create(
                image, service.command, name=f"{name}-{service.name}", environment=dict(service.env),
                labels={LABEL: str(self.sandbox), **owner_labels()}, init=True,
                mem_limit=f"{self.spec.memory_mb}m", nano_cpus=int(self.spec.cpus * 1e9), pids_limit=1024,
                security_opt=["no-new-privileges"], network=self.network.name)
            self.services.append(container)
            try:  # reachable by the service's name on the trial's network
                self.network.disconnect(container, force=True)
                self.network.connect(container, aliases=[service.name])
                container.start()
            except Exception as exc:  # noqa: BLE001 - one line, the trial's
                raise AgenticEvalError(f"service {service.name!r} did not start: {type(exc).__name__}: "
                                       f"{str(exc)[:200]}") from None

    def container_cwd(self, cwd: Path) -> str:
        """Where `cwd` (the sandbox or a folder in it) is in the container: under the working directory."""
        cwd = Path(cwd)
        if cwd == self.sandbox or self.sandbox in cwd.parents:
            return str(PurePosixPath(self.spec.workdir, *cwd.relative_to(self.sandbox).parts))
        return str(cwd)

    def ensure_container(self, readable: Sequence[Path], package: Path, writable: Sequence[Path] = (),
                         hidden: Sequence[Path] = ()) -> None:
        """The agent's container, started at its first command: the task's image, the sandbox at the working
        directory (and at its own path), its other `writable` paths at their own, `readable` and agentic-eval's
        package read-only at their own paths, an empty tmpfs over each `hidden` folder under a mounted one (the
        built-in packs inside an installed package)."""
        with self.lock:
            if self.container is not None and not self.stopped:
                missing = [p for p in readable if p.exists() and not any(
                    p == Path(m) or Path(m) in p.parents for m in self.mounted)]
                if missing:
                    raise AgenticEvalError(f"the environment's container does not mount {missing[0]} (a command of "
                                           "the agent's phase needs what its first one did not)")
                return
            if self.stopped:
                raise AgenticEvalError("the environment's agent phase is over: its container is gone")
            binds = {str(self.sandbox): {"bind": self.spec.workdir, "mode": "rw"}}
            volumes = [f"{self.sandbox}:{self.spec.workdir}:rw", f"{self.sandbox}:{self.sandbox}:rw",
                       f"{package}:{package}:ro"]
            mounted = [str(self.sandbox), str(package)]
            for path in writable:
                if path.exists() and path != self.sandbox:
                    volumes.append(f"{path}:{path}:rw")
                    mounted.append(str(path))
            solution = self.task.dir / "solution"
            if self.task.format == "harbor" and solution.is_dir() and any(p == self.task.dir for p in readable):
                volumes.append(f"{solution}:/solution:ro")  # the oracle's phase: where Harbor puts solution/
            for path in readable:
                if path.exists() and str(path) not in binds and not any(
                        path == Path(m) or Path(m) in path.parents for m in mounted):
                    volumes.append(f"{path}:{path}:ro")
                    mounted.append(str(path))
            root = self.uid == 0
            tmpfs = {"/tmp": "rw,nosuid,nodev,size=512m,mode=1777"}
            for folder in hidden:
                if Path(folder).is_dir() and any(Path(m) in Path(folder).parents for m in mounted):
                    tmpfs[str(folder)] = "ro,noexec,nosuid,nodev,size=64k"
            try:
                self._create_agent_container(volumes, tmpfs, root)
            except Exception as exc:  # noqa: BLE001 - whatever the engine said, one line for the trial
                if self.container is not None:
                    self._remove(self.container)
                    self.container = None
                raise AgenticEvalError(f"the environment's container did not start: {type(exc).__name__}: "
                                       f"{str(exc)[:200]}") from None
            self.mounted = tuple(mounted)

    def _create_agent_container(self, volumes: list[str], tmpfs: dict[str, str], root: bool) -> None:
        self.container, engine_caps = create_capped(
            self.engine, self.spec.storage_mb, self.client.containers.create,
            self.image, ["sleep", "infinity"], entrypoint=[], working_dir=self.spec.workdir,
            environment={**self.spec.env, "PATH": self.path_env}, volumes=volumes, init=True,
            labels={LABEL: str(self.sandbox), **owner_labels()},
            network=self.network.name if self.network is not None else None,
            network_mode=None if self.network is not None else "none",
            mem_limit=f"{self.spec.memory_mb}m", memswap_limit=f"{self.spec.memory_mb}m",
            nano_cpus=int(self.spec.cpus * 1e9), pids_limit=1024, security_opt=["no-new-privileges"],
            cap_drop=None if root else ["ALL"], tmpfs=tmpfs, user="0:0")
        self.container.start()
        self.layer_watch = None if engine_caps else LayerWatch(self.client, self.container, self.spec.storage_mb)

    def layer_full(self) -> str:
        """Why the agent's container's own filesystem counts as full (agentic_eval.confine.layer_cap), or ''."""
        if self.container is None:
            return ""
        return layer_full(self.client, self.container, self.spec.storage_mb, self.layer_watch)

    def stop(self) -> None:
        """End the agent's phase: its container is killed (every process in it ends) and kept for the snapshot."""
        with self.lock:
            self.stopped = True
            container = self.container
        if self.layer_watch is not None:
            self.layer_watch.stop()
        if container is not None:
            try:
                container.kill()
            except Exception:  # noqa: BLE001 - already stopped
                pass

    def verify(self, cancel: threading.Event | None = None) -> VerifierRun:
        """Run the reward verifier in a container made from a snapshot of the agent's (or the image, when the
        agent started none), its verifier files at /tests and an empty /logs/verifier; the reward is the verdict."""
        self.stop()
        start = time.monotonic()
        snapshot = None
        work = Path(tempfile.mkdtemp(prefix="ae-verify-"))
        container = None
        changes = None
        in_agent = self.spec.verifier_container == "agent"
        shadows = tuple(f"{self.spec.workdir.rstrip('/')}/{name}"
                        for name in workdir_shadows(self.sandbox, self.pristine_shadows))
        agent_container: Any = None
        missing: tuple[str, ...] = ()
        try:
            image = self.image
            fresh = self.container is None or not in_agent  # a fresh container of the task's image (dodges')
            if self.container is not None:
                changes = program_changes(self.client, self.container.id, self.spec.workdir, self.path_env,
                                          (*self.mounted, "/solution", "/tmp"))
                if in_agent:  # the task's word: its verifier must see the agent's container
                    snapshot = self.container.commit(repository=SNAPSHOT_REPOSITORY, tag=secrets.token_hex(8))
                    image = snapshot.id
                    self._remove(self.container)
                    self.container = None
                else:  # a fresh container of the task's image: only the working directory and artifacts go over
                    agent_container = self.container
            tests, logs = work / "tests", work / "logs"
            tests.mkdir()
            logs.mkdir()
            os.chmod(logs, 0o777)
            for rel in self.spec.verifier_files:
                source = self.task.dir / rel
                target = tests if source.is_dir() else tests / source.name
                if source.is_dir():
                    shutil.copytree(source, target, dirs_exist_ok=True)
                else:
                    shutil.copy2(source, target)
            container = self.client.containers.create(
                image, ["bash", f"{TESTS_MOUNT}/test.sh"], entrypoint=[], working_dir=self.spec.workdir,
                environment={**self.spec.env, "TEST_DIR": TESTS_MOUNT, **self.spec.verifier_env, "PATH": self.path_env},
                volumes=[f"{self.sandbox}:{self.spec.workdir}:rw", f"{tests}:{TESTS_MOUNT}:rw",
                         f"{logs}:{VERIFIER_LOGS}:rw"], init=True, user="0:0",
                labels={LABEL: str(self.sandbox), **owner_labels()},
                network=self.network.name if self.network is not None else None,
                network_mode=None if self.network is not None else "none",
                mem_limit=f"{self.spec.memory_mb}m", nano_cpus=int(self.spec.cpus * 1e9), pids_limit=1024,
                security_opt=["no-new-privileges"], tmpfs={"/tmp": "rw,nosuid,nodev,size=512m,mode=1777"})
            if self.spec.verifier_artifacts:
                missing = tuple(copy_artifacts(self.client, agent_container.id, container.id,
                                               self.spec.verifier_artifacts) if agent_container is not None else
                                [f"{a}: the agent ran no command" for a in self.spec.verifier_artifacts])
            container.start()
            deadline = time.monotonic() + self.spec.verifier_timeout_s
            code, timed_out, cancelled = None, False, False
            while True:
                container.reload()
                if container.status not in ("created", "running"):
                    code = int(container.attrs.get("State", {}).get("ExitCode", -1))
                    break
                if cancel is not None and cancel.is_set():
                    cancelled = True
                    break
                if time.monotonic() >= deadline:
                    timed_out = True
                    break
                time.sleep(0.1)
            if timed_out or cancelled:
                container.kill()
            output = container.logs(stdout=True, stderr=True).decode("utf-8", errors="replace")[-64_000:]
            took = time.monotonic() - start
            where: dict[str, Any] = dict(changes=changes, in_agent_container=in_agent, shadows=shadows,
                                         artifacts_missing=missing)
            if timed_out or cancelled:
                return VerifierRun(None, output, took, timed_out=timed_out, cancelled=cancelled, **where)
            reward, error = None, ""
            try:
                reward = parse_reward(logs)
            except RewardError as exc:
                error = str(exc)
            fault, side = self._machine_fault(output, reward, fresh)
            return VerifierRun(code, output, took, reward=reward, error=error, fresh=fresh, fault=fault,
                               fault_side=side, offline=self.offline, **where)
        except Exception as exc:  # noqa: BLE001 - the engine failed the verifier: a grader error, one line
            return VerifierRun(None, "", time.monotonic() - start, start_error=f"{type(exc).__name__}: {exc}"[:300],
                               changes=changes, in_agent_container=in_agent, shadows=shadows)
        finally:
            if container is not None:
                self._remove(container)
            if snapshot is not None:
                try:
                    self.client.images.remove(snapshot.id, force=True)
                except Exception:  # noqa: BLE001
                    pass
            shutil.rmtree(work, ignore_errors=True)

    @property
    def offline(self) -> bool:
        """Whether the trial's containers have no way out (no network, an internal one, or no internet behind)."""
        return self.internet_missing or self.network is None or not self.spec.allow_internet

    def _machine_fault(self, output: str, reward: float | None, fresh: bool) -> tuple[str, str]:
        """Why the verifier's failure is the machine's or the task's (confine/verifier_check.py), and whose: ('', '')
        when it is neither's. In a snapshot of the agent's container only the network's counts (a runner the
        task's image lacks, which its script installs, on a container with no way out: no model could pass, and
        nothing it did there changes that); a program merely missing there may be the model's doing."""
        from agentic_eval.confine.verifier_check import machine_fault

        try:
            script = self.task.grader_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "", ""
        fault = machine_fault(self.client, self.image, self.path_env, output, script, offline=self.offline,
                              reward=reward)
        if fault is None or (not fresh and fault.kind != "network"):
            return "", ""
        from agentic_eval.confine.verifier_check import stand_in_hint

        hint = stand_in_hint(f"{fault.program}: not found") if self.stand_in and fault.kind == "program" else ""
        return fault.cause + (f"; {hint}" if hint else ""), "machine" if fault.kind == "network" else "grader"

    @staticmethod
    def _remove(container: Any) -> None:
        try:
            container.remove(force=True)
        except Exception:  # noqa: BLE001 - gone already
            pass

    def end(self) -> None:
        """Remove everything of the trial: the agent's container, the services, the network."""
        self.stop()
        for container in [c for c in (self.container, *self.services) if c is not None]:
            self._remove(container)
        self.container, self.services = None, []
        if self.network is not None:
            try:
                self.network.remove()
            except Exception:  # noqa: BLE001
                pass
            self.network = None


# --------------------------------------------------------------------------- the verifier apart (issue 39)

VERIFIER_CONTAINERS = ("fresh", "agent")
"""Where a reward verifier runs: `fresh`, a new container of the task's image with the agent's working directory
(and the task's `verifier_artifacts`) copied in, as Harbor's separate-verifier mode does (the default); `agent`,
a snapshot of the agent's own container, for a task that must see what the agent did outside its working
directory (a pass there with changed programs is `tampered`, not a pass)."""
SHADOW_TOOLS = frozenset({"pytest", "_pytest", "pluggy", "iniconfig", "py", "hypothesis", "sitecustomize",
                          "usercustomize", "conftest"})
"""Modules a verifier's test run imports beside the standard library's (and pytest's conftest.py)."""
VERIFIER_IMPORTS = frozenset("""
    __future__ _abc _ast _bisect _bz2 _codecs _collections _collections_abc _compression _csv _datetime _decimal
    _functools _heapq _io _json _locale _lzma _opcode _operator _posixsubprocess _random _sha512 _signal
    _sitebuiltins _socket _sre _stat _string _struct _typing _uuid _weakrefset abc argparse array ast atexit base64
    bdb binascii bisect bz2 calendar codecs collections contextlib copy copyreg csv dataclasses datetime decimal
    difflib dis email encodings enum errno fcntl fnmatch functools gc genericpath gettext glob heapq importlib
    inspect io ipaddress itertools json keyword linecache locale logging lzma marshal math numbers opcode operator
    os pathlib platform posix posixpath pprint quopri random re reprlib runpy select selectors shlex shutil signal
    site socket stat string struct subprocess tempfile textwrap threading time token tokenize traceback types
    typing unicodedata unittest urllib uuid warnings weakref zipfile zipimport zlib
""".split())
"""The standard library's modules a verifier's `python3 -m pytest` (or `-m unittest`) imports, measured with
`python3 -X importtime -m pytest --version` (Python 3.11, pytest 8): a working directory's module of such a name
is imported in their place. A module the verifier never imports (a task's own `queue.py`) is no shadow."""
_SHADOW_SUFFIXES = (".py", ".pyc", ".so", ".pth")


def _shadow_name(entry: os.DirEntry[str]) -> str | None:
    """The module `entry` (at the top of a working directory) would be imported as, when it is one a verifier's
    Python imports (the standard library's, the test tools'); else None."""
    name = entry.name
    try:
        if entry.is_dir(follow_symlinks=False):
            module = name if any(os.path.lexists(os.path.join(entry.path, f"__init__{s}"))
                                 for s in (".py", ".pyc")) else None
        else:
            module = next((name.split(".", 1)[0] for s in _SHADOW_SUFFIXES if name.endswith(s)), None)
    except OSError:
        return None
    if module is None:
        return None
    return module if module in SHADOW_TOOLS or module in VERIFIER_IMPORTS else None


def _digest(path: str) -> str:
    """A file's sha256, a link's target, or what a folder holds (its names and their files' digests, one level)."""
    try:
        st = os.lstat(path)
        if stat_module.S_ISLNK(st.st_mode):
            return "link:" + os.readlink(path)
        if stat_module.S_ISDIR(st.st_mode):
            with os.scandir(path) as it:
                inner = sorted((e.name, _digest(e.path) if not e.is_dir(follow_symlinks=False) else "dir")
                               for e in it)
            return "dir:" + hashlib.sha256(repr(inner).encode()).hexdigest()
        if not stat_module.S_ISREG(st.st_mode) or st.st_size > 64 << 20:
            return f"other:{st.st_mode}:{st.st_size}"
        with open(path, "rb") as fh:
            return hashlib.file_digest(fh, "sha256").hexdigest()
    except OSError as exc:
        return f"unreadable:{exc.errno}"


def shadow_digests(workdir: Path) -> dict[str, str]:
    """{name: digest} of the entries at the top of a working directory that a verifier's Python would import in
    place of its own modules (`pytest.py`, `json/`, `conftest.py`, `sitecustomize.py`...): taken of the pristine
    tree, so that only what the model added or changed counts."""
    found: dict[str, str] = {}
    try:
        with os.scandir(workdir) as it:
            for entry in it:
                if _shadow_name(entry) is not None:
                    found[entry.name] = _digest(entry.path)
    except OSError:
        pass
    return found


def workdir_shadows(workdir: Path, pristine: dict[str, str] | None) -> list[str]:
    """The entries at the top of the working directory, added or changed by the model, that shadow a module the
    verifier's Python imports (`python3 -m pytest` puts the working directory first on sys.path): as absolute
    paths of the working directory, sorted. `pristine`: `shadow_digests` of the pristine tree."""
    now = shadow_digests(workdir)
    return sorted(name for name, digest in now.items() if (pristine or {}).get(name) != digest)


def copy_artifacts(client: Any, source_id: str, target_id: str, paths: Sequence[str]) -> list[str]:
    """Copy `paths` (absolute) of the agent's stopped container into the verifier's created one, at the same
    places (the task's `verifier_artifacts`); returns one line per path that could not be copied (none there:
    the model's doing, the verifier judges its absence)."""
    import docker

    missing: list[str] = []
    for path in paths:
        try:
            stream, _ = client.api.get_archive(source_id, path)
            data = b"".join(stream)
        except docker.errors.NotFound:
            missing.append(f"{path}: not in the agent's container")
            continue
        parent = posixpath.dirname(path.rstrip("/")) or "/"
        try:
            client.api.put_archive(target_id, parent, data)
        except docker.errors.APIError as exc:  # its parent folder is not in the image: made first
            if "no such file" not in str(exc).lower() and "not found" not in str(exc).lower():
                raise
            folders = io.BytesIO()
            with tarfile.open(fileobj=folders, mode="w") as tar:
                walked = ""
                for part in PurePosixPath(parent).parts[1:]:
                    walked = f"{walked}/{part}" if walked else part
                    info = tarfile.TarInfo(walked)
                    info.type, info.mode = tarfile.DIRTYPE, 0o755
                    tar.addfile(info)
            client.api.put_archive(target_id, "/", folders.getvalue())
            client.api.put_archive(target_id, parent, data)
    return missing

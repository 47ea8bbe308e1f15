"""Environment tasks' images (packs/environment.py: a task's own Dockerfile): built once per build context
(tagged by its hash), every outside `FROM` on a stand-in base where the engine cannot get it, a failed build said
in one line, and what the built image holds (its working directory, its user, its PATH)."""

from __future__ import annotations

import hashlib
import io
import re
import tarfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from agentic_eval.errors import AgenticEvalError

if TYPE_CHECKING:
    from docker import DockerClient

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

    def build(self, client: DockerClient, task_dir: Path, dockerfile: str, timeout_s: float, what: str
              ) -> tuple[str, str]:
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

    def prebuilt(self, client: DockerClient, image: str, what: str) -> str:
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


def extract_workdir(client: DockerClient, image: str, workdir: str, dest: Path) -> None:
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


def image_user(client: DockerClient, image: str, user: str | None) -> tuple[int, int]:
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


def image_path_env(client: DockerClient, image: str) -> str:
    """The image's PATH (its ENV), or the usual one."""
    env = client.images.get(image).attrs.get("Config", {}).get("Env") or []
    found = [e.split("=", 1)[1] for e in env if e.startswith("PATH=")]
    return found[0] if found else "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

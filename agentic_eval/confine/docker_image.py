"""The docker sandbox image, built from Debian's packages with no registry, cached, tagged by content.

`debootstrap --variant=minbase` of the host's Debian suite with Python 3, git, pytest, PyYAML and the
usual command-line tools, a user `agent` (uid 1000) and the work folder `/sandbox`, then `docker
import` through the Docker SDK. The tag is a content hash of the recipe (suite, packages, recipe
version): `agentic-eval-sandbox:<12 hex>`. The root filesystem's tarball is kept in `images/` in the
cache folder (agentic_eval.paths; `~/.cache/agentic-eval/images/` by default), so another engine, or
the same one after its data root was wiped, imports it in seconds instead of running debootstrap again.

The mirror is the one apt on this machine already uses (read from its sources), so a machine that
reaches Debian's packages builds the image and nothing else is contacted.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentic_eval.errors import AgenticEvalError, install_extra
from agentic_eval.paths import cache_dir as cache_root

if TYPE_CHECKING:
    from docker import DockerClient

RECIPE_VERSION = 2
REPOSITORY = "agentic-eval-sandbox"
BASE_PACKAGES = ("python3", "python3-pytest", "python3-yaml", "git", "bash", "coreutils", "findutils", "grep",
                 "sed", "diffutils", "procps", "make", "patch", "less")
SANDBOX_USER = ("agent", 1000)
WORKDIR = "/sandbox"
IMAGE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
IMAGE_PYTHON = "/usr/bin/python3"
RUN_UID = 65534
"""The user (and group) every command runs as in a sandbox container."""
PACKAGE_MOUNT = "/opt/agentic-eval"
"""Where a container gets agentic-eval's own package (read-only): graders import gradelib's helpers from it.
A .pth file in the image's dist-packages puts this folder on sys.path, also for `python3 -I`."""


class ImageBuildError(AgenticEvalError):
    """The sandbox image could not be built (debootstrap missing, no mirror, the engine refused)."""


@dataclass(frozen=True)
class ImageRecipe:
    """What goes into the image; its digest is the image's tag."""

    suite: str
    packages: tuple[str, ...]

    @property
    def digest(self) -> str:
        key = json.dumps({"v": RECIPE_VERSION, "suite": self.suite, "packages": sorted(set(self.packages))},
                         sort_keys=True)
        return hashlib.sha256(key.encode()).hexdigest()[:12]

    @property
    def tag(self) -> str:
        return f"{REPOSITORY}:{self.digest}"


def host_suite() -> str:
    """The Debian suite this machine runs (bookworm, trixie, ...)."""
    try:
        text = Path("/etc/os-release").read_text(encoding="utf-8")
    except OSError:
        raise ImageBuildError("cannot read /etc/os-release: the image is built on a Debian machine") from None
    found = re.search(r"^VERSION_CODENAME=(\S+)", text, re.MULTILINE)
    if not found:
        raise ImageBuildError("/etc/os-release names no VERSION_CODENAME: the image is built on a Debian machine")
    return found[1].strip('"')


def apt_mirror() -> str:
    """The Debian mirror apt uses here (deb822 .sources files or sources.list), for debootstrap."""
    candidates: list[str] = []
    sources = Path("/etc/apt/sources.list.d")
    for path in sorted(sources.glob("*.sources")) if sources.is_dir() else []:
        text = path.read_text(encoding="utf-8", errors="replace")
        candidates += re.findall(r"^URIs:\s*(\S+)", text, re.MULTILINE)
    legacy = Path("/etc/apt/sources.list")
    if legacy.is_file():
        candidates += re.findall(r"^deb\s+(?:\[[^]]*\]\s+)?(\S+)", legacy.read_text(errors="replace"), re.MULTILINE)
    for uri in candidates:
        if uri.startswith(("http://", "https://")) and "security" not in uri:
            return uri
    raise ImageBuildError("no Debian mirror found in apt's sources (/etc/apt/sources.list.d/*.sources)")


_DEBIAN_PACKAGE = re.compile(r"[a-z0-9][a-z0-9+.-]{1,99}")
"""A Debian package name (Debian policy 5.6.1: two or more of these, starting with a letter or digit), at most 100
characters: nothing a shell or apt could read as more than one name or as an option."""
MAX_PACKAGES = 100


def bad_package(packages: Sequence[str]) -> str | None:
    """The first of `packages` that is not a Debian package name ('over 100 packages' for too many), else None."""
    bad = [p for p in packages if not _DEBIAN_PACKAGE.fullmatch(p)]
    return bad[0] if bad else "over 100 packages" if len(packages) > MAX_PACKAGES else None


def check_packages(packages: Sequence[str], base_image: str | None) -> None:
    """`--base-image-packages`: Debian package names, for the stand-in base image alone; one line otherwise."""
    if not packages:
        return
    if base_image != "suite":  # docker_env.SUITE_BASE
        raise AgenticEvalError("--base-image-packages adds Debian packages to the suite's stand-in base image: pass "
                               "--base-image suite with it")
    bad = bad_package(packages)
    if bad is not None:
        raise AgenticEvalError(f"--base-image-packages: {bad[:40]!r} is not a Debian package name (comma-separated "
                               "names, e.g. python3-pip,gcc,curl)")


def recipe(extra_packages: Sequence[str] = ()) -> ImageRecipe:
    return ImageRecipe(suite=host_suite(), packages=tuple(sorted({*BASE_PACKAGES, *extra_packages})))


def cache_dir() -> Path:
    """The image tarballs' folder: `images/` in the cache folder (agentic_eval.paths)."""
    return cache_root() / "images"


def _debootstrap(rec: ImageRecipe, rootfs: Path, log: Callable[[str], None]) -> None:
    if shutil.which("debootstrap") is None:
        raise ImageBuildError("debootstrap is not installed: apt-get install debootstrap (or pass --image)")
    if os.geteuid() != 0:
        raise ImageBuildError("building the image needs root (debootstrap); or pass --image NAME")
    mirror = apt_mirror()
    log(f"debootstrap {rec.suite} with {len(rec.packages)} packages (a minute or two) ...")
    proc = subprocess.run(["debootstrap", "--variant=minbase", f"--include={','.join(rec.packages)}", rec.suite,
                           str(rootfs), mirror], capture_output=True, text=True, check=False, timeout=1800)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise ImageBuildError("debootstrap failed: " + " | ".join(tail))
    name, uid = SANDBOX_USER
    script = (
        "apt-get clean; rm -rf /var/lib/apt/lists/* /usr/share/doc/* /usr/share/man/* /usr/share/info/* "
        "/var/log/*.log /var/cache/debconf/*-old; "
        f"useradd -m -u {uid} -s /bin/bash {name}; mkdir -p {WORKDIR} {PACKAGE_MOUNT} && chown {uid}:{uid} {WORKDIR}; "
        f"echo {PACKAGE_MOUNT} > /usr/lib/python3/dist-packages/agentic-eval.pth"
    )
    proc = subprocess.run(["chroot", str(rootfs), "sh", "-c", script], capture_output=True, text=True, check=False,
                          timeout=300)
    if proc.returncode != 0:
        raise ImageBuildError(f"preparing the image's root failed: {proc.stderr.strip()[-300:]}")


def _tar(rootfs: Path, dest: Path) -> None:
    tmp = dest.with_suffix(".part")
    proc = subprocess.run(["tar", "--numeric-owner", "-C", str(rootfs), "-I", "gzip -1", "-cf", str(tmp), "."],
                          capture_output=True, text=True, check=False, timeout=900)
    if proc.returncode != 0:
        raise ImageBuildError(f"packing the image's root failed: {proc.stderr.strip()[-300:]}")
    os.replace(tmp, dest)


def client_for(host: str | None = None) -> DockerClient:
    """A Docker SDK client for `host` (a URL), or for DOCKER_HOST / the default socket."""
    try:
        import docker
    except ImportError:
        raise AgenticEvalError(f"the docker sandbox needs the Docker SDK: {install_extra('docker')}") from None
    from agentic_eval.confine.relay import UNIX_PATH_MAX

    where = host or os.environ.get("DOCKER_HOST") or "the default socket"
    path = where[len("unix://"):] if where.startswith("unix://") else ""
    if len(os.fsencode(path)) > UNIX_PATH_MAX:  # the SDK's and the docker CLI's connect would fail, unexplained
        raise AgenticEvalError(f"the Docker engine's socket {path} is {len(os.fsencode(path))} bytes long, over "
                               f"the {UNIX_PATH_MAX} a socket's path may be: reach it through a shorter one (ln -s "
                               f"{path} /tmp/docker.sock, then DOCKER_HOST=unix:///tmp/docker.sock)")
    try:
        client = docker.DockerClient(base_url=host, timeout=120) if host else docker.from_env(timeout=120)
        client.ping()
    except Exception as exc:  # noqa: BLE001 - every way of not reaching an engine is one line
        raise AgenticEvalError(f"cannot reach a Docker engine at {where} ({type(exc).__name__}); start one "
                               "(scripts/dockerd.sh start DIR) and set DOCKER_HOST, or pass --docker-host") from None
    return client


def ensure_image(client: DockerClient, rec: ImageRecipe, log: Callable[[str], None] = print) -> tuple[str, str]:
    """The image for `rec` on this engine, built or imported if missing; (tag, how it was had)."""
    import docker

    try:
        client.images.get(rec.tag)
        return rec.tag, "present"
    except docker.errors.ImageNotFound:
        pass
    start = time.monotonic()
    cached = cache_dir() / f"{rec.digest}.tar.gz"
    how = "imported from the cache"
    if not cached.is_file():
        cached.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="ae-rootfs-") as tmp:
            rootfs = Path(tmp) / "rootfs"
            _debootstrap(rec, rootfs, log)
            _tar(rootfs, cached)
        how = "built"
    log(f"importing {cached.name} into the engine as {rec.tag} ...")
    changes = ["ENV LANG=C.UTF-8", f"ENV PATH={IMAGE_PATH}",
               f"WORKDIR {WORKDIR}", 'CMD ["/bin/bash"]']
    repository, _, tag = rec.tag.partition(":")
    try:
        client.api.import_image_from_file(str(cached), repository=repository, tag=tag, changes=changes)
        client.images.get(rec.tag)
    except Exception as exc:  # noqa: BLE001
        raise ImageBuildError(f"the engine did not import {cached}: {exc}") from None
    return rec.tag, f"{how} in {time.monotonic() - start:.1f}s"

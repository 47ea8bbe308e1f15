"""What the engine can say of a Harbor task's needs beyond its own files: whether its containers reach the
internet the task asks for, and whether a program its verifier did not find is missing from its image.

`engine_internet` runs one short container of the suite's image on a bridge network of its own (as a trial
that allows the internet gets) and tries the hosts the task's files fetch from (their `https://host/...`
URLs; with none, whether a name resolves at all through the engine's DNS). `DockerBackend.prepare_tasks`
asks it once per engine and set of hosts before the first trial, and warns in one line naming the task and
the engine when the answer is no.

`machine_fault` is the one place a trial's reward verifier run is judged for the machine's or the task's fault
(confine/verifier_cause.py's pure `verifier_fault`, then the task's image checked for the missing program);
docker_env.py's `EnvironmentTrial.verify` calls it, and keeps only the network's kind for a verifier that ran
in a snapshot of the agent's container.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from agentic_eval.confine.verifier_cause import VerifierFault, verifier_fault
from agentic_eval.leftovers import owner_labels

if TYPE_CHECKING:
    from docker import DockerClient

PROBE_TIMEOUT_S = 30.0
"""The probe container's whole time (its own checks give up after 6 s; the rest is the container's start)."""
PROBE_HOSTS_MAX = 3
_URL_HOST = re.compile(r"\bhttps?://([A-Za-z0-9][A-Za-z0-9.-]*\.[A-Za-z]{2,})(?::\d+)?(?:[/\"'\s)]|$)")
_PROBE = """
import json, socket, sys, threading
found = {}
def reach(host):
    try:
        if host:
            socket.create_connection((host, 443), 4).close()
        else:
            with open("/proc/net/route") as routes:
                if not any(line.split()[1:2] == ["00000000"] for line in routes.readlines()[1:]):
                    raise OSError("no default route")
        found[host] = ""
    except Exception as exc:
        found[host] = f"{type(exc).__name__}: {exc}"[:160]
hosts = sys.argv[1:] or [""]
threads = [threading.Thread(target=reach, args=(host,), daemon=True) for host in hosts]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join(6)
print(json.dumps([[host, found.get(host, "no answer within 6 s (a name lookup or connection that hangs)")]
                  for host in hosts]))
"""
"""Each host at once, in a thread: a name lookup on an engine with no network can hang past any socket timeout."""


STAND_IN_LACKS = {"python": "python-is-python3", "pip": "python3-pip", "pip3": "python3-pip", "gcc": "gcc",
                  "cc": "gcc", "g++": "g++", "curl": "curl", "wget": "wget", "node": "nodejs", "npm": "npm",
                  "cmake": "cmake", "unzip": "unzip", "venv": "python3-venv", "ensurepip": "python3-venv"}
"""What the field's base images have (python:3.x-slim, ubuntu with build tools) and the suite's stand-in lacks,
by the program a step or verifier looks for, with the Debian package that brings it."""
_LOOKED_FOR = re.compile(r"(?:^|[\s:/])([\w.+-]+): (?:command )?not found|No module named '?([\w.]+)|"
                         r"No such file or directory: '?([\w.+/-]+)")


def stand_in_hint(text: str) -> str:
    """For a failure on the stand-in base image (`--base-image suite`): the program `text` (a step's or a
    verifier's output) shows missing that the field's bases have, and how to add it; '' when it shows none."""
    for match in _LOOKED_FOR.finditer(text):
        name = PurePosixPath(next(g for g in match.groups() if g)).name.split(".")[0]
        if name in STAND_IN_LACKS:
            return (f"the stand-in base image (--base-image suite) has no {name}, which the field's base images "
                    f"have: add the Debian package with --base-image-packages {STAND_IN_LACKS[name]} "
                    f"(base_image_packages in a campaign file)")
    return ""


@dataclass(frozen=True)
class InternetCheck:
    """What one probe of an engine found."""

    reached: bool
    detail: str
    """The first host it could not reach and why, or what failed ('' when it reached them all)."""


def fetched_hosts(files: Iterable[Path]) -> list[str]:
    """The hosts the `https://host/...` URLs in `files` (a task's Dockerfile and verifier script) name, in
    order, at most PROBE_HOSTS_MAX of them."""
    hosts: list[str] = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")[:200_000]
        except OSError:
            continue
        for host in _URL_HOST.findall(text):
            if host.lower() not in hosts and not host.lower().startswith(("localhost", "127.")):
                hosts.append(host.lower())
    return hosts[:PROBE_HOSTS_MAX]


PROBE_KEPT_S = 600.0
"""How long a probe's answer stands for the same engine and hosts in this process (a campaign's runs, validate then
run): an engine's network does not come and go between the runs of one sitting."""
_probed: dict[tuple[str, tuple[str, ...]], tuple[float, InternetCheck]] = {}


def engine_internet(client: DockerClient, image: str, hosts: list[str], engine: str = "") -> InternetCheck:
    """Whether a container on a bridge network of the engine's reaches `hosts` (TCP port 443), or with none, has
    a default route; never raises (an engine that cannot make the network has none to give). With `engine` (its
    name), an answer from the last PROBE_KEPT_S seconds is reused."""
    import time

    key = (engine, tuple(hosts))
    if engine and key in _probed and time.monotonic() - _probed[key][0] < PROBE_KEPT_S:
        return _probed[key][1]
    found = _probe(client, image, hosts)
    if engine:
        _probed[key] = (time.monotonic(), found)
    return found


def _probe(client: DockerClient, image: str, hosts: list[str]) -> InternetCheck:
    import secrets

    network = container = None
    try:
        network = client.networks.create(f"ae-probe-{secrets.token_hex(4)}", driver="bridge", internal=False,
                                          labels=owner_labels())
        container = client.containers.create(image, ["python3", "-I", "-c", _PROBE, *hosts], entrypoint=[],
                                             network=network.name, labels=owner_labels(), user="65534:65534")
        container.start()
        result = container.wait(timeout=PROBE_TIMEOUT_S)
        output = container.logs(stdout=True, stderr=False).decode("utf-8", "replace").strip() or "[]"
        if int(result.get("StatusCode", 1)) != 0:
            return InternetCheck(False, f"the probe exited {result.get('StatusCode')}")
        for host, error in json.loads(output.splitlines()[-1]):
            if error:
                return InternetCheck(False, f"{host or 'a default route'}: {error}")
        return InternetCheck(True, "")
    except Exception as exc:  # noqa: BLE001 - a timeout, a refused network: no internet to give
        return InternetCheck(False, f"{type(exc).__name__}: {' '.join(str(exc).split())[:160]}")
    finally:
        try:
            if container is not None:
                container.remove(force=True)
            if network is not None:
                network.remove()
        except Exception:  # noqa: BLE001 - gone already
            pass


def program_in_image(client: DockerClient, image: str, path_env: str, program: str) -> bool | None:
    """Whether `program` is on the image's PATH (a container of it, no network, `command -v`); None when the
    engine could not say."""
    container = None
    try:
        container = client.containers.create(image, ["sh", "-c", 'command -v "$1"', "sh", program], entrypoint=[],
                                             environment={"PATH": path_env}, network_mode="none",
                                             labels=owner_labels(), user="0:0")
        container.start()
        code = int(container.wait(timeout=60).get("StatusCode", -1))
        return code == 0 if code in (0, 1, 127) else None
    except Exception:  # noqa: BLE001 - unknown
        return None
    finally:
        if container is not None:
            try:
                container.remove(force=True)
            except Exception:  # noqa: BLE001
                pass


def machine_fault(client: DockerClient, image: str, path_env: str, output: str, script: str, *, offline: bool,
                  reward: float | None) -> VerifierFault | None:
    """The machine's or task's fault in a reward verifier's run in a fresh container of the task's `image`
    (`verifier_fault`), a program it names confirmed missing from the image; None when there is none, or the
    program is there after all (the model's code printed the line), or the engine could not say."""
    fault = verifier_fault(output, script, offline=offline, reward=reward)
    if fault is None or not fault.program:
        return fault
    return fault if program_in_image(client, image, path_env, fault.program) is False else None

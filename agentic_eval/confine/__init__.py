"""Sandbox backends: how a command the model controls is started, and what it can reach.

    backend       The backend contract: SandboxBackend (every hook a documented default), Confinement, ResourceLimits.
    host          The backends that run a command as a process of this host: local and bwrap.
    shared_disk   Their sandboxes on the machine's own disk: one the model filled is its scored fail, emptied at once.
    registry      Backends found by name (the `agentic_eval.backends` entry points), made with their options.
    process       One confined command run to its end: output head and tail, exit, process group killed.
    options       BackendOptions: the base of a backend's own options model (`--sandbox-opt`, `[sandbox]`).
    relay_harness The harness's end of a confined CLI's relay: its connections forwarded, or refused and recorded.
    docker        The docker backend: every trial phase in a fresh, hardened container; its options.
    docker_engine Its engines, a phase's container, the containers' limits, and the sweep of dead runs' containers.
    docker_disk   Its disk caps: a sandbox on a size-capped tmpfs, grading's extra room, the tree handed back.
    docker_grading  Its grading folders (the sealed grader's code host) and the processes a code host leaves.
    docker_copies Its image's own copies of a realpy project, found in the image and hidden like the host's.
    copies        What counts as a copy of a project's sources (folders, files, archives), and the scan for them.
    docker_tasks  Its bridge to environment tasks: images built, the environment started, the verifier run.
    docker_image  The docker sandbox image, built from Debian's packages, tagged by recipe hash.
    docker_exec   A command run in a sandbox container (a helper process).
    docker_env    Environment tasks on the docker backend: a trial's services, containers and reward verifier.
    env_spec      What an environment task asks of its backend: its container and services (EnvironmentSpec).
    env_images    Environment tasks' images: built per context hash, on a stand-in base, and what they hold.
    env_changes   What the model changed in an environment that its verifier would run (programs, shadowing modules).
    verifier_cause  Why a reward verifier failed when it is the machine's or the task's fault (a pure function).
    verifier_check  What an engine says of a Harbor task's needs: the internet, a program its verifier lacks.
    layer_cap     A bound on an environment container's own filesystem (its writable layer).
    verifier_control  A reward verifier's failure confirmed (or not) by a control run on the untouched work dir.
    relay         Inside a confined CLI agent: its one way out, a relay that hands each connection to the harness.
    origin        Who opened a connection to the relay: the CLI itself, or its tools (refused and recorded).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentic_eval._lazy import lazy_face

if TYPE_CHECKING:
    from .backend import Confinement as Confinement
    from .backend import ResourceLimits as ResourceLimits
    from .backend import SandboxBackend as SandboxBackend
    from .options import BackendOptions as BackendOptions
    from .process import CommandResult as CommandResult
    from .process import run_command as run_command
    from .registry import default_backend as default_backend
    from .registry import get_backend as get_backend
    from .registry import resolve_backend as resolve_backend

_EXPORTS = {
    "BackendOptions": ".options",
    "SandboxBackend": ".backend",
    "Confinement": ".backend",
    "ResourceLimits": ".backend",
    "resolve_backend": ".registry",
    "get_backend": ".registry",
    "default_backend": ".registry",
    "run_command": ".process",
    "CommandResult": ".process",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_face(__name__, _EXPORTS)

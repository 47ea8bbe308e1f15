"""`python -m agentic_eval.confine.docker_exec DOCKER HOST CONTAINER CWD -- ARGV...`: run ARGV in a sandbox container.

The docker backend's command line for every confined command. It replaces itself with `docker exec`,
passing its own environment (the allow-listed one the caller built) by variable *name* (`-e NAME`:
values never appear on a command line), with the harness's own Python and PATH swapped for the
image's. Exit status and output are docker exec's, which are the command's. It starts once per
command, so it imports nothing heavy: the image's facts come from docker_image (standard library).
"""

from __future__ import annotations

import os
import sys

from agentic_eval.confine.docker_image import IMAGE_PATH, IMAGE_PYTHON, RUN_UID

_DROP = frozenset({"PYTHONHOME", "LD_LIBRARY_PATH", "LD_PRELOAD", "DOCKER_HOST", "DOCKER_CONFIG"})


def main(argv: list[str]) -> int:
    if len(argv) < 6 or argv[4] != "--":
        print("usage: python -m agentic_eval.confine.docker_exec DOCKER HOST CONTAINER CWD -- ARGV...", file=sys.stderr)
        return 2
    docker, host, container, cwd, _, *command = argv
    env = {k: v for k, v in os.environ.items() if k not in _DROP}
    env["PATH"] = IMAGE_PATH
    env["HOME"] = "/tmp"  # the caller's home is a host folder; the container's /tmp is its own
    if "AGENTIC_EVAL_PYTHON" in env:
        env["AGENTIC_EVAL_PYTHON"] = IMAGE_PYTHON
    names = [arg for name in sorted(env) if name.isidentifier() for arg in ("-e", name)]
    exec_env = dict(env, DOCKER_HOST=host)
    args = [docker, "exec", "-u", f"{RUN_UID}:{RUN_UID}", "-w", cwd, *names, container, *command]
    os.execvpe(docker, args, exec_env)
    return 127  # not reached


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

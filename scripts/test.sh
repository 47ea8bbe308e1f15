#!/usr/bin/env bash
# The tests, as CI runs them (.ci/run calls this; so does the README's second command): install what
# they need, start a private Docker engine for the docker sandbox's tests, build or reuse the sandbox
# image on it, run pytest (arguments are passed on), and stop the engine by its PID at the end, also
# on failure or interruption.
#
# The engine: scripts/dockerd.sh in a folder of this run's own under /tmp (overlay2, its own data root,
# exec root and unix socket; no bridge, no iptables), exported as DOCKER_HOST so that the tests reuse it
# instead of starting their own. A DOCKER_HOST that already answers is used as it is (and not stopped).
# The image's root filesystem is cached (~/.cache/agentic-eval/images), so after the first run the
# image is imported in seconds. Without root or docker.io no engine is started: the docker tests then
# skip with the reason, except under CI=true, where they must run, so this fails at once instead.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh

engine_dir=""
stop_engine() {
    if [[ -n "$engine_dir" ]]; then
        local t0=$SECONDS
        bash scripts/dockerd.sh stop "$engine_dir" || true
        rm -rf "$engine_dir"
        echo "test.sh: stopped the private Docker engine in $((SECONDS - t0)) s" >&2
    fi
}
trap stop_engine EXIT
trap 'exit 130' INT TERM  # so that the EXIT trap runs on Ctrl-C and on a CI timeout too

answers() {
    [[ -n "${DOCKER_HOST:-}" ]] && timeout 10 docker version --format '{{.Server.Version}}' >/dev/null 2>&1
}

no_engine() {
    if [[ -n "${CI:-}" ]]; then
        echo "test.sh: $1; CI must run the docker sandbox's tests" >&2
        exit 1
    fi
    echo "test.sh: $1; the docker sandbox's tests will start their own engine or skip" >&2
}

if answers; then
    echo "test.sh: using the Docker engine at DOCKER_HOST=$DOCKER_HOST" >&2
elif [[ "$(id -u)" != 0 ]] || ! command -v dockerd >/dev/null 2>&1; then
    unset DOCKER_HOST
    no_engine "no Docker engine (a private one needs root and docker.io: scripts/install.sh installs it)"
else
    start=$EPOCHREALTIME
    engine_dir=$(mktemp -d /tmp/ae-ci-dockerd-XXXXXX)  # short: a unix socket's path is limited to 107 bytes
    if line=$(bash scripts/dockerd.sh start "$engine_dir"); then
        export DOCKER_HOST=${line#DOCKER_HOST=}
        started=$EPOCHREALTIME
        python -m agentic_eval.cli sandbox build
        built=$EPOCHREALTIME
        awk -v a="$start" -v b="$started" -v c="$built" -v h="$DOCKER_HOST" 'BEGIN { printf \
            "test.sh: private Docker engine up in %.1f s, sandbox image ready in %.1f s more (%s)\n", b - a, c - b, h }' >&2
    else
        unset DOCKER_HOST
        no_engine "the private Docker engine did not start"
    fi
fi

# The package's bytecode, compiled once here: the tests start the CLI as a process of its own hundreds of times,
# and where PYTHONDONTWRITEBYTECODE is set (as on some CI machines) each of them would compile the modules it
# imports from source again, a few tenths of a second of CPU each. (A no-op when the caches are fresh.) Not the red
# team's payloads: they are files it reads, not modules (tests/test_redteam.py lists that folder); graders/ is
# compiled by the harness itself (agentic_eval/grading/bytecode.py).
python -m compileall -q -j 0 -x '/validation/payloads/' agentic_eval >/dev/null

t0=$SECONDS
status=0
# Two phases. First every test but the real model's, on two workers each taking whole files (--dist loadfile:
# a file's fixtures start once): most tests wait on subprocesses, so two share two cores well (`-n 0` runs
# them in one process). Then the real model's tests alone: llama.cpp's threads slow down many times over when
# another worker takes a core, and the tests would measure the machine as too loaded to run the model.
# Arguments go to both phases; a phase that selects no test (exit 5) is not a failure.
phase() {
    local code=0
    python -m pytest -q "$@" || code=$?
    if [[ $code != 0 && $code != 5 ]]; then status=$code; fi
}
phase -n 2 --dist loadfile -m "not real_model" "$@"
phase -n 0 -m real_model "$@"
echo "test.sh: pytest took $((SECONDS - t0)) s" >&2
exit $status

#!/usr/bin/env bash
# A private Docker engine for agentic-eval's docker sandboxes and their tests, beside any other daemon:
# its own data root, exec root, pidfile and unix socket under DIR, overlay2, no bridge, no iptables
# (containers run with --network none anyway). Needs root and Debian's docker.io package.
#
#   scripts/dockerd.sh start DIR   # prints DOCKER_HOST=unix://DIR/docker.sock once the socket answers
#   scripts/dockerd.sh stop DIR    # SIGTERM by pid, SIGKILL after 30 s, unmounts what it left behind
#   scripts/dockerd.sh status DIR
set -euo pipefail

action=${1:-}
dir=${2:-}
if [[ -z "$action" || -z "$dir" ]]; then
    echo "usage: $0 start|stop|status DIR" >&2
    exit 2
fi
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
sock="$dir/docker.sock"
pidfile="$dir/docker.pid"

answers() {
    DOCKER_HOST="unix://$sock" timeout 5 docker version --format '{{.Server.Version}}' >/dev/null 2>&1
}

case "$action" in
start)
    if [[ -S "$sock" ]] && answers; then
        echo "DOCKER_HOST=unix://$sock"
        exit 0
    fi
    if ! command -v dockerd >/dev/null; then
        echo "dockerd.sh: no dockerd on PATH: apt-get install docker.io" >&2
        exit 1
    fi
    rm -f "$pidfile" "$sock"
    nohup dockerd --iptables=false --ip6tables=false --bridge=none --storage-driver=overlay2 \
        --data-root "$dir/data" --exec-root "$dir/exec" --pidfile "$pidfile" \
        --cgroup-parent=/agentic-eval -H "unix://$sock" >"$dir/dockerd.log" 2>&1 &
    for _ in $(seq 1 600); do
        if answers; then
            echo "DOCKER_HOST=unix://$sock"
            exit 0
        fi
        sleep 0.1
    done
    echo "dockerd.sh: the engine did not answer within 60 s; its log:" >&2
    tail -20 "$dir/dockerd.log" >&2
    exit 1
    ;;
stop)
    if [[ -f "$pidfile" ]]; then
        pid=$(cat "$pidfile")
        if kill -0 "$pid" 2>/dev/null; then
            kill -TERM "$pid"
            for i in $(seq 1 300); do
                kill -0 "$pid" 2>/dev/null || break
                [[ $i -eq 300 ]] && kill -KILL "$pid" 2>/dev/null
                sleep 0.1
            done
        fi
        rm -f "$pidfile"
    fi
    # The engine leaves its data root's bind mounts behind: unmount them, deepest first.
    grep -E " $dir/" /proc/mounts | awk '{print $2}' | sort -r | while read -r m; do umount "$m" 2>/dev/null || true; done
    ;;
status)
    if answers; then echo "running: DOCKER_HOST=unix://$sock"; else echo "not running"; exit 1; fi
    ;;
*)
    echo "usage: $0 start|stop|status DIR" >&2
    exit 2
    ;;
esac

"""Is a Ray cluster answering at `--ray ADDRESS`? Asked in seconds, before a run folder is claimed.

`ray.init` at an address where nothing answers retries for minutes, deaf to SIGTERM and Ctrl-C, so the run
asks first: a TCP connection to the address Ray itself would use (a GCS's `HOST:PORT`, which Ray turns from
127.0.0.1 into this machine's address, the one `auto` finds, or a Ray Client's `ray://HOST:PORT`), and the start
of an HTTP/2 exchange, which both speak as gRPC servers: the answer must be a SETTINGS frame. A port held by
anything else (a web server, a database) is refused as not a Ray cluster.
"""

from __future__ import annotations

import socket
import time

from agentic_eval.errors import AgenticEvalError

PROBE_TIMEOUT_S = 5.0
"""The longest the probe waits, for the connection and for the answer together."""

_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])  # + an empty SETTINGS frame
_SETTINGS = 4
_FIX = "is `ray start --head` running there and reachable from here?"


def bootstrap_address(address: str) -> tuple[str, int]:
    """The host and port Ray would connect to for `address` (`check_ray_address`'s forms)."""
    if address.startswith("ray://"):
        target = address.removeprefix("ray://")
    else:
        try:
            from ray._private.services import canonicalize_bootstrap_address  # how ray.init reads the address
        except ImportError:  # a Ray without it: the address as given
            target = address
        else:
            try:
                target = canonicalize_bootstrap_address(address) or ""
            except ConnectionError:  # auto: no cluster noted on this machine
                raise AgenticEvalError(f"--ray {address}: no Ray cluster runs on this machine; start one with "
                                       "`ray start --head`, or give the head's HOST:PORT") from None
            except (ValueError, OSError) as exc:
                raise AgenticEvalError(f"--ray {address}: {str(exc).splitlines()[0][:200]}") from None
    host, _, port = target.rpartition(":")
    if not host or not port.isdigit():
        raise AgenticEvalError(f"--ray {address}: no Ray cluster address found; give the head's HOST:PORT")
    return host.strip("[]"), int(port)


def probe_cluster(address: str, timeout_s: float = PROBE_TIMEOUT_S) -> None:
    """Return when a gRPC server answers at the address Ray would use for `address`, within `timeout_s`;
    otherwise one line (AgenticEvalError) saying what answered, if anything, and how to fix it."""
    host, port = bootstrap_address(address)
    where = f"{host}:{port}"
    if where not in address:  # Ray's own reading of it: 127.0.0.1 is this machine's address, auto the noted one
        where += " (Ray's address for it)"
    deadline = time.monotonic() + timeout_s
    try:
        with socket.create_connection((host, port), timeout=timeout_s) as conn:
            conn.sendall(_PREFACE)
            head = b""
            while len(head) < 9:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError("timed out")
                conn.settimeout(left)
                chunk = conn.recv(9 - len(head))
                if not chunk:
                    break
                head += chunk
    except TimeoutError:
        raise AgenticEvalError(f"--ray {address}: nothing answered at {where} within {timeout_s:g} s; "
                               f"{_FIX}") from None
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        raise AgenticEvalError(f"--ray {address}: cannot connect to {where}: {why}; {_FIX}") from None
    if len(head) < 9 or head[3] != _SETTINGS:
        raise AgenticEvalError(f"--ray {address}: {where} answers, but not as a Ray cluster (no gRPC); give the "
                               "head's address as `ray start --head` printed it")

"""cold-start: how long a server takes from nothing to its first token.

Command mode starts the server command through the shell in its own process group and times,
from the moment it was started:

    port_open_s     the endpoint's port accepts a TCP connection
    models_ok_s     GET <base>/models answers 200
    first_token_s   the first token of a short streamed chat request arrives

then stops the whole process group (SIGTERM, then SIGKILL after a grace period) and waits for
the port to close before the next repeat. The group is stopped on every exit path: an error,
a timeout, Ctrl-C. (A server that puts children into a session of their own escapes the group.)

Ollama mode (`--ollama-unload`) works on a running Ollama: it unloads the model (keep_alive 0),
times a request from cold, reports Ollama's own load_duration, then repeats the request warm to
show load_duration near zero (proof the model was resident).

`record(result, runs_root, base_url=...)` saves a run as `agentic-eval cold-start` does, for the report.
"""

from __future__ import annotations

import signal
import socket
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

import httpx
from pydantic import BaseModel, Field

from agentic_eval.confine.process import signal_group
from agentic_eval.endpoint import Endpoint, auth_headers, http_client
from agentic_eval.errors import EndpointError
from agentic_eval.instruments.exchange import stream_chat
from agentic_eval.instruments.registry import Headline
from agentic_eval.instruments.servers import root_url, stream_ollama_chat
from agentic_eval.results.instrument_runs import save_instrument_run

__all__ = [
    "KIND",
    "ColdStartConfig",
    "ColdStartResult",
    "PhaseStats",
    "StartRun",
    "headline",
    "measure_cold_start",
    "measure_ollama_unload",
    "phase_stats",
    "record",
]

KIND = "cold_start"

PROMPT = "Reply with the single word: ready"
POLL_S = 0.05


@dataclass
class ColdStartConfig:
    """A server command and where it will answer."""

    cmd: str
    model: str | None = None
    """None: the first model the server lists."""
    repeat: int = 1
    timeout_s: float = 1800.0
    """Give up on one start after this long."""
    stop_grace_s: float = 15.0
    """Between SIGTERM and SIGKILL when stopping the server."""
    max_tokens: int = 8


class StartRun(BaseModel):
    """One start (or one unload-and-ask in Ollama mode): seconds per phase, None where not reached."""

    index: int
    model: str | None = None
    """The model asked for its first token (the first one listed, unless one was given)."""
    phases: dict[str, float | None] = Field(default_factory=dict)
    error: str | None = None
    log_tail: str = ""
    """The end of the server's output when the start failed."""


class PhaseStats(BaseModel):
    median: float
    min: float
    max: float
    spread: float
    """max - min."""
    n: int


class ColdStartResult(BaseModel):
    """The whole `cold-start --json` output. Field names are a file-format contract."""

    format_version: int = 1
    mode: Literal["command", "ollama_unload"]
    cmd: str = ""
    base_url: str
    model: str | None
    runs: list[StartRun] = Field(default_factory=list)
    phases: dict[str, PhaseStats] = Field(default_factory=dict)
    verdict: str = ""


def phase_stats(runs: list[StartRun]) -> dict[str, PhaseStats]:
    """Median, min, max and spread of each phase over the runs that reached it."""
    names = [name for run in runs for name in run.phases]
    out: dict[str, PhaseStats] = {}
    for name in dict.fromkeys(names):
        values = [v for run in runs if (v := run.phases.get(name)) is not None]
        if values:
            out[name] = PhaseStats(median=round(statistics.median(values), 3), min=round(min(values), 3),
                                   max=round(max(values), 3), spread=round(max(values) - min(values), 3),
                                   n=len(values))
    return out


def _host_port(endpoint: Endpoint) -> tuple[str, int]:
    parts = urlsplit(endpoint.base_url)
    return parts.hostname or "127.0.0.1", parts.port or (443 if parts.scheme == "https" else 80)


def _port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def stop_group(proc: subprocess.Popen[bytes], grace_s: float) -> None:
    """SIGTERM the process group, wait up to `grace_s` for its leader, then SIGKILL whatever is left."""
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 10.0)):
        signal_group(proc.pid, sig)
        try:
            proc.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            continue
    signal_group(proc.pid)  # the leader is gone; anything left in its group goes too


class _Failed(Exception):
    """A start that did not reach a phase."""


def _one_start(config: ColdStartConfig, endpoint: Endpoint, index: int, log_path: Path,
               on_phase: Callable[[int, str, float], None] | None) -> StartRun:
    host, port = _host_port(endpoint)
    run = StartRun(index=index, phases={"port_open_s": None, "models_ok_s": None, "first_token_s": None})
    headers = auth_headers(endpoint.api_key)
    with open(log_path, "wb") as log:
        start = time.monotonic()
        proc = subprocess.Popen(config.cmd, shell=True, start_new_session=True, stdin=subprocess.DEVNULL,
                                stdout=log, stderr=subprocess.STDOUT)
    deadline = start + config.timeout_s

    def tick(what: str) -> None:
        if proc.poll() is not None:
            raise _Failed(f"the server exited with code {proc.returncode} before {what}")
        if time.monotonic() > deadline:
            raise _Failed(f"timed out after {config.timeout_s:g} s waiting until {what}")
        time.sleep(POLL_S)

    def reached(name: str, at: float) -> None:
        run.phases[name] = round(at - start, 3)
        if on_phase is not None:
            on_phase(index, name, at - start)

    model = config.model
    try:
        with http_client(endpoint) as client:
            while not _port_open(host, port):
                tick("the port accepted connections")
            reached("port_open_s", time.monotonic())
            while True:
                try:
                    resp = client.get(f"{endpoint.base_url}/models", timeout=5.0)
                    if resp.status_code == 200:
                        model = model or next((str(m["id"]) for m in resp.json().get("data", [])), None)
                        break
                except (httpx.HTTPError, ValueError, KeyError, TypeError):
                    pass
                tick("/models answered 200")
            reached("models_ok_s", time.monotonic())
            if model is None:
                raise _Failed("the server lists no model: pass --model")
            run.model = model
            body = {"model": model, "max_tokens": config.max_tokens, "messages": [{"role": "user", "content": PROMPT}]}
            first: list[float] = []
            while not first:
                try:
                    stream_chat(client, f"{endpoint.base_url}/chat/completions", body, headers,
                                max(1.0, deadline - time.monotonic()), on_first_token=first.append)
                    if not first:
                        raise _Failed("the first request finished without a single token")
                except (httpx.HTTPError, RuntimeError, ValueError) as exc:
                    if "HTTP 4" in str(exc) and "HTTP 429" not in str(exc):
                        raise _Failed(f"the first request was refused: {exc}") from None
                    tick("a first token arrived")
            reached("first_token_s", first[0])
    except _Failed as exc:
        run.error = str(exc)
    finally:
        stop_group(proc, config.stop_grace_s)
    if run.error:
        run.log_tail = log_path.read_bytes()[-2000:].decode("utf-8", "replace")
    for _ in range(int(30 / POLL_S)):  # the next start must not find this server still listening
        if not _port_open(host, port):
            break
        time.sleep(POLL_S)
    return run


def measure_cold_start(endpoint: Endpoint, config: ColdStartConfig,
                       on_phase: Callable[[int, str, float], None] | None = None) -> ColdStartResult:
    """Start the server `config.repeat` times and time each phase. Raises EndpointError if something
    already listens on the endpoint's port (that server, not yours, would be timed)."""
    host, port = _host_port(endpoint)
    if _port_open(host, port):
        raise EndpointError(f"something already listens on {host}:{port}; stop it first, or give the command "
                            "and --base-url another port (cold-start would time the running server)")
    runs = []
    with tempfile.TemporaryDirectory(prefix="agentic-eval-coldstart-") as tmp:
        for index in range(config.repeat):
            runs.append(_one_start(config, endpoint, index, Path(tmp) / f"server-{index}.log", on_phase))
    model = config.model or next((r.model for r in runs if r.model), None)
    result = ColdStartResult(mode="command", cmd=config.cmd, base_url=endpoint.shown_url, model=model,
                             runs=runs, phases=phase_stats(runs))
    result.verdict = _verdict(result)
    return result


def measure_ollama_unload(endpoint: Endpoint, model: str, repeat: int = 1, timeout_s: float = 1800.0,
                          on_phase: Callable[[int, str, float], None] | None = None) -> ColdStartResult:
    """For a running Ollama: unload `model`, time a request from cold, then the same request warm."""
    root = root_url(endpoint.base_url)
    runs = []
    with httpx.Client(timeout=timeout_s) as client:
        for index in range(repeat):
            run = StartRun(index=index)
            try:
                resp = client.post(f"{root}/api/generate", json={"model": model, "keep_alive": 0})
                if resp.status_code >= 400:
                    raise _Failed(f"unloading answered HTTP {resp.status_code}: {resp.text[:200]}")
                for _ in range(int(60 / POLL_S)):
                    names = [m.get("name") or m.get("model")
                             for m in client.get(f"{root}/api/ps").json().get("models", [])]
                    if model not in names and f"{model}:latest" not in names:
                        break
                    time.sleep(POLL_S)
                for label in ("", "warm_"):
                    first, done = _ollama_ask(client, root, model)
                    run.phases[f"{label}first_token_s"] = round(first, 3)
                    run.phases[f"{label}load_s"] = round(done.get("load_duration", 0) / 1e9, 3)
                    run.phases[f"{label}total_s"] = round(done.get("total_duration", 0) / 1e9, 3)
                    if on_phase is not None:
                        on_phase(index, f"{label}load_s", run.phases[f"{label}load_s"] or 0.0)
            except (_Failed, httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
                run.error = f"{type(exc).__name__}: {exc}" if not isinstance(exc, _Failed) else str(exc)
            runs.append(run)
    result = ColdStartResult(mode="ollama_unload", base_url=endpoint.shown_url, model=model, runs=runs,
                             phases=phase_stats(runs))
    result.verdict = _verdict(result)
    return result


def _ollama_ask(client: httpx.Client, root: str, model: str) -> tuple[float, dict[str, int]]:
    """Seconds to the first streamed token, and the final line (with load_duration)."""
    body = {"model": model, "stream": True, "messages": [{"role": "user", "content": PROMPT}],
            "options": {"num_predict": 8}}
    reply = stream_ollama_chat(client, root, body, clock=time.monotonic)
    if (resp := reply.error) is not None:
        raise _Failed(f"/api/chat answered HTTP {resp.status_code}: {resp.content[:200]!r}")
    first = reply.first_token if reply.first_token is not None else reply.ended
    return first - reply.started, reply.final


def _verdict(result: ColdStartResult) -> str:
    failed = [r for r in result.runs if r.error]
    p = result.phases
    if result.mode == "ollama_unload":
        if "load_s" not in p:
            return f"no measurement: {failed[0].error if failed else 'nothing ran'}"
        line = (f"{result.model}: loads in {p['load_s'].median:.1f} s (Ollama load_duration), first token "
                f"{p['first_token_s'].median:.1f} s after the request")
        if "warm_load_s" in p:
            line += f"; warm load_duration {p['warm_load_s'].median:.2f} s"
            line += " (resident)" if p["warm_load_s"].median < 0.5 else " (NOT resident when warm: check keep_alive)"
    elif "first_token_s" not in p:
        return f"the server never answered: {failed[0].error if failed else 'nothing ran'}"
    else:
        ft = p["first_token_s"]
        line = (f"first token {ft.median:.1f} s after start (port {p['port_open_s'].median:.1f} s, /models "
                f"{p['models_ok_s'].median:.1f} s)")
        if ft.n > 1:
            line += f", spread {ft.spread:.1f} s over {ft.n} starts"
    if failed:
        line += f"; {len(failed)} of {len(result.runs)} failed ({failed[0].error})"
    return line


def headline(result: ColdStartResult) -> Headline:
    """The median time to the first token (command mode) or of Ollama's load_duration, its spread, the starts."""
    first = result.phases.get("first_token_s") or result.phases.get("load_s")
    command = result.mode == "command"
    values: dict[str, float | int | str | None] = {
        "value": first.median if first else None, "unit": "s to first token" if command else "s load_duration",
        "spread_s": first.spread if first else None, "starts": len(result.runs),
        "failed": sum(1 for r in result.runs if r.error)}
    if not first:
        return Headline(values, "failed")
    spread = f" (spread {first.spread:.1f} s)" if first.n > 1 else ""
    return Headline(values, f"{first.median:.1f} s {'to first token' if command else 'load'}{spread}")


def record(result: ColdStartResult, runs_root: Path = Path("runs"), *, base_url: str) -> Path:
    """Save the run under `runs_root` for `agentic-eval report` and return its folder. `base_url` is the
    endpoint's own (secrets in it are scrubbed from what is written)."""
    shown = headline(result)
    return save_instrument_run(
        KIND, model=result.model or "unknown-model", base_url=base_url, result=result.model_dump(mode="json"),
        headline=shown.values, headline_text=shown.text,
        settings={"mode": result.mode, "cmd": result.cmd, "repeat": len(result.runs)}, runs_root=runs_root)

"""cold-start against tests/data/slow_server.py (sleeps before listening and before answering
/v1/models), and the Ollama unload mode against a scripted Ollama on 127.0.0.1."""

from __future__ import annotations

import json
import os
import shlex
import socket
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.cli import main
from agentic_eval.endpoint import resolve_endpoint
from agentic_eval.errors import EndpointError
from agentic_eval.instruments.cold_start import (
    ColdStartConfig,
    StartRun,
    measure_cold_start,
    measure_ollama_unload,
    phase_stats,
)
from agentic_eval.results.instrument_runs import read_instrument_run

SLOW_SERVER = Path(__file__).parent / "data" / "slow_server.py"
LISTEN, MODELS, TOKEN = 0.6, 0.5, 0.3
SLACK = 2.0
"""Allowed lateness per phase: interpreter start-up and polling on a busy 2-core machine."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def gone(pid: int, within_s: float = 3.0) -> bool:
    """The process no longer exists (or is a zombie about to be reaped by init)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:
            if Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z":
                return True
        except OSError:
            return True
        time.sleep(0.05)
    return False


def server_cmd(port: int, pid_file: Path, listen: float = LISTEN, models: float = MODELS, token: float = TOKEN) -> str:
    return (f"{shlex.quote(sys.executable)} {shlex.quote(str(SLOW_SERVER))} --port {port} --listen-delay {listen} "
            f"--models-delay {models} --token-delay {token} --child-pid-file {shlex.quote(str(pid_file))}")


def test_phases_measured_and_nothing_left_behind(tmp_path: Path) -> None:
    port, pid_file = free_port(), tmp_path / "child.pid"
    endpoint = resolve_endpoint(f"http://127.0.0.1:{port}/v1", "sk-test")
    seen: list[str] = []
    result = measure_cold_start(endpoint, ColdStartConfig(cmd=server_cmd(port, pid_file), repeat=2, timeout_s=30),
                                on_phase=lambda i, name, s: seen.append(f"{i}:{name}"))
    assert [r.error for r in result.runs] == [None, None]
    for run in result.runs:
        port_s, models_s, token_s = (run.phases[k] for k in ("port_open_s", "models_ok_s", "first_token_s"))
        assert port_s is not None and models_s is not None and token_s is not None
        assert LISTEN <= port_s <= LISTEN + SLACK
        assert port_s + MODELS - 0.1 <= models_s <= port_s + MODELS + SLACK
        assert models_s + TOKEN - 0.05 <= token_s <= models_s + TOKEN + SLACK
    assert seen == [f"{i}:{n}" for i in (0, 1) for n in ("port_open_s", "models_ok_s", "first_token_s")]
    stats = result.phases["first_token_s"]
    assert stats.n == 2 and stats.min <= stats.median <= stats.max and stats.spread == round(stats.max - stats.min, 3)
    assert result.model == "slow-model" and "first token" in result.verdict
    assert gone(int(pid_file.read_text())), "the server's child outlived the stop"
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0, "the server still listens"


def test_server_that_exits_is_an_error_with_its_output(tmp_path: Path) -> None:
    endpoint = resolve_endpoint(f"http://127.0.0.1:{free_port()}/v1", "sk-test")
    cmd = f"{shlex.quote(sys.executable)} -c \"print('no GPU found'); raise SystemExit(3)\""
    result = measure_cold_start(endpoint, ColdStartConfig(cmd=cmd, timeout_s=30))
    run = result.runs[0]
    assert run.error is not None and "exited with code 3" in run.error and "no GPU found" in run.log_tail
    assert run.phases["port_open_s"] is None and "never answered" in result.verdict


def test_timeout_stops_the_group(tmp_path: Path) -> None:
    port, pid_file = free_port(), tmp_path / "child.pid"
    endpoint = resolve_endpoint(f"http://127.0.0.1:{port}/v1", "sk-test")
    started = time.monotonic()
    result = measure_cold_start(endpoint, ColdStartConfig(cmd=server_cmd(port, pid_file, listen=60), timeout_s=1.0,
                                                          stop_grace_s=2))
    assert time.monotonic() - started < 10
    assert result.runs[0].error is not None and "timed out after 1 s" in result.runs[0].error
    assert gone(int(pid_file.read_text()))


def test_ctrl_c_stops_the_group(tmp_path: Path) -> None:
    port, pid_file = free_port(), tmp_path / "child.pid"
    endpoint = resolve_endpoint(f"http://127.0.0.1:{port}/v1", "sk-test")

    def interrupt(index: int, name: str, seconds: float) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        measure_cold_start(endpoint, ColdStartConfig(cmd=server_cmd(port, pid_file, listen=0.2), timeout_s=30),
                           on_phase=interrupt)
    assert gone(int(pid_file.read_text()))


def test_port_already_taken_is_refused() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        endpoint = resolve_endpoint(f"http://127.0.0.1:{s.getsockname()[1]}/v1", "sk-test")
        with pytest.raises(EndpointError, match="already listens"):
            measure_cold_start(endpoint, ColdStartConfig(cmd="true"))


def test_phase_stats_pure() -> None:
    runs = [StartRun(index=i, phases={"a_s": v, "b_s": None}) for i, v in enumerate([3.0, 1.0, 2.0])]
    stats = phase_stats(runs)
    assert set(stats) == {"a_s"}
    assert (stats["a_s"].median, stats["a_s"].spread, stats["a_s"].n) == (2.0, 2.0, 3)


def test_cli_saves_for_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    port = free_port()
    code = main(["cold-start", "--cmd", server_cmd(port, tmp_path / "child.pid", 0.1, 0.1, 0.05), "--base-url",
                 f"http://127.0.0.1:{port}/v1", "--json", "--run-dir", str(tmp_path / "runs")])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    meta = read_instrument_run(Path(out["run_dir"]))
    assert meta.kind == "cold_start" and meta.model == "slow-model"
    assert meta.headline_text.endswith("to first token") and isinstance(meta.headline["value"], float)
    assert gone(int((tmp_path / "child.pid").read_text()))


def test_cli_needs_cmd_or_ollama_unload(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cold-start"]) == 2
    assert "--cmd" in capsys.readouterr().err


# ------------------------------------------------------------------ Ollama unload mode

class _Ollama:
    def __init__(self) -> None:
        self.loaded = True
        self.calls: list[str] = []


@pytest.fixture
def ollama() -> Iterator[tuple[str, _Ollama]]:
    state = _Ollama()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _json_lines(self, *objs: Any) -> None:
            data = b"".join(json.dumps(o).encode() + b"\n" for o in objs)
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            state.calls.append(self.path)
            self._json_lines({"models": [{"name": "tiny:latest"}] if state.loaded else []})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.calls.append(self.path)
            if self.path == "/api/generate" and body.get("keep_alive") == 0:
                state.loaded = False
                self._json_lines({"done": True, "done_reason": "unload"})
                return
            load = 0 if state.loaded else 2_500_000_000
            state.loaded = True
            self._json_lines({"message": {"role": "assistant", "content": "ready"}, "done": False},
                             {"message": {"role": "assistant", "content": ""}, "done": True, "load_duration": load,
                              "total_duration": load + 100_000_000})

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", state
    server.shutdown()
    server.server_close()


def test_ollama_unload_then_cold_and_warm(ollama: tuple[str, _Ollama]) -> None:
    base, state = ollama
    result = measure_ollama_unload(resolve_endpoint(base, "x"), "tiny", repeat=2, timeout_s=10)
    assert [r.error for r in result.runs] == [None, None]
    assert result.phases["load_s"].median == 2.5 and result.phases["warm_load_s"].median == 0.0
    assert state.calls.count("/api/generate") == 2 and state.calls.count("/api/chat") == 4
    assert "loads in 2.5 s" in result.verdict and "(resident)" in result.verdict

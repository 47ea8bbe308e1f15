"""The battery and the form matrix end to end, against scripted endpoints on 127.0.0.1.

The scripted models here compute each reply from the request (a *responder*), which the
queue-replaying fake in fake_endpoint.py cannot do: the battery runs cases in parallel, so
replies cannot be queued in order. The server is the same standard-library approach, and the
replies are built with fake_endpoint's own builders.
"""

from __future__ import annotations

import contextlib
import io
import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from fake_endpoint import ScriptedReply, chat_body, chat_stream, responses_body, responses_stream, sse_bytes, tool_call

from agentic_eval.battery import Case, case_key, generate_cases
from agentic_eval.cli import main

Responder = Callable[[str, dict[str, Any]], ScriptedReply]


class ResponderEndpoint:
    """An OpenAI-compatible server on 127.0.0.1 whose every reply is `respond(path, request_body)`."""

    def __init__(self, respond: Responder, model: str = "fake-model") -> None:
        self.respond, self.model = respond, model
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def do_GET(self) -> None:
                self._send(ScriptedReply(body={"object": "list", "data": [{"id": endpoint.model, "object": "model"}]}))

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
                with endpoint._lock:
                    endpoint.requests.append((self.path, body))
                self._send(endpoint.respond(self.path, body))

            def _send(self, reply: ScriptedReply) -> None:
                stream = reply.events is not None
                data = b"".join(sse_bytes(ev, reply.named_events) for ev in reply.events or ()) if stream else (
                    reply.body.encode() if isinstance(reply.body, str) else json.dumps(reply.body).encode())
                self.send_response(reply.status)
                self.send_header("Content-Type", "text/event-stream" if stream else "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> ResponderEndpoint:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)


# ---------------------------------------------------------------- scripted battery models


def _case_and_step(cases: dict[Any, Case], body: dict[str, Any]) -> tuple[Case, int]:
    """Which case a request belongs to (by its user message and tools) and which step it is at."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    key = (user, tuple(t["function"]["name"] for t in body["tools"]))
    return cases[key], sum(1 for m in body["messages"] if m["role"] == "assistant")


def battery_model(cases: list[Case], style: str) -> Responder:
    """A scripted model: `oracle` calls exactly the expected tools, `never` only ever talks,
    `text` writes every expected call into its reply text (Hermes style)."""
    by_user = {case_key(c): c for c in cases}

    def respond(path: str, body: dict[str, Any]) -> ScriptedReply:
        case, step = _case_and_step(by_user, body)
        expected = case.steps[step].expected
        if style == "never" or not expected:
            return ScriptedReply(body=chat_body("I can answer that without any tool."))
        if style == "text":
            text = "\n".join(f"<tool_call>\n{json.dumps({'name': e['name'], 'arguments': e['witness']})}\n</tool_call>"
                             for e in expected)
            return ScriptedReply(body=chat_body(text))
        calls = [tool_call(e["name"], e["witness"], f"call_{step}_{k}") for k, e in enumerate(expected)]
        return ScriptedReply(body=chat_body(None, tool_calls=calls))

    return respond


def run_cli(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(args))
    return code, out.getvalue()


@pytest.fixture(scope="module")
def campaign_cases() -> list[Case]:
    return generate_cases(45739)


@pytest.mark.parametrize("style, expect_passed", [("oracle", 370), ("never", 40), ("text", 40)])
def test_battery_scores(style: str, expect_passed: int, campaign_cases: list[Case], tmp_path: Path) -> None:
    with ResponderEndpoint(battery_model(campaign_cases, style)) as fake:
        code, out = run_cli("tooling", "--model", "fake-model", "--base-url", fake.base_url, "-j", "4",
                            "--run-dir", str(tmp_path), "--json")
    assert code == 0
    result = json.loads(out)
    assert result["seed"] == 45739
    assert result["total"] == {"passed": expect_passed, "cases": 370}
    assert list(result["phases"]) == ["decisions", "functional", "structured", "freeform", "chains", "negative"]
    assert result["phases"]["negative"] == {"passed": 40, "cases": 40}
    failed = [c for c in result["cases"] if not c["passed"]]
    if style == "never":
        assert {c["reason"].split(": ")[-1] for c in failed} == {"no_call"}
    if style == "text":
        assert all(c["phase"] == "negative" or not c["passed"] for c in result["cases"])
        assert {c["reason"].split(": ")[-1] for c in failed} == {"text_tool_call family=hermes"}
        assert all(c["turns"][-1]["classification"]["label"] == "text_tool_call" for c in failed)
    run_dirs = list(tmp_path.iterdir())
    assert len(run_dirs) == 1 and json.loads((run_dirs[0] / "result.json").read_text())["total"] == result["total"]

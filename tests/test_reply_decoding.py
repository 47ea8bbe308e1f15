"""Every way a reply can fail to decode is the endpoint's, named in one line (issue 26): deep nesting, bytes
that are not UTF-8, an event stream of garbage, of nothing, or cut short, a JSON body where a stream was asked
for and a stream where JSON was, a line without an end, a body over the size cap, compression that does not
inflate or inflates too far. Each against a server on 127.0.0.1 that sends exactly the bytes scripted: the
built-in agent (streamed or not) ends `endpoint_error`, the wire recorder keeps a record that says what was
wrong, and a whole run with `--stream` rules the trial the endpoint's."""

from __future__ import annotations

import gzip
import json
import socket
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from agentic_eval.agents.base import AgentContext, AgentOptions, AgentOutcome
from agentic_eval.agents.builtin import loop
from agentic_eval.agents.builtin.loop import BuiltinAgent
from agentic_eval.packs.sandbox import materialize_sandbox
from agentic_eval.packs.task import load_task
from agentic_eval.testing import FakeEndpoint, ScriptedReply, chat_body, sse_bytes
from agentic_eval.wire import bounded, exchange, sse
from agentic_eval.wire.recorder import WireRecorder, read_wire_log
from tests.helpers import make_pack

MINI_TASK = Path(__file__).parent / "packs" / "mini" / "answer-file"
CAP = 200_000
"""The reply cap the tests set (the real one, 64 MiB, is the same code with a larger number)."""
DEEP = b"[" * 100_000 + b"]" * 100_000


class RawEndpoint:
    """An HTTP server on 127.0.0.1 that answers each request with the next scripted bytes, as they are, then
    closes the connection (a body without a length ends there)."""

    def __init__(self) -> None:
        self.replies: deque[bytes] = deque()
        self.requests = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}/v1"

    def __enter__(self) -> RawEndpoint:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)
        self._listener.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=self._answer, args=(client,), daemon=True).start()

    def _answer(self, client: socket.socket) -> None:
        client.settimeout(20)
        with client:
            head = b""
            while b"\r\n\r\n" not in head and len(head) < 1 << 20:
                piece = client.recv(65536)
                if not piece:
                    return
                head += piece
            header, _, body = head.partition(b"\r\n\r\n")
            length = next((int(line.split(b":", 1)[1]) for line in header.split(b"\r\n")
                           if line.lower().startswith(b"content-length:")), 0)
            while len(body) < length:
                piece = client.recv(65536)
                if not piece:
                    return
                body += piece
            self.requests += 1
            reply = self.replies.popleft() if self.replies else whole(b'{"error": "no reply scripted"}', status=500)
            try:
                client.sendall(reply)
                client.shutdown(socket.SHUT_WR)
            except OSError:
                pass  # the client left early (it stopped reading at the cap)


def whole(body: bytes, content_type: str = "application/json", *, status: int = 200, length: int | None = None,
          headers: tuple[str, ...] = ()) -> bytes:
    """A reply with a Content-Length (`length` may claim more than the body holds)."""
    lines = [f"HTTP/1.1 {status} X", f"Content-Type: {content_type}", f"Content-Length: {length or len(body)}",
             "Connection: close", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def stream(body: bytes, *, headers: tuple[str, ...] = ()) -> bytes:
    """An event stream whose body ends when the connection closes."""
    lines = ["HTTP/1.1 200 OK", "Content-Type: text/event-stream", "Connection: close", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def chunk(content: str, finish_reason: str | None = None) -> dict[str, object]:
    return {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": finish_reason}]}


def events(*payloads: object) -> bytes:
    return b"".join(sse_bytes(payload) for payload in payloads)


GOOD_STREAM = events(chunk("Done."), chunk("", "stop"), "[DONE]")
NOT_UTF8_EVENT = b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,' \
                 b'"delta":{"content":"caf\xe9"},"finish_reason":"stop"}]}\n\n'
BIG_STREAM = events(*[chunk("z" * 1000) for _ in range(400)], chunk("", "stop"), "[DONE]")
BIG_BODY = json.dumps(chat_body("z" * 400_000)).encode()

STREAMED = {  # stream: true
    "json_nested_100000_deep": (whole(DEEP), "not an event stream (application/json): the server ignored stream: "
                                             "true, and the body is JSON nested deeper than 64 levels"),
    "json_not_utf8": (whole(b'{"choices": "caf\xe9"}'), "and the body is not valid UTF-8 (invalid continuation"),
    "json_empty": (whole(b""), "and the body is empty"),
    "event_not_utf8": (stream(NOT_UTF8_EVENT), "stream line 1 is not valid UTF-8"),
    "garbage": (stream(b"hello world\nthis is no event stream\n\n"),
                "without any completion chunk (it held no `data:` event; it began: b'hello world"),
    "nothing_at_all": (stream(b""), "without any completion chunk (the stream was empty)"),
    "keep_alives_only": (stream(b": ping\n\n: ping\n\n"), "without any completion chunk (it held no `data:` event"),
    "cut_short": (stream(events(chunk("Hal"))), "stream ended without a finish_reason (cut short)"),
    "cut_mid_event": (stream(events(chunk("Hal"))[:-10]), "a stream event is not JSON"),
    "a_line_without_end": (stream(b"data: " + b"x" * (3 * CAP)), f"longer than {CAP // 2} bytes without an end"),
    "over_the_cap": (stream(BIG_STREAM), f"unreadable stream from the endpoint: larger than {CAP} bytes"),
    "gzip_past_the_cap": (stream(gzip.compress(BIG_STREAM), headers=("Content-Encoding: gzip",)),
                          f"larger than {CAP} bytes"),
    "gzip_that_is_not": (stream(b"data: not gzip\n\n", headers=("Content-Encoding: gzip",)), "does not inflate"),
    "deep_event": (stream(b"data: " + b"[" * 5000 + b"]" * 5000 + b"\n\n"),
                   "a stream event is JSON nested deeper than 64 levels"),
    "http_400_nested_deep": (whole(DEEP, status=400), "HTTP 400 from the endpoint"),
    "http_500_over_the_cap": (whole(b"x" * (2 * CAP), "text/plain", status=500),
                              f"the reply (HTTP 500) is larger than {CAP} bytes"),
}
WHOLE = {  # stream: false
    "nested_100000_deep": (whole(DEEP), "reply is JSON nested deeper than 64 levels"),
    "not_utf8": (whole(b'{"choices": "caf\xe9"}'), "reply is not valid UTF-8 (invalid continuation byte at byte 16"),
    "empty": (whole(b""), "reply is empty"),
    "blank": (whole(b"  \n"), "reply is blank"),
    "not_json": (whole(b"<html>busy</html>", "text/html"), "reply is not JSON (Expecting value"),
    "an_event_stream": (stream(GOOD_STREAM), "sent an event stream where a JSON body was asked for (stream: false)"),
    "cut_short": (whole(b'{"choices": [', length=1000), "dropped the connection mid-reply"),
    "over_the_cap": (whole(BIG_BODY), f"the reply is larger than {CAP} bytes"),
    "gzip_past_the_cap": (whole(gzip.compress(BIG_BODY), headers=("Content-Encoding: gzip",)),
                          f"the reply is larger than {CAP} bytes"),
    "gzip_cut_short": (whole(gzip.compress(json.dumps(chat_body("fine")).encode())[:-8],
                             headers=("Content-Encoding: gzip",)), "cut short"),
    "brotli": (whole(b"\x1b\x03", headers=("Content-Encoding: br",)), "compressed as 'br', which the agent cannot"),
    "http_500_nested_deep": (whole(DEEP, status=500), "HTTP 500 from the endpoint"),
}


@pytest.fixture
def raw() -> Iterator[RawEndpoint]:
    with RawEndpoint() as endpoint:
        yield endpoint


@pytest.fixture(autouse=True)
def small_caps(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bounded, "MAX_REPLY_BYTES", CAP)
    monkeypatch.setattr(loop, "MAX_LINE_BYTES", CAP // 2)
    monkeypatch.setattr(sse, "MAX_LINE_BYTES", CAP // 2)
    monkeypatch.setattr(exchange, "MAX_KEPT_BYTES", CAP)


def run_builtin(base_url: str, tmp_path: Path, *, stream: bool) -> AgentOutcome:
    task = load_task(MINI_TASK)
    sandbox = materialize_sandbox(task, 7, tmp_path / "sandbox")
    ctx = AgentContext(task=task, sandbox=sandbox, instruction=task.render_instruction(sandbox.variables),
                       base_url=base_url, api_key="k", model="m", timeout_s=60, max_turns=2,
                       trial_dir=tmp_path / "trial", options=AgentOptions(stream=stream, extra={"max_retries": 0}),
                       cancel=threading.Event())
    return BuiltinAgent().run(ctx)


@pytest.mark.parametrize("case", sorted(STREAMED))
def test_a_streamed_reply_that_does_not_decode_is_an_endpoint_error(case: str, raw: RawEndpoint,
                                                                     tmp_path: Path) -> None:
    reply, expected = STREAMED[case]
    raw.replies.append(reply)
    outcome = run_builtin(raw.base_url, tmp_path, stream=True)
    assert outcome.status == "endpoint_error", outcome.detail
    assert expected in outcome.detail and "\n" not in outcome.detail and len(outcome.detail) < 600


@pytest.mark.parametrize("case", sorted(WHOLE))
def test_a_whole_reply_that_does_not_decode_is_an_endpoint_error(case: str, raw: RawEndpoint,
                                                                 tmp_path: Path) -> None:
    reply, expected = WHOLE[case]
    raw.replies.append(reply)
    outcome = run_builtin(raw.base_url, tmp_path, stream=False)
    assert outcome.status == "endpoint_error", outcome.detail
    assert expected in outcome.detail and "\n" not in outcome.detail and len(outcome.detail) < 600


def test_replies_within_bounds_still_read(raw: RawEndpoint, tmp_path: Path) -> None:
    """The same server's well-formed replies, compressed or not, near the cap: the caps cost nothing."""
    near = json.dumps(chat_body("y" * (CAP - 1000))).encode()
    raw.replies.extend([whole(gzip.compress(near), headers=("Content-Encoding: gzip",))])
    assert run_builtin(raw.base_url, tmp_path / "a", stream=False).stop_reason == "no_tool_call"
    raw.replies.append(stream(GOOD_STREAM))
    assert run_builtin(raw.base_url, tmp_path / "b", stream=True).stop_reason == "no_tool_call"


def test_a_line_is_scanned_once_however_it_arrives() -> None:
    """A line that comes a byte at a time is still one event, and the cap counts the line, not the stream."""
    decoder = sse.SSEDecoder(max_line=100)
    line = b"data: " + json.dumps({"x": "y" * 50}).encode() + b"\r\n\r\n"
    out = [event for byte in range(len(line)) for event in decoder.feed(line[byte:byte + 1])]
    assert [event.data for event in out] == [json.dumps({"x": "y" * 50})]
    with pytest.raises(sse.StreamUnreadable, match="stream line 3 is longer than 100 bytes without an end"):
        for _ in range(20):
            decoder.feed(b"data: " + b"z" * 10)


# ---------------------------------------------------------------- the recorder says what was wrong


RECORDED = {
    "event_not_utf8": (stream(NOT_UTF8_EVENT), "stream line 1 is not valid UTF-8"),
    "a_line_without_end": (stream(b"data: " + b"x" * (CAP - 1000)), f"longer than {CAP // 2} bytes"),
    "over_the_cap": (stream(BIG_STREAM), f"larger than {CAP} bytes"),
    "whole_not_utf8": (whole(b'{"choices": "caf\xe9"}'), "the reply is not valid UTF-8"),
    "whole_over_the_cap": (whole(BIG_BODY), f"larger than {CAP} bytes ({len(BIG_BODY)} passed on)"),
}


@pytest.mark.parametrize("case", sorted(RECORDED))
def test_the_recorder_passes_the_reply_on_and_names_what_was_wrong(case: str, raw: RawEndpoint,
                                                                   tmp_path: Path) -> None:
    reply, expected = RECORDED[case]
    raw.replies.extend([reply, whole(json.dumps(chat_body("after")).encode())])
    log = tmp_path / "wire.jsonl"
    with WireRecorder(raw.base_url, log) as wire:
        first = httpx.post(wire.base_url + "/chat/completions", json={"messages": [], "stream": True}, timeout=30)
        after = httpx.post(wire.base_url + "/chat/completions", json={"messages": []}, timeout=30)
    assert first.content == reply.partition(b"\r\n\r\n")[2]  # passed on as it came, whatever it was
    bad, good = read_wire_log(log)
    assert bad.error is not None and expected in bad.error, bad.error
    assert good.error is None and good.response["choices"][0]["message"]["content"] == "after"
    assert after.json() == good.response


# ---------------------------------------------------------------- a whole run


def test_a_run_with_stream_rules_a_deep_json_reply_the_endpoints(mini_pack: Path, tmp_path: Path) -> None:
    """Issue 26's case: `run --stream` against a server answering plain JSON nested 100,000 deep."""
    runs = tmp_path / "runs"
    with FakeEndpoint(responder=lambda request: ScriptedReply(body=DEEP, headers={
            "Content-Type": "application/json"})) as fake:
        done = subprocess.run([sys.executable, "-m", "agentic_eval.cli", "run", "--model", "fake-model", "--tasks",
                               str(make_pack(mini_pack, 1)), "--run-dir", str(runs), "--base-url", fake.base_url,
                               "--agent-opt", "max_retries=0", "--sandbox", "local", "--stream", "--json"],
                              capture_output=True, text=True, timeout=300, check=False)
    assert "Traceback" not in done.stderr, done.stderr
    (trials,) = runs.glob("*/trials.jsonl")
    (record,) = [json.loads(line) for line in trials.read_text().splitlines()]
    assert (record["outcome"], record["fault"]) == ("endpoint_error", "endpoint"), record
    assert "JSON nested deeper than 64 levels" in record["detail"]

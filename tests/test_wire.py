"""The wire recorder, against the scripted fake endpoint: real HTTP on 127.0.0.1 only."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import httpx
import openai
import pytest

from agentic_eval.classify.turn import classify_turn
from agentic_eval.testing import (
    DONE,
    FakeEndpoint,
    ScriptedReply,
    chat_body,
    chat_stream,
    responses_body,
    responses_stream,
    tool_call,
)
from agentic_eval.wire.exchange import WireRecord
from agentic_eval.wire.recorder import WireRecorder, read_wire_log
from agentic_eval.wire.sse import decode_sse

pytestmark = pytest.mark.timeout(60)

SECRET = "sk-test-SECRET-0123456789"
PARALLEL_CALLS = [
    tool_call("read", {"filePath": "/srv/app/config/settings.json", "limit": 200}, "call_a"),
    tool_call("grep", {"pattern": "LEGACY_RATE_TOKEN\\s*=", "path": "/srv/app"}, "call_b"),
]


@pytest.fixture
def fake() -> Iterator[FakeEndpoint]:
    with FakeEndpoint() as endpoint:
        yield endpoint


@pytest.fixture
def log_path(tmp_path: Path) -> Path:
    return tmp_path / "run" / "wire.jsonl"


@pytest.fixture
def recorder(fake: FakeEndpoint, log_path: Path) -> Iterator[WireRecorder]:
    with WireRecorder(fake.base_url, log_path) as proxy:
        yield proxy


def records_after_stop(recorder: WireRecorder) -> list[WireRecord]:
    """Stopping lets every exchange in flight end and be written."""
    recorder.stop()
    return read_wire_log(recorder.log_path)


def post(url: str, body: Mapping[str, object], **headers: str) -> httpx.Response:
    return httpx.post(url, json=body, headers=headers, timeout=10)


def test_non_streamed_chat_completion(fake: FakeEndpoint, recorder: WireRecorder) -> None:
    body = chat_body("The bug is in config.py.")
    fake.enqueue(ScriptedReply(body=body))
    request = {"model": "fake-model", "messages": [{"role": "user", "content": "hi"}]}
    response = post(recorder.base_url + "/chat/completions", request)
    assert response.status_code == 200 and response.json() == body
    [record] = records_after_stop(recorder)
    assert (record.format_version, record.seq, record.method, record.path) == (2, 0, "POST", "/v1/chat/completions")
    assert (record.request, record.status, record.response, record.stream) == (request, 200, body, False)
    assert record.events == [] and record.error is None and record.usage == body["usage"]
    timings = record.timings
    assert timings.first_token_s is None
    assert timings.headers_s is not None and timings.first_byte_s is not None
    assert 0 <= timings.headers_s <= timings.first_byte_s <= timings.end_s < 10


def test_streamed_chat_is_reassembled(fake: FakeEndpoint, recorder: WireRecorder) -> None:
    events = chat_stream("Reading both files.", tool_calls=PARALLEL_CALLS, reasoning_content="Need the config.",
                         piece_chars=3, usage={"prompt_tokens": 900, "completion_tokens": 60, "total_tokens": 960})
    fake.enqueue(ScriptedReply(events=events))
    post(recorder.base_url + "/chat/completions", {"stream": True, "stream_options": {"include_usage": True}})
    [record] = records_after_stop(recorder)
    assert record.stream and record.error is None
    assert len(record.events) == len(events) and record.events[-1] == DONE
    message = record.response["choices"][0]["message"]
    assert message["content"] == "Reading both files."
    assert message["reasoning_content"] == "Need the config."
    assert message["tool_calls"] == PARALLEL_CALLS
    assert record.response["choices"][0]["finish_reason"] == "tool_calls"
    assert record.usage == {"prompt_tokens": 900, "completion_tokens": 60, "total_tokens": 960}
    assert record.timings.first_token_s is not None and record.timings.first_token_s <= record.timings.end_s
    # The classifier reads the reassembled stream like a plain body.
    assert classify_turn(None, record.response).label == "tool_call"


def test_streamed_parallel_calls_all_numbered_zero_are_kept_apart(fake: FakeEndpoint, recorder: WireRecorder) -> None:
    # Some servers give every parallel call index 0; the new id says a new call begins.
    events = [
        chunk
        for call in PARALLEL_CALLS
        for chunk in (
            {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": call["id"], "type": "function",
                                                                 "function": {"name": call["function"]["name"]}}]}}]},
            {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {
                "arguments": call["function"]["arguments"]}}]}}]},
        )
    ]
    fake.enqueue(ScriptedReply(events=[*events, DONE]))
    post(recorder.base_url + "/chat/completions", {"stream": True})
    [record] = records_after_stop(recorder)
    assert record.response["choices"][0]["message"]["tool_calls"] == PARALLEL_CALLS


def test_responses_api_streamed_and_not(fake: FakeEndpoint, recorder: WireRecorder) -> None:
    whole = responses_body("Found it.", function_calls=[("grep", {"pattern": "TOKEN"})], reasoning="Search first.")
    fake.enqueue(
        ScriptedReply(events=responses_stream("Found it.", function_calls=[("grep", {"pattern": "TOKEN"})],
                                              reasoning="Search first."), named_events=True),
        ScriptedReply(body=whole),
    )
    post(recorder.base_url + "/responses", {"stream": True})
    post(recorder.base_url + "/responses", {"stream": False})
    streamed, plain = records_after_stop(recorder)
    assert streamed.stream and streamed.response == whole and streamed.usage == whole["usage"]
    assert streamed.timings.first_token_s is not None
    assert not plain.stream and plain.response == whole


def test_responses_stream_without_completed_event_is_assembled_from_items(
    fake: FakeEndpoint, recorder: WireRecorder
) -> None:
    calls = [("read", {"filePath": "/x"}), ("grep", {"pattern": "y"})]
    events = responses_stream("Both.", function_calls=calls, reasoning="r", completed=False)
    fake.enqueue(ScriptedReply(events=events, named_events=True))
    post(recorder.base_url + "/responses", {"stream": True})
    [record] = records_after_stop(recorder)
    assert record.response["output"] == responses_body("Both.", function_calls=calls, reasoning="r")["output"]


def test_responses_stream_cut_mid_item_keeps_the_deltas(fake: FakeEndpoint, recorder: WireRecorder) -> None:
    events = responses_stream("Hello there", function_calls=[("read", {"filePath": "/x"})], piece_chars=2)
    cut = next(i for i, e in enumerate(events) if e["type"] == "response.function_call_arguments.delta") + 3
    fake.enqueue(ScriptedReply(events=events, named_events=True, close_after_events=cut))
    with pytest.raises(httpx.RemoteProtocolError):
        post(recorder.base_url + "/responses", {"stream": True})
    [record] = records_after_stop(recorder)
    message, partial_call = record.response["output"]
    assert message["content"][0]["text"] == "Hello there"
    assert partial_call["name"] == "read" and json.dumps({"filePath": "/x"}).startswith(partial_call["arguments"])
    assert "closed" in (record.error or "")


def _raw_body(url: str) -> bytes:
    with httpx.stream("POST", url, json={"stream": True}, timeout=10) as response:
        return b"".join(response.iter_raw())


@pytest.mark.parametrize("streamed", [True, False], ids=["stream", "plain"])
def test_bytes_pass_through_unchanged(fake: FakeEndpoint, recorder: WireRecorder, streamed: bool) -> None:
    if streamed:
        reply = ScriptedReply(events=chat_stream("Ünïcode ✓ 日本語 " * 20, tool_calls=PARALLEL_CALLS, piece_chars=1))
    else:
        reply = ScriptedReply(body=chat_body("Ünïcode ✓ 日本語", tool_calls=PARALLEL_CALLS))
    fake.enqueue(reply, reply)
    direct = _raw_body(fake.base_url + "/chat/completions")
    proxied = _raw_body(recorder.base_url + "/chat/completions")
    assert proxied == direct and len(direct) > 100


def test_upstream_closing_mid_stream(fake: FakeEndpoint, recorder: WireRecorder) -> None:
    reply = ScriptedReply(events=chat_stream("one two three four five six", piece_chars=4), close_after_events=4)
    fake.enqueue(reply, reply)
    seen: dict[str, bytes] = {}
    for name, base in (("direct", fake.base_url), ("proxied", recorder.base_url)):
        received = bytearray()
        with pytest.raises(httpx.RemoteProtocolError), httpx.stream(
            "POST", base + "/chat/completions", json={"stream": True}, timeout=10
        ) as response:
            for chunk in response.iter_raw():
                received += chunk
        seen[name] = bytes(received)
    assert seen["proxied"] == seen["direct"]
    [record] = records_after_stop(recorder)
    assert record.error is not None and "closed the response early" in record.error
    assert record.response["choices"][0]["message"]["content"] == "one two thre"
    assert len(record.events) == 4


@pytest.mark.parametrize("status", [400, 429, 500])
def test_upstream_error_status_passes_through(fake: FakeEndpoint, recorder: WireRecorder, status: int) -> None:
    body = {"error": {"message": "bad things", "type": "BadRequestError", "code": status}}
    fake.enqueue(ScriptedReply(status=status, body=body))
    response = post(recorder.base_url + "/chat/completions", {"stream": True})
    assert (response.status_code, response.json()) == (status, body)
    [record] = records_after_stop(recorder)
    assert (record.status, record.response, record.stream, record.error) == (status, body, False, None)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_unreachable_upstream_gives_502(log_path: Path) -> None:
    with WireRecorder(f"http://127.0.0.1:{_closed_port()}/v1", log_path, connect_timeout_s=2) as recorder:
        response = post(recorder.base_url + "/chat/completions", {"model": "m"})
        assert response.status_code == 502
        assert "unreachable" in response.json()["error"]["message"]
    [record] = read_wire_log(log_path)
    assert record.status == 502 and record.error is not None and "unreachable" in record.error
    assert record.request == {"model": "m"} and record.response == response.json()


def test_no_secret_reaches_the_log(fake: FakeEndpoint, log_path: Path) -> None:
    with WireRecorder(fake.base_url, log_path, upstream_headers={"X-Upstream-Key": SECRET + "-injected"}) as recorder:
        fake.enqueue(ScriptedReply(body=chat_body("ok")), ScriptedReply(events=chat_stream("ok")))
        client = openai.OpenAI(base_url=recorder.base_url, api_key=SECRET, max_retries=0)
        client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": "hi"}])
        httpx.post(recorder.base_url + f"/chat/completions?api-key={SECRET}&x=1", json={"stream": True},
                   headers={"Authorization": f"Bearer {SECRET}", "api-key": SECRET}, timeout=10)
    assert [r.headers["authorization"] for r in fake.requests] == [f"Bearer {SECRET}"] * 2
    assert fake.requests[0].headers["x-upstream-key"] == SECRET + "-injected"
    text = log_path.read_text(encoding="utf-8")
    assert SECRET not in text and "authorization" not in text.lower()
    assert read_wire_log(log_path)[1].path == "/v1/chat/completions?api-key=REDACTED&x=1"


def test_events_reach_the_client_unbuffered(fake: FakeEndpoint, recorder: WireRecorder) -> None:
    events = chat_stream("first then much later", piece_chars=6)
    delays = [0.0] * len(events)
    delays[3] = 0.8  # a long pause in the middle of the stream
    fake.enqueue(ScriptedReply(events=events, chunk_delay_s=delays))
    first_event_at = None
    with httpx.stream("POST", recorder.base_url + "/chat/completions", json={"stream": True}, timeout=10) as response:
        for chunk in response.iter_raw():
            if first_event_at is None and b"data:" in chunk:
                first_event_at = time.perf_counter()
    last_sent_at = fake.requests[-1].event_sent_times[-1]
    assert first_event_at is not None and first_event_at < last_sent_at - 0.5


def test_real_openai_client_through_the_proxy(fake: FakeEndpoint, recorder: WireRecorder) -> None:
    fake.enqueue(
        ScriptedReply(events=chat_stream("Let me look.", tool_calls=PARALLEL_CALLS, piece_chars=2)),
        ScriptedReply(body=responses_body("Done.", function_calls=[("read", {"filePath": "/x"})])),
        ScriptedReply(events=responses_stream("Streamed.", function_calls=[("grep", {"pattern": "x"})],
                                              reasoning="Think."), named_events=True),
    )
    client = openai.OpenAI(base_url=recorder.base_url, api_key="x", max_retries=0)
    with client.chat.completions.stream(model="fake-model", messages=[{"role": "user", "content": "go"}]) as stream:
        final = stream.get_final_completion()
    assert [c.function.name for c in final.choices[0].message.tool_calls or []] == ["read", "grep"]
    response = client.responses.create(model="fake-model", input="go")
    assert response.output_text == "Done."
    with client.responses.stream(model="fake-model", input="go") as events:
        streamed = events.get_final_response()
    assert streamed.output_text == "Streamed." and [i.type for i in streamed.output] == [
        "reasoning", "message", "function_call"
    ]
    assert [m.id for m in client.models.list()] == ["fake-model"]
    records = records_after_stop(recorder)
    assert [(r.method, r.path) for r in records] == [
        ("POST", "/v1/chat/completions"), ("POST", "/v1/responses"), ("POST", "/v1/responses"), ("GET", "/v1/models")
    ]
    assert records[2].response == responses_body("Streamed.", function_calls=[("grep", {"pattern": "x"})],
                                                 reasoning="Think.")
    assert records[0].response["choices"][0]["message"]["tool_calls"] == PARALLEL_CALLS


@pytest.mark.parametrize(("method", "path"), [
    ("DELETE", "/files/file-1"), ("GET", "/files"), ("POST", "/fine_tuning/jobs"), ("POST", "/batches"),
    ("GET", "/responses/resp_1"), ("POST", "/models"), ("GET", "/chat/completions"), ("POST", "/embeddings"),
    ("GET", "/models/../files"), ("GET", "/models/%2e%2e/files"), ("POST", "/chat/completions/../../files"),
])
def test_only_the_model_api_is_forwarded(fake: FakeEndpoint, recorder: WireRecorder, method: str, path: str) -> None:
    """The relay holds the endpoint's real key and the sandbox can reach it: files, batches, fine-tuning and any
    other route never reach the endpoint; the agent gets a 404 naming what is served, and the wire log has it."""
    response = httpx.request(method, recorder.base_url + path, json={"x": 1}, timeout=10)
    assert response.status_code == 404 and "serves only the model API" in response.json()["error"]["message"]
    assert fake.requests == []
    outside = httpx.get(recorder.base_url.removesuffix("/v1") + "/metrics", timeout=10)
    assert outside.status_code == 404 and "/v1" in outside.json()["error"]["message"]
    [record] = records_after_stop(recorder)
    assert (record.method, record.status, record.request) == (method, 404, None)
    assert record.error and f"{method} /v1/" in record.error and "is not one" in record.error


@pytest.mark.parametrize(("method", "path", "upstream"), [
    ("POST", "/chat/completions", "/v1/chat/completions"), ("POST", "/responses", "/v1/responses"),
    ("POST", "/messages?beta=true", "/v1/messages?beta=true"),
    ("POST", "/messages/count_tokens", "/v1/messages/count_tokens"), ("GET", "/models", "/v1/models"),
    ("GET", "/models/Qwen/Qwen3-8B", "/v1/models/Qwen/Qwen3-8B"),
    ("POST", "//chat/completions/", "/v1/chat/completions"),
])
def test_the_model_api_is_forwarded(fake: FakeEndpoint, recorder: WireRecorder, method: str, path: str,
                                    upstream: str) -> None:
    fake.enqueue(ScriptedReply(body={"ok": True}))
    response = httpx.request(method, recorder.base_url + path, json={"x": 1} if method == "POST" else None, timeout=10)
    assert response.status_code == 200  # the fake answers GET /models itself, the rest with the scripted reply
    assert (fake.requests[-1].method, fake.requests[-1].path) == (method, upstream)


@pytest.mark.parametrize("chunked", [False, True])
def test_a_request_over_the_size_limit_is_413_unread_and_recorded_small(fake: FakeEndpoint, log_path: Path,
                                                                      chunked: bool) -> None:
    """A body over the relay's limit is answered 413 naming the limit, never forwarded, and its record holds no
    body: one huge request cannot fill the machine's memory or the wire log."""
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "x" * 300_000}]}).encode()

    def pieces() -> Iterator[bytes]:
        for i in range(0, len(body), 65536):
            yield body[i:i + 65536]

    with WireRecorder(fake.base_url, log_path, max_request_bytes=100_000) as recorder:
        response = httpx.post(recorder.base_url + "/chat/completions", content=pieces() if chunked else body,
                              timeout=10)
        fake.enqueue(ScriptedReply(body=chat_body("fine")))
        small = httpx.post(recorder.base_url + "/chat/completions", json={"messages": []}, timeout=10)
        records = records_after_stop(recorder)
    assert response.status_code == 413 and "limit of 100,000 bytes" in response.json()["error"]["message"]
    assert "AGENTIC_EVAL_MAX_REQUEST_MB" in response.json()["error"]["message"]
    assert small.status_code == 200 and len(fake.requests) == 1
    assert [(r.status, r.request is None) for r in records] == [(413, True), (200, False)]
    assert records[0].error and "larger than the relay's limit of 100,000 bytes" in records[0].error
    assert (f"({len(body):,} bytes)" in records[0].error) != chunked
    assert log_path.stat().st_size < 20_000


def test_the_size_limit_is_set_in_megabytes_by_the_environment(monkeypatch: pytest.MonkeyPatch,
                                                               log_path: Path) -> None:
    from agentic_eval.errors import AgenticEvalError

    monkeypatch.setenv("AGENTIC_EVAL_MAX_REQUEST_MB", "0.5")
    assert WireRecorder("http://127.0.0.1:9/v1", log_path).max_request_bytes == 512 * 1024
    monkeypatch.delenv("AGENTIC_EVAL_MAX_REQUEST_MB")
    assert WireRecorder("http://127.0.0.1:9/v1", log_path).max_request_bytes == 32 * 1024 * 1024
    for bad in ("lots", "0", "-1", "1e9", "nan"):
        monkeypatch.setenv("AGENTIC_EVAL_MAX_REQUEST_MB", bad)
        with pytest.raises(AgenticEvalError, match="AGENTIC_EVAL_MAX_REQUEST_MB=.*megabytes"):
            WireRecorder("http://127.0.0.1:9/v1", log_path)


def test_client_leaving_mid_stream_is_recorded(fake: FakeEndpoint, recorder: WireRecorder) -> None:
    fake.enqueue(ScriptedReply(events=chat_stream("slow " * 10, piece_chars=5), chunk_delay_s=0.1))
    with httpx.stream("POST", recorder.base_url + "/chat/completions", json={"stream": True}, timeout=10) as response:
        next(response.iter_raw())
    deadline = time.monotonic() + 5
    while recorder.records_written == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    [record] = records_after_stop(recorder)
    assert record.error == "client disconnected before the response ended"


def test_concurrent_exchanges_each_get_a_record(fake: FakeEndpoint, recorder: WireRecorder) -> None:
    replies = [ScriptedReply(events=chat_stream(f"reply {n}"), chunk_delay_s=0.01) for n in range(6)]
    fake.enqueue(*replies)
    threads = [threading.Thread(target=post, args=(recorder.base_url + "/chat/completions", {"n": n}))
               for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    records = records_after_stop(recorder)
    assert sorted(r.seq for r in records) == list(range(6))
    assert sorted(r.response["choices"][0]["message"]["content"] for r in records) == [f"reply {n}" for n in range(6)]
    assert len({r.id for r in records}) == 6


def test_async_context_manager(fake: FakeEndpoint, log_path: Path) -> None:
    fake.enqueue(ScriptedReply(body=chat_body("async ok")))

    async def run() -> dict[str, object]:
        async with WireRecorder(fake.base_url, log_path) as recorder, httpx.AsyncClient() as client:
            response = await client.post(recorder.base_url + "/chat/completions", json={})
            return response.json()

    assert asyncio.run(run())["choices"][0]["message"]["content"] == "async ok"  # type: ignore[index]
    assert len(read_wire_log(log_path)) == 1


def test_base_url_before_start_says_how_to_fix(log_path: Path) -> None:
    with pytest.raises(Exception, match="start"):
        _ = WireRecorder("http://127.0.0.1:1/v1", log_path).base_url


# ---------------------------------------------------------------- stream decoding, pure


def test_sse_decoding_does_not_depend_on_chunk_boundaries() -> None:
    stream = (": keep-alive\r\n\r\nevent: response.created\r\ndata: {\"a\": \"日本\"}\r\n\r\n"
              "data: line one\ndata: line two\n\ndata: [DONE]\r\r").encode()
    whole = [(event.event, event.data) for _, event in decode_sse([stream])]
    assert whole == [("response.created", '{"a": "日本"}'), (None, "line one\nline two"), (None, "[DONE]")]
    for size in (1, 2, 3, 7):
        pieces = [stream[i : i + size] for i in range(0, len(stream), size)]
        assert [(event.event, event.data) for _, event in decode_sse(pieces)] == whole


def test_error_event_inside_a_stream_is_recorded(fake: FakeEndpoint, recorder: WireRecorder) -> None:
    events = [*chat_stream("partial", done=False)[:2], {"error": {"message": "CUDA out of memory", "code": 500}}]
    fake.enqueue(ScriptedReply(events=events))
    post(recorder.base_url + "/chat/completions", {"stream": True})
    [record] = records_after_stop(recorder)
    assert record.error == "upstream sent an error event: CUDA out of memory"
    assert record.response["choices"][0]["message"]["content"] == "part"


def test_the_harness_key_replaces_the_agents_placeholder(fake: FakeEndpoint, log_path: Path) -> None:
    with WireRecorder(fake.base_url, log_path, upstream_headers={"Authorization": "Bearer real-key"}) as recorder:
        fake.enqueue(ScriptedReply(body=chat_body("ok")))
        client = openai.OpenAI(base_url=recorder.base_url, api_key="placeholder", max_retries=0)
        client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": "hi"}])
    assert [v for k, v in fake.requests[0].header_lines if k == "authorization"] == ["Bearer real-key"]
    assert "real-key" not in log_path.read_text(encoding="utf-8")

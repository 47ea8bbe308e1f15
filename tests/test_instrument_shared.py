"""The helpers the instruments share, against real HTTP servers on 127.0.0.1: the endpoint's auth
headers and client, the streamed-chat reader (exchange), and server detection and Ollama's native
stream (servers)."""

from __future__ import annotations

import time

import httpx
import pytest

from agentic_eval.endpoint import auth_headers, http_client, resolve_endpoint
from agentic_eval.instruments.exchange import sse_chunks, stream_chat
from agentic_eval.instruments.servers import detect_server, root_url, stream_ollama_chat
from agentic_eval.testing import DONE, FakeEndpoint, ScriptedReply, chat_stream
from tests.fake_vllm import FakeVllm, FakeVllmConfig


def test_auth_headers_and_http_client_present_the_key() -> None:
    assert auth_headers("k-1") == {"Authorization": "Bearer k-1"}
    with FakeEndpoint() as fake, http_client(resolve_endpoint(fake.base_url, "k-2"), timeout=10) as client:
        assert client.get("/models").status_code == 200  # relative to the base URL
    assert fake.requests[0].path == "/v1/models" and fake.requests[0].headers["authorization"] == "Bearer k-2"


def test_sse_chunks_reads_events_cut_anywhere() -> None:
    wire = [b'data: {"a": 1}\n', b'\ndata: {"b"', b': 2}\n\n: keep-alive\n\ndata: [DONE]\n\ndata: {"c": 3}']
    resp = httpx.Response(200, content=iter(wire))
    assert [chunk for _, chunk in sse_chunks(resp)] == [{"a": 1}, {"b": 2}, None, {"c": 3}]


def test_sse_chunks_refuses_data_that_is_not_json() -> None:
    with pytest.raises(ValueError):
        list(sse_chunks(httpx.Response(200, content=b"data: {oops\n\n")))


def test_stream_chat_joins_content_and_reasoning_and_times_tokens() -> None:
    usage = {"prompt_tokens": 7, "completion_tokens": 9, "total_tokens": 16}
    events = chat_stream("The answer is 42.", reasoning_content="six times seven", usage=usage)
    assert events[-1] == DONE
    first: list[float] = []
    with FakeEndpoint([ScriptedReply(events=events, chunk_delay_s=0.002)]) as fake, httpx.Client() as client:
        before = time.monotonic()
        reply = stream_chat(client, f"{fake.base_url}/chat/completions", {"model": "m", "messages": []},
                            auth_headers("k"), timeout_s=30, on_first_token=first.append)
    assert (reply.content, reply.reasoning, reply.usage) == ("The answer is 42.", "six times seven", usage)
    assert first == reply.token_times[:1] and before <= first[0] <= reply.token_times[-1]
    assert len(reply.token_times) == 9 and reply.decode_tok_s is not None and reply.decode_tok_s > 0
    assert fake.requests[0].body["stream"] is True


def test_stream_chat_says_why_a_reply_is_not_a_stream() -> None:
    with FakeEndpoint([ScriptedReply(status=503, body={"error": "busy"})]) as fake, httpx.Client() as client:
        with pytest.raises(RuntimeError, match="HTTP 503"):
            stream_chat(client, f"{fake.base_url}/chat/completions", {}, {}, timeout_s=30)


@pytest.mark.parametrize("ask_model_list", [True, False])
def test_detect_server_from_metric_names(ask_model_list: bool) -> None:
    with FakeVllm(FakeVllmConfig()) as fake, httpx.Client() as client:
        found = detect_server(client, fake.base_url, ask_model_list=ask_model_list)
    assert (found.kind, found.detail, found.from_metrics) == ("vllm", "/metrics has vllm: names", True)
    assert found.scrape is not None and found.scrape.get("vllm:num_requests_running") == 0


def test_detect_server_ollama_and_nothing() -> None:
    with FakeVllm(FakeVllmConfig(ollama=True)) as fake, httpx.Client() as client:
        found = detect_server(client, fake.base_url)
    assert (found.kind, found.detail, found.scrape) == ("ollama", "Ollama 0.0.0-fake (/api/version)", None)
    with FakeEndpoint() as plain, httpx.Client() as client:
        found = detect_server(client, plain.base_url)
    assert found.kind == "unknown" and not found.from_metrics
    assert [r.path for r in plain.requests] == ["/metrics", "/api/version", "/v1/models", "/props"]


def test_root_url() -> None:
    assert root_url("http://h:1/v1") == root_url("http://h:1/v1/") == "http://h:1"
    assert root_url("http://h:1/api") == "http://h:1/api"


def test_stream_ollama_chat_times_tokens_and_keeps_the_final_line() -> None:
    with FakeVllm(FakeVllmConfig(ollama=True)) as fake, httpx.Client(timeout=30) as client:
        body = {"model": fake.config.model, "stream": True, "messages": [{"role": "user", "content": "hi"}],
                "options": {"num_predict": 12}}
        reply = stream_ollama_chat(client, root_url(fake.base_url), body, clock=time.monotonic)
        missing = stream_ollama_chat(client, fake.url + "/nowhere", body)
    assert reply.error is None and reply.final["done"] is True and reply.final["eval_count"] == 12
    assert reply.first_token is not None and reply.last_token is not None
    assert reply.started <= reply.first_token <= reply.last_token <= reply.ended
    assert missing.error is not None and missing.error.status_code == 404 and missing.first_token is None

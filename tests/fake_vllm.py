"""A scripted vLLM-like server for the speed tests: real HTTP on 127.0.0.1, in a thread.

It knows the truth the speed instrument must recover:

- prefill at `prefill_tok_s` (a sleep proportional to the uncached prompt tokens; tokens = chars / 4),
- a prefix cache of 16-token blocks, hashed as a chain, so a repeated prompt prefix skips prefill,
- decode at `decode_tok_s`, emitted against absolute deadlines so sleep jitter does not accumulate,
- speculative decoding (`spec_k` > 0): several tokens per chunk and vLLM's spec-decode counters,
- `/metrics` in Prometheus text with vLLM's exact names (counters as `_total`, with `_created` samples),
- a "neighbour" request that makes `vllm:num_requests_running` non-zero, advances the token counters
  and slows our decode (a time-sliced GPU), started by hand or during chosen requests,
- an Ollama mode (`ollama=True`): native /api/chat NDJSON with eval_count / eval_duration, no /metrics.

    with FakeVllm(FakeVllmConfig(decode_tok_s=200)) as fake:
        measure_speed(SpeedConfig(base_url=fake.base_url, model=fake.config.model, ...))
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

CHARS_PER_TOKEN = 4
BLOCK_TOKENS = 16


@dataclass
class FakeVllmConfig:
    model: str = "fake-model"
    decode_tok_s: float = 200.0
    """The true decode rate, in tokens per second (with speculation: tokens, not steps)."""
    prefill_tok_s: float = 20_000.0
    spec_k: int = 0
    """Draft tokens proposed per step; 0 = no speculation, and no spec-decode counters exposed."""
    spec_accept_cycle: tuple[int, ...] = (3, 2, 3, 1)
    """Accepted draft tokens per step, cycled (each step emits accepted + 1 tokens)."""
    neighbour_on: frozenset[int] = frozenset()
    """0-based indices of chat requests during which a neighbour request runs."""
    neighbour_delay_s: float = 0.05
    neighbour_s: float = 0.2
    neighbour_tok_s: float = 100.0
    contention_slowdown: float = 2.0
    """Our decode interval is multiplied by this while a neighbour runs."""
    metrics: bool = True
    omit: frozenset[str] = frozenset()
    """Metric families left out of /metrics (exact names as in the text, e.g. vllm:num_requests_waiting)."""
    stuck_running: int = 0
    """Added to the running gauge forever: a stale gauge with frozen counters."""
    max_prompt_tokens: int | None = None
    """Refuse longer prompts with HTTP 400, as a server refuses a prompt over its context length."""
    ollama: bool = False
    ollama_load_s: float = 0.0
    """Ollama mode: load_duration reported by the next request (then the model is resident)."""


@dataclass
class _State:
    prompt_tokens: int = 0
    generation_tokens: int = 0
    drafts: int = 0
    draft_tokens: int = 0
    accepted: int = 0
    accepted_per_pos: list[int] = field(default_factory=list)
    cache_queries: int = 0
    cache_hits: int = 0
    running: int = 0
    neighbours: int = 0
    chat_requests: int = 0
    cache: set[str] = field(default_factory=set)
    events: list[tuple[str, float]] = field(default_factory=list)
    lateness: list[float] = field(default_factory=list)
    """Per request, how much longer its decode took than scheduled (0.03: 3 % late): a loaded machine wakes the
    sender late, and the measured rate can only be as true as what was sent."""
    """(what, time.perf_counter()): request starts/ends and neighbour starts/ends."""


def prompt_token_count(text: str) -> int:
    return max(1, -(-len(text) // CHARS_PER_TOKEN))


def _block_hashes(text: str) -> list[str]:
    """Chained hashes of the prompt's full 16-token blocks (like vLLM's: a block's hash covers its prefix)."""
    step = BLOCK_TOKENS * CHARS_PER_TOKEN
    hashes, prev = [], ""
    for end in range(step, len(text) + 1, step):
        prev = hashlib.sha1((prev + text[end - step:end]).encode()).hexdigest()
        hashes.append(prev)
    return hashes


class FakeVllm:
    """The server. Start with `with`, or `start()` / `stop()`."""

    def __init__(self, config: FakeVllmConfig | None = None) -> None:
        self.config = config or FakeVllmConfig()
        self.state = _State(accepted_per_pos=[0] * max(self.config.spec_k, 0))
        self.lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._threads: list[threading.Thread] = []
        self._load_pending = self.config.ollama_load_s

    @property
    def url(self) -> str:
        assert self._server is not None, "the fake server is not running"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def base_url(self) -> str:
        return self.url + "/v1"

    def start(self) -> None:
        fake = self

        class Handler(_Handler):
            server_fake = fake

        self._server = _QuietServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        self._threads.append(thread)

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        for thread in self._threads:
            thread.join(5)
        self._server = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- simulation ---------------------------------------------------------------------------------

    def start_neighbour(self, duration_s: float, delay_s: float = 0.0) -> threading.Thread:
        """Run a background request: running + 1, counters advancing, our decode slowed."""
        thread = threading.Thread(target=self._neighbour, args=(duration_s, delay_s), daemon=True)
        thread.start()
        self._threads.append(thread)
        return thread

    def _neighbour(self, duration_s: float, delay_s: float) -> None:
        time.sleep(delay_s)
        interval = 1.0 / self.config.neighbour_tok_s
        with self.lock:
            self.state.running += 1
            self.state.neighbours += 1
            self.state.prompt_tokens += 100
            self.state.events.append(("neighbour_start", time.perf_counter()))
        end = time.perf_counter() + duration_s
        for _ in range(int(duration_s / interval) + 1):  # bounded
            if time.perf_counter() >= end:
                break
            time.sleep(interval)
            with self.lock:
                self.state.generation_tokens += 1
        with self.lock:
            self.state.running -= 1
            self.state.neighbours -= 1
            self.state.events.append(("neighbour_end", time.perf_counter()))

    def admit(self, prompt: str) -> tuple[int, int, int]:
        """A request arrives: (its index, prompt tokens, cached tokens); the cache learns its blocks."""
        n_prompt = prompt_token_count(prompt)
        hashes = _block_hashes(prompt)
        with self.lock:
            index = self.state.chat_requests
            self.state.chat_requests += 1
            hits = 0
            for h in hashes:
                if h not in self.state.cache:
                    break
                hits += 1
            self.state.cache.update(hashes)
            cached = hits * BLOCK_TOKENS
            self.state.cache_queries += n_prompt
            self.state.cache_hits += cached
            self.state.running += 1
            self.state.events.append((f"request_start {index}", time.perf_counter()))
        if index in self.config.neighbour_on:
            self.start_neighbour(self.config.neighbour_s, self.config.neighbour_delay_s)
        return index, n_prompt, cached

    def token_schedule(self, n: int) -> list[int]:
        """Tokens per emitted chunk: the first token alone (from prefill), then one per step, or
        accepted + 1 per step under speculation."""
        sizes, left, step = [1], n - 1, 0
        while left > 0:
            size = (1 if not self.config.spec_k
                    else self.config.spec_accept_cycle[step % len(self.config.spec_accept_cycle)] + 1)
            sizes.append(min(size, left))
            left -= sizes[-1]
            step += 1
        return sizes

    def emit_count(self, size: int, first: bool) -> None:
        """Count one emitted chunk of `size` tokens in the counters."""
        k = self.config.spec_k
        with self.lock:
            self.state.generation_tokens += size
            if k and not first:
                accepted = size - 1
                self.state.drafts += 1
                self.state.draft_tokens += k
                self.state.accepted += accepted
                for pos in range(accepted):
                    self.state.accepted_per_pos[pos] += 1

    def step_interval(self, size: int) -> float:
        slow = self.config.contention_slowdown if self.state.neighbours else 1.0
        return size / self.config.decode_tok_s * slow

    def take_load(self) -> float:
        with self.lock:
            load, self._load_pending = self._load_pending, 0.0
        return load

    def metrics_text(self) -> str:
        s, cfg = self.state, self.config
        labels = f'model_name="{cfg.model}",engine="0"'
        out: list[str] = []

        def family(name: str, kind: str, samples: list[tuple[str, str, float]]) -> None:
            if name in cfg.omit:
                return
            out.append(f"# HELP {name} fake\n# TYPE {name} {kind}")
            out.extend(f"{sample}{{{lab}}} {value}" for sample, lab, value in samples)

        def counter(name: str, value: float) -> None:
            family(name, "counter", [(f"{name}_total", labels, value), (f"{name}_created", labels, 1.7e9)])

        with self.lock:
            family("vllm:num_requests_running", "gauge", [("vllm:num_requests_running", labels,
                                                          s.running + cfg.stuck_running)])
            family("vllm:num_requests_waiting", "gauge", [("vllm:num_requests_waiting", labels, 0)])
            family("vllm:kv_cache_usage_perc", "gauge", [("vllm:kv_cache_usage_perc", labels, 0.01)])
            family("vllm:cache_config_info", "gauge", [("vllm:cache_config_info",
                                                       'block_size="16",enable_prefix_caching="True"', 1)])
            counter("vllm:prompt_tokens", s.prompt_tokens)
            counter("vllm:generation_tokens", s.generation_tokens)
            counter("vllm:prefix_cache_queries", s.cache_queries)
            counter("vllm:prefix_cache_hits", s.cache_hits)
            if cfg.spec_k:
                counter("vllm:spec_decode_num_drafts", s.drafts)
                counter("vllm:spec_decode_num_draft_tokens", s.draft_tokens)
                counter("vllm:spec_decode_num_accepted_tokens", s.accepted)
                family("vllm:spec_decode_num_accepted_tokens_per_pos", "counter",
                       [("vllm:spec_decode_num_accepted_tokens_per_pos_total", f'{labels},position="{i}"', v)
                        for i, v in enumerate(s.accepted_per_pos)])
        return "\n".join(out) + "\n"


class _QuietServer(ThreadingHTTPServer):
    """A client that hangs up mid-stream is not an error worth a traceback here."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server_fake: FakeVllm

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        fake, path = self.server_fake, self.path.split("?")[0].rstrip("/")
        if path.endswith("/models"):
            self._json({"object": "list", "data": [{"id": fake.config.model, "object": "model"}]})
        elif path == "/metrics" and fake.config.metrics and not fake.config.ollama:
            self._send(200, fake.metrics_text().encode(), "text/plain; version=0.0.4")
        elif path == ("/api/version" if fake.config.ollama else "/version"):
            self._json({"version": "0.0.0-fake"})
        else:
            self._send(404, b"404 page not found", "text/plain")

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        path = self.path.rstrip("/")
        limit = self.server_fake.config.max_prompt_tokens
        prompt = "".join(str(m.get("content") or "") for m in body.get("messages", []))
        if limit is not None and prompt_token_count(prompt) > limit:
            message = f"maximum context length is {limit} tokens, the prompt has {prompt_token_count(prompt)}"
            self._send(400, json.dumps({"error": {"message": message}}).encode(), "application/json")
        elif path.endswith("/chat/completions") and not self.server_fake.config.ollama:
            self._chat(body)
        elif path == "/api/chat" and self.server_fake.config.ollama:
            self._ollama_chat(body)
        else:
            self._send(404, b"not found", "text/plain")

    def _send(self, status: int, data: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _json(self, obj: Any) -> None:
        self._send(200, json.dumps(obj).encode(), "application/json")

    def _start_stream(self, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _generate(self, prompt: str, max_tokens: int, emit: Any) -> tuple[int, int, int, float, float]:
        """Prefill, then emit chunks on schedule. Returns (prompt, cached, n, decode seconds, prefill seconds)."""
        fake = self.server_fake
        _, n_prompt, cached = fake.admit(prompt)
        prefill_s = (n_prompt - cached) / fake.config.prefill_tok_s
        time.sleep(prefill_s)
        with fake.lock:
            fake.state.prompt_tokens += n_prompt
        sizes = fake.token_schedule(max(1, max_tokens))
        deadline = t_first = time.perf_counter()
        for i, size in enumerate(sizes):
            if i:
                deadline += fake.step_interval(size)
                time.sleep(max(0.0, deadline - time.perf_counter()))
            fake.emit_count(size, first=i == 0)
            emit(size)
        decode_s = time.perf_counter() - t_first
        scheduled_s = deadline - t_first
        with fake.lock:
            if scheduled_s > 0:
                fake.state.lateness.append(max(0.0, decode_s / scheduled_s - 1))
            fake.state.running -= 1
            fake.state.events.append(("request_end", time.perf_counter()))
        return n_prompt, cached, sum(sizes), decode_s, prefill_s

    def _chat(self, body: dict[str, Any]) -> None:
        fake = self.server_fake
        prompt = "".join(str(m.get("content") or "") for m in body.get("messages", []))
        max_tokens = int(body.get("max_tokens") or body.get("max_completion_tokens") or 16)
        self._start_stream("text/event-stream")
        base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": fake.config.model}

        def sse(obj: Any) -> None:
            self._chunk(f"data: {json.dumps(obj)}\n\n".encode())

        sse({**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]})  # role only
        n_prompt, cached, n, _, _ = self._generate(
            prompt, max_tokens,
            lambda size: sse({**base, "choices": [{"index": 0, "delta": {"content": "tok " * size}}]}))
        sse({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]})
        if (body.get("stream_options") or {}).get("include_usage"):
            sse({**base, "choices": [], "usage": {"prompt_tokens": n_prompt, "completion_tokens": n,
                                                  "total_tokens": n_prompt + n,
                                                  "prompt_tokens_details": {"cached_tokens": cached}}})
        self._chunk(b"data: [DONE]\n\n")
        self._chunk(b"")

    def _ollama_chat(self, body: dict[str, Any]) -> None:
        fake = self.server_fake
        t0 = time.perf_counter()
        load = fake.take_load()
        time.sleep(load)
        prompt = "".join(str(m.get("content") or "") for m in body.get("messages", []))
        max_tokens = int((body.get("options") or {}).get("num_predict") or 16)
        self._start_stream("application/x-ndjson")

        def line(obj: Any) -> None:
            self._chunk((json.dumps(obj) + "\n").encode())

        n_prompt, _, n, decode_s, prefill_s = self._generate(
            prompt, max_tokens, lambda size: line({"model": fake.config.model, "done": False,
                                                   "message": {"role": "assistant", "content": "tok " * size}}))
        ns = 1e9
        line({"model": fake.config.model, "done": True, "message": {"role": "assistant", "content": ""},
              "total_duration": int((time.perf_counter() - t0) * ns), "load_duration": int(load * ns),
              "prompt_eval_count": n_prompt, "prompt_eval_duration": int(prefill_s * ns),
              "eval_count": n, "eval_duration": int(decode_s * ns)})
        self._chunk(b"")

"""think-check against a scripted reasoning server on 127.0.0.1 that plants arithmetic slips in its
reasoning-off answers, in the shapes of vLLM, Ollama and an OpenAI-style API, honouring or ignoring
the switch. Plus the real local model, selected with `-m real_model_long`."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.cli import main
from agentic_eval.endpoint import resolve_endpoint
from agentic_eval.instruments.think_check import ThinkCheckConfig, run_think_check, score_attempt, split_think
from agentic_eval.instruments.wordproblems import WordProblem, generate_problems
from agentic_eval.paths import cache_dir
from agentic_eval.results.instrument_runs import is_instrument_run, read_instrument_run

USER_CACHE = str(cache_dir())
"""Read before the tests isolate HOME: where the real local model is assembled."""
SEED = 7
PROBLEMS = generate_problems(SEED, 6)
SLIPPED = {PROBLEMS[1].id, PROBLEMS[3].id, PROBLEMS[4].id}
"""Problems whose reasoning-off answer states a false subtraction/addition (and so a wrong answer)."""
WRONG_BUT_CONSISTENT = {PROBLEMS[5].id}
"""A reasoning-off answer that misreads the problem: wrong, but its own arithmetic holds."""


def worked_answer(problem: WordProblem, slip: bool = False, misread: bool = False) -> str:
    """A correct step-by-step answer; `slip` makes the last step's stated result 3 too high, `misread`
    adds a step the problem does not have."""
    lines = ["Let's go step by step.", ""]
    for number, step in enumerate(problem.steps, start=1):
        expr = {"add": f"{step.before:,} + {step.operand:,}", "sub": f"{step.before:,} − {step.operand:,}",
                "mul": f"{step.before:,} × {step.operand}", "add_times": f"{step.before:,} × {step.operand + 1}",
                "half": f"{step.before:,} ÷ 2", "split_keep": f"{step.before:,} ÷ {step.operand}"}.get(step.op)
        after = step.after + (3 if slip and number == len(problem.steps) else 0)
        lines.append(f"{number}. {step.sentence} **{expr} = {after:,}**" if expr else
                     f"{number}. {step.sentence} So {step.after} remain.")
    final = problem.answer + (3 if slip else 0)
    if misread:
        final = problem.answer + 1
        lines.append(f"{len(problem.steps) + 1}. One more arrives: {problem.answer:,} + 1 = {final:,}")
    return "\n".join(lines + ["", f"Answer: {final:,}"])


@dataclass
class Reasoner:
    """The scripted server's behaviour."""

    kind: str = "vllm"
    """vllm, ollama or openai: which routes exist and which switch it reads."""
    ignore_switch: bool = False
    think_in_content: bool = False
    """Reasoning as <think>...</think> in the content instead of a reasoning field."""
    refuse_effort_none: bool = False
    fail_problem: str | None = None
    """Answer 500 to every request for this problem."""
    drop_once: str | None = None
    """Close the connection without answering the first request for this problem."""
    requests: list[dict[str, Any]] = field(default_factory=list)

    def answer(self, prompt: str, thinking: bool) -> tuple[str, str]:
        problem = next(p for p in PROBLEMS if p.text in prompt)
        reasoning = "Let me think about each step carefully." if thinking or self.ignore_switch else ""
        if thinking or self.ignore_switch:
            return worked_answer(problem), reasoning
        return worked_answer(problem, slip=problem.id in SLIPPED, misread=problem.id in WRONG_BUT_CONSISTENT), ""


def _handler(reasoner: Reasoner) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, status: int, body: Any, content_type: str = "application/json") -> None:
            data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path == "/v1/models":
                self._send(200, {"object": "list", "data": [{"id": "fake-reasoner", "owned_by": "someone"}]})
            elif self.path == "/api/version" and reasoner.kind == "ollama":
                self._send(200, {"version": "0.12.0"})
            elif self.path == "/metrics" and reasoner.kind == "vllm":
                self._send(200, "vllm:num_requests_running 0.0\n", "text/plain")
            else:
                self._send(404, {"error": "not found"})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            reasoner.requests.append({"path": self.path, "body": body})
            prompt = body["messages"][-1]["content"]
            if reasoner.drop_once and next(p for p in PROBLEMS if p.id == reasoner.drop_once).text in prompt:
                reasoner.drop_once = None
                self.close_connection = True
                return
            if reasoner.fail_problem and next(p for p in PROBLEMS if p.id == reasoner.fail_problem).text in prompt:
                self._send(500, {"error": {"message": "scripted failure"}})
            elif self.path == "/api/chat" and reasoner.kind == "ollama":
                content, thinking = reasoner.answer(prompt, body["think"])
                message = {"role": "assistant", "content": content, **({"thinking": thinking} if thinking else {})}
                self._send(200, {"model": body["model"], "message": message, "done": True, "eval_count": 120,
                                 "eval_duration": 4_000_000_000, "load_duration": 1_000_000})
            elif self.path == "/v1/chat/completions":
                if reasoner.kind == "openai":
                    effort = body.get("reasoning_effort")
                    if effort == "none" and reasoner.refuse_effort_none:
                        self._send(400, {"error": {"message": "reasoning_effort: 'none' is not supported"}})
                        return
                    thinking = effort not in ("none", "minimal")
                else:
                    thinking = body["chat_template_kwargs"]["enable_thinking"]
                content, reasoning = reasoner.answer(prompt, thinking)
                if reasoner.think_in_content and reasoning:
                    content, reasoning = f"<think>\n{reasoning}\n</think>\n\n{content}", ""
                self._stream(content, reasoning)
            else:
                self._send(404, {"error": "not found"})

        def _stream(self, content: str, reasoning: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            pieces = [{"reasoning_content": reasoning[i:i + 20]} for i in range(0, len(reasoning), 20)]
            pieces += [{"content": content[i:i + 20]} for i in range(0, len(content), 20)]
            events = [{"choices": [{"index": 0, "delta": d}]} for d in pieces]
            events.append({"choices": [], "usage": {"completion_tokens": len(pieces) * 5, "prompt_tokens": 50}})
            for event in [*events, "[DONE]"]:
                time.sleep(0.001)
                data = f"data: {event if isinstance(event, str) else json.dumps(event)}\n\n".encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")

    return Handler


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[ThreadingHTTPServer] = []

    def start(reasoner: Reasoner) -> str:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(reasoner))
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/v1"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def _run(base_url: str, **config: Any) -> Any:
    return run_think_check(resolve_endpoint(base_url, "sk-test"),
                           ThinkCheckConfig(model="fake-reasoner", problems=len(PROBLEMS), seed=SEED, **config))


def test_vllm_switch_honoured_and_slips_counted(serve: Any) -> None:
    reasoner = Reasoner(kind="vllm")
    result = _run(serve(reasoner))
    assert (result.server_kind, result.switch_status) == ("vllm", "honoured")
    assert "enable_thinking" in result.switch
    sent = [r["body"]["chat_template_kwargs"]["enable_thinking"] for r in reasoner.requests]
    assert sent == [True, False] * len(PROBLEMS)
    assert (result.on.correct, result.on.inconsistent, result.on.reasoning_seen) == (6, 0, 6)
    assert result.off.correct == 6 - len(SLIPPED) - len(WRONG_BUT_CONSISTENT)
    assert result.off.inconsistent == len(SLIPPED)  # the misread answer is wrong but consistent
    assert {a.problem_id for a in result.attempts if a.false_claims} == SLIPPED
    assert all("works out to" in a.false_claims[0] for a in result.attempts if a.false_claims)
    assert result.off.reasoning_seen == 0 and result.on.reasoning_tokens_mean and result.on.decode_tok_s_median
    assert "loses 67 points of accuracy" in result.verdict and "3 of 6 answers contradict" in result.verdict


@pytest.mark.parametrize("think_in_content", [False, True], ids=["reasoning_field", "think_tags"])
def test_ignored_switch_is_detected(serve: Any, think_in_content: bool) -> None:
    result = _run(serve(Reasoner(kind="vllm", ignore_switch=True, think_in_content=think_in_content)))
    assert result.switch_status == "ignored"
    assert result.off.reasoning_seen == 6 and result.off.correct == 6
    assert "ignored" in result.verdict and "cannot show" in result.verdict
    assert all("<think>" not in a.content and a.content.startswith("Let's") for a in result.attempts)


def test_ollama_native_think(serve: Any) -> None:
    reasoner = Reasoner(kind="ollama")
    result = _run(serve(reasoner))
    assert result.server_kind == "ollama" and "0.12.0" in result.server_detail
    assert [r["path"] for r in reasoner.requests] == ["/api/chat"] * 12
    assert [r["body"]["think"] for r in reasoner.requests] == [True, False] * 6
    assert result.switch_status == "honoured" and result.off.inconsistent == len(SLIPPED)
    assert result.on.decode_tok_s_median == 30.0  # eval_count / eval_duration
    assert result.on.reasoning_tokens_mean and all(a.reasoning_tokens_estimated
                                                   for a in result.attempts if a.mode == "on")


def test_openai_reasoning_effort_falls_back_to_minimal(serve: Any) -> None:
    reasoner = Reasoner(kind="openai", refuse_effort_none=True)
    result = _run(serve(reasoner))
    assert result.server_kind == "openai" and "reasoning_effort" in result.switch and "minimal" in result.switch
    efforts = [r["body"]["reasoning_effort"] for r in reasoner.requests]
    assert efforts[:3] == ["medium", "none", "minimal"] and efforts[3:5] == ["medium", "minimal"]
    assert result.off.errors == 0 and result.off.inconsistent == len(SLIPPED)


def test_one_problem_failing_is_that_problems_row(serve: Any) -> None:
    result = _run(serve(Reasoner(kind="vllm", fail_problem=PROBLEMS[2].id)))
    failed = [a for a in result.attempts if a.error]
    assert {(a.problem_id, a.mode) for a in failed} == {(PROBLEMS[2].id, "on"), (PROBLEMS[2].id, "off")}
    assert "500" in failed[0].error and result.on.answered == 5 and result.on.correct == 5


def test_dropped_connection_is_asked_once_more(serve: Any) -> None:
    reasoner = Reasoner(kind="vllm", drop_once=PROBLEMS[0].id)
    result = _run(serve(reasoner))
    assert result.on.errors == 0 and result.off.errors == 0
    assert len(reasoner.requests) == 2 * len(PROBLEMS) + 1


def test_score_attempt_pure() -> None:
    problem = PROBLEMS[0]
    seed_like = (f"{problem.answer}. ...doubled that amount to get 18, "
                 "and then subtracted the 6 sold to leave him with 15.")
    attempt = score_attempt(problem, "off", seed_like, "", {"completion_tokens": 40}, None, 1.0)
    assert attempt.correct and attempt.false_claims and not attempt.reasoning_seen
    assert split_think("<think>hmm</think>\nAnswer: 3") == ("Answer: 3", "hmm")
    assert split_think("hmm, 9 + 9</think>Answer: 18") == ("Answer: 18", "hmm, 9 + 9")
    assert split_think("<think>still going") == ("", "still going")
    counted = score_attempt(problem, "on", worked_answer(problem), "x" * 30,
                            {"completion_tokens": 90, "completion_tokens_details": {"reasoning_tokens": 70}}, 12.5, 2.0)
    assert (counted.reasoning_tokens, counted.reasoning_tokens_estimated, counted.decode_tok_s) == (70, False, 12.5)


def test_cli_json_and_saved_for_report(serve: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = serve(Reasoner(kind="vllm"))
    code = main(["think-check", "--model", "fake-reasoner", "--base-url", base, "--problems", "3", "--seed",
                 str(SEED), "--json", "--run-dir", str(tmp_path)])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["format_version"] == 1 and out["problems"] == 3 and len(out["attempts"]) == 6
    run_dir = Path(out["run_dir"])
    assert is_instrument_run(run_dir)
    meta = read_instrument_run(run_dir)
    assert meta.kind == "think_check" and meta.model == "fake-reasoner"
    assert meta.headline_text.startswith("thinking off: -33 pts accuracy, 1 inconsistent")
    assert main(["report", "--run-dir", str(tmp_path), "--format", "md"]) == 0
    assert "thinking off" in capsys.readouterr().out


def test_cli_model_not_served(serve: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    base = serve(Reasoner(kind="vllm"))
    assert main(["think-check", "--model", "other", "--base-url", base, "--run-dir", str(tmp_path)]) == 2
    assert "not served" in capsys.readouterr().err


@pytest.mark.real_model_long
@pytest.mark.timeout(1800)
def test_real_local_model(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The packaged small model on llama.cpp: two problems, short outputs. It is not a reasoning
    model, so both modes must answer, nothing may crash, and the switch must read as honoured."""
    if "real_model_long" not in (request.config.getoption("-m") or ""):
        pytest.skip("runs the real local model (minutes on a CPU): select with -m real_model_long")
    local_server = pytest.importorskip("agentic_eval.local.server")
    monkeypatch.setenv("AGENTIC_EVAL_CACHE", USER_CACHE)  # assemble the model once, not in every tmp HOME
    with local_server.LocalServer(threads=2, ctx=4096) as server:
        result = run_think_check(resolve_endpoint(server.base_url, "sk-local"),
                                 ThinkCheckConfig(model=server.model, problems=2, seed=0, max_tokens_on=200,
                                                  max_tokens_off=200, timeout_s=600))
    assert result.server_kind == "llamacpp"
    assert result.on.errors == 0 and result.off.errors == 0, [a.error for a in result.attempts]
    assert result.switch_status == "honoured"
    assert all(a.completion_tokens and a.decode_tok_s for a in result.attempts)
    assert result.verdict.startswith(server.model)


def test_a_server_that_ignores_stream_true_gives_no_comparison() -> None:
    from agentic_eval.testing import FakeEndpoint, ScriptedReply, chat_body

    with FakeEndpoint(responder=lambda request: ScriptedReply(body=chat_body("The answer is 42."))) as fake:
        result = run_think_check(resolve_endpoint(fake.base_url, "k"),
                                 ThinkCheckConfig(model="fake-model", problems=2, seed=1))
    assert result.on.answered == result.off.answered == 0 and result.on.errors == 2
    assert "no comparison" in result.verdict and "ignored stream: true" in result.verdict

"""think-check: does switching a model's reasoning off make its answers wrong?

Each generated word problem is asked twice, reasoning on and reasoning off, with the switch the
server understands:

    ollama                       native /api/chat with "think": true|false
    vllm, sglang, llamacpp       chat_template_kwargs: {"enable_thinking": true|false}
    openai (anything else)       reasoning_effort: "medium" | "none" (then "minimal" if refused)

Each answer is scored on its final number and on its internal consistency (every arithmetic
statement it makes, checked by `consistency.py`), with the reasoning tokens it spent and its decode
rate. A server that ignores the switch (reasoning still arrives with it off, in
reasoning_content / reasoning / thinking fields or as <think> in the content) is reported, since
then the comparison shows nothing. One problem's failure is recorded on that problem.

`record(result, runs_root, base_url=...)` saves a run as `agentic-eval think-check` does, for the report.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import httpx
from pydantic import BaseModel, ConfigDict, Field

from agentic_eval.endpoint import Endpoint, auth_headers, http_client
from agentic_eval.instruments.consistency import check_consistency, extract_final_answer, format_number
from agentic_eval.instruments.exchange import stream_chat
from agentic_eval.instruments.registry import Headline, Log
from agentic_eval.instruments.servers import ServerKind, detect_server, root_url
from agentic_eval.instruments.wordproblems import WordProblem, generate_problems
from agentic_eval.results.instrument_runs import save_instrument_run

if TYPE_CHECKING:
    from collections.abc import Sequence

    from agentic_eval.results.instrument_runs import InstrumentRun

__all__ = [
    "KIND",
    "SWITCHES",
    "Attempt",
    "ModeSummary",
    "ThinkCheckConfig",
    "ThinkCheckResult",
    "headline",
    "record",
    "run_think_check",
]

KIND = "think_check"

Mode = Literal["on", "off"]
SWITCHES: dict[str, str] = {
    "ollama": 'think: true|false (native /api/chat)',
    "vllm": 'chat_template_kwargs.enable_thinking', "sglang": 'chat_template_kwargs.enable_thinking',
    "llamacpp": 'chat_template_kwargs.enable_thinking', "openai": 'reasoning_effort',
}
CONTENT_KEPT = 4000
"""Characters of each answer kept in the result."""


@dataclass
class ThinkCheckConfig:
    """What to ask: the model, how many problems from which seed, and the limits."""

    model: str
    problems: int = 20
    seed: int = 0
    max_tokens_on: int = 8192
    """Output budget with reasoning on (reasoning included)."""
    max_tokens_off: int = 2048
    timeout_s: float = 900.0
    """Per request."""
    server_kind: ServerKind | None = None
    """Force a switch instead of detecting the server."""
    temperature: float | None = None
    """None: the server's default (reasoning models are tuned for theirs)."""


class Attempt(BaseModel):
    """One problem asked in one mode."""

    problem_id: str
    mode: Mode
    expected: int
    answer: str | None = None
    correct: bool = False
    claims_checked: int = 0
    false_claims: list[str] = Field(default_factory=list)
    """Each false arithmetic statement, with what it works out to."""
    reasoning_seen: bool = False
    """Reasoning arrived (a reasoning field, reasoning tokens in usage, or <think> in the content)."""
    reasoning_tokens: int | None = None
    reasoning_tokens_estimated: bool = False
    """The server gave no reasoning token count: estimated from the reasoning's share of the characters."""
    completion_tokens: int | None = None
    decode_tok_s: float | None = None
    wall_s: float = 0.0
    error: str | None = None
    content: str = ""


class ModeSummary(BaseModel):
    mode: Mode
    asked: int = 0
    answered: int = 0
    correct: int = 0
    accuracy_pct: float | None = None
    """Correct answers over answered ones."""
    inconsistent: int = 0
    """Answers with at least one false arithmetic statement."""
    claims_checked: int = 0
    false_claims: int = 0
    reasoning_seen: int = 0
    reasoning_tokens_mean: float | None = None
    decode_tok_s_median: float | None = None
    errors: int = 0


class ThinkCheckResult(BaseModel):
    """The whole `think-check --json` output. Field names are a file-format contract."""

    format_version: int = 1
    model: str
    base_url: str
    server_kind: ServerKind
    server_detail: str = ""
    switch: str
    switch_status: Literal["honoured", "ignored", "partly ignored", "unknown"] = "unknown"
    seed: int
    problems: int
    on: ModeSummary
    off: ModeSummary
    verdict: str = ""
    attempts: list[Attempt] = Field(default_factory=list)


# ------------------------------------------------------------------ the server

class _Asker:
    """Asks one problem in one mode with the switch for `kind`; remembers what the server refused."""

    def __init__(self, client: httpx.Client, endpoint: Endpoint, config: ThinkCheckConfig, kind: ServerKind):
        self.client, self.endpoint, self.config, self.kind = client, endpoint, config, kind
        self.effort_off = "none"
        self.headers = auth_headers(endpoint.api_key)

    def ask(self, prompt: str, mode: Mode) -> tuple[str, str, dict[str, Any], float | None]:
        """(content, reasoning, usage, decode tok/s). A server that drops a reused keep-alive connection
        as the request goes out gets the request once more."""
        try:
            return self._ask(prompt, mode)
        except httpx.RemoteProtocolError:
            return self._ask(prompt, mode)

    def _ask(self, prompt: str, mode: Mode) -> tuple[str, str, dict[str, Any], float | None]:
        max_tokens = self.config.max_tokens_on if mode == "on" else self.config.max_tokens_off
        messages = [{"role": "user", "content": prompt}]
        if self.kind == "ollama":
            options: dict[str, Any] = {"num_predict": max_tokens}
            if self.config.temperature is not None:
                options["temperature"] = self.config.temperature
            body = {"model": self.config.model, "messages": messages, "stream": False, "think": mode == "on",
                    "options": options}
            root = root_url(self.endpoint.base_url)
            resp = self.client.post(f"{root}/api/chat", json=body, timeout=self.config.timeout_s)
            if resp.status_code >= 400:
                raise RuntimeError(f"HTTP {resp.status_code}: {resp.text[:300]}")
            data = resp.json()
            message = data.get("message") or {}
            rate = data["eval_count"] / data["eval_duration"] * 1e9 if data.get("eval_duration") else None
            usage = {"completion_tokens": data.get("eval_count")}
            return message.get("content") or "", message.get("thinking") or "", usage, rate
        body = {"model": self.config.model, "messages": messages, "stream_options": {"include_usage": True}}
        if self.config.temperature is not None:
            body["temperature"] = self.config.temperature
        if self.kind == "openai":
            body["max_completion_tokens"] = max_tokens
            body["reasoning_effort"] = "medium" if mode == "on" else self.effort_off
        else:
            body["max_tokens"] = max_tokens
            body["chat_template_kwargs"] = {"enable_thinking": mode == "on"}
        url = f"{self.endpoint.base_url}/chat/completions"
        try:
            reply = stream_chat(self.client, url, body, self.headers, self.config.timeout_s)
        except RuntimeError as exc:
            if not (self.kind == "openai" and mode == "off" and self.effort_off == "none"
                    and "reasoning_effort" in str(exc)):
                raise
            self.effort_off = body["reasoning_effort"] = "minimal"
            reply = stream_chat(self.client, url, body, self.headers, self.config.timeout_s)
        return reply.content, reply.reasoning, reply.usage, reply.decode_tok_s


# ------------------------------------------------------------------ scoring

def split_think(content: str) -> tuple[str, str]:
    """(answer, reasoning) from content that may carry <think>...</think> (or only the closing tag)."""
    if "</think>" in content:
        thought, _, answer = content.rpartition("</think>")
        return answer.strip(), thought.replace("<think>", "").strip()
    if "<think>" in content:
        return "", content.split("<think>", 1)[1].strip()  # cut off while still thinking
    return content.strip(), ""


def score_attempt(problem: WordProblem, mode: Mode, content: str, reasoning: str, usage: dict[str, Any],
                  rate: float | None, wall_s: float) -> Attempt:
    """Pure: turn one reply into its scored attempt."""
    answer_text, inline_thought = split_think(content)
    reasoning = (reasoning + "\n" + inline_thought).strip()
    details = usage.get("completion_tokens_details") or {}
    counted = details.get("reasoning_tokens") if isinstance(details, dict) else None
    completion = usage.get("completion_tokens")
    estimated = False
    if counted is None and reasoning and completion:
        counted = round(completion * len(reasoning) / (len(reasoning) + len(answer_text) or 1))
        estimated = True
    report = check_consistency(answer_text)
    answer = extract_final_answer(answer_text)
    return Attempt(
        problem_id=problem.id, mode=mode, expected=problem.answer,
        answer=None if answer is None else format_number(answer), correct=answer == problem.answer,
        claims_checked=len(report.claims), false_claims=[c.explanation for c in report.false_claims],
        reasoning_seen=bool(reasoning) or bool(counted), reasoning_tokens=counted if reasoning or counted else 0,
        reasoning_tokens_estimated=estimated, completion_tokens=completion,
        decode_tok_s=round(rate, 2) if rate else None, wall_s=round(wall_s, 3), content=answer_text[:CONTENT_KEPT],
    )


def summarize(mode: Mode, attempts: list[Attempt]) -> ModeSummary:
    mine = [a for a in attempts if a.mode == mode]
    ok = [a for a in mine if a.error is None]
    tokens = [a.reasoning_tokens for a in ok if a.reasoning_tokens is not None]
    rates = [a.decode_tok_s for a in ok if a.decode_tok_s]
    return ModeSummary(
        mode=mode, asked=len(mine), answered=len(ok), correct=sum(a.correct for a in ok),
        accuracy_pct=round(100 * sum(a.correct for a in ok) / len(ok), 1) if ok else None,
        inconsistent=sum(bool(a.false_claims) for a in ok), claims_checked=sum(a.claims_checked for a in ok),
        false_claims=sum(len(a.false_claims) for a in ok), reasoning_seen=sum(a.reasoning_seen for a in ok),
        reasoning_tokens_mean=round(statistics.mean(tokens), 1) if tokens else None,
        decode_tok_s_median=round(statistics.median(rates), 2) if rates else None, errors=len(mine) - len(ok),
    )


def verdict(result: ThinkCheckResult) -> tuple[str, str]:
    """(verdict line, short headline) for a finished run."""
    on, off = result.on, result.off
    if not on.answered or not off.answered:
        first = next((a.error for a in result.attempts if a.error), "no answers")
        return f"{result.model}: no comparison, a mode had no answers ({first})", "no answers"
    if result.switch_status == "ignored":
        line = (f"{result.model}: the server ignored {result.switch} (reasoning in {off.reasoning_seen}/"
                f"{off.answered} answers with it off): both modes reasoned, so this run cannot show what "
                "switching it off costs")
        return line, "switch ignored"
    delta = (off.accuracy_pct or 0.0) - (on.accuracy_pct or 0.0)
    cost = f"loses {-delta:.0f} points of accuracy" if delta < 0 else f"costs no accuracy ({delta:+.0f} pts)"
    line = (f"{result.model}: thinking off {cost} ({on.accuracy_pct:.0f}% -> {off.accuracy_pct:.0f}%), "
            f"{off.inconsistent} of {off.answered} answers contradict their own arithmetic (thinking on: "
            f"{on.inconsistent})")
    if on.decode_tok_s_median and off.decode_tok_s_median:
        line += f"; {on.decode_tok_s_median:.1f} vs {off.decode_tok_s_median:.1f} tok/s"
    if on.reasoning_tokens_mean:
        line += f", {on.reasoning_tokens_mean:.0f} reasoning tokens per answer with thinking on"
    if not on.reasoning_seen:
        line += ". No reasoning seen with thinking on: not a reasoning model, or the server hides it"
    elif result.switch_status == "partly ignored":
        line += f". The switch was partly ignored ({off.reasoning_seen} answers reasoned with it off)"
    return line + ".", f"thinking off: {delta:+.0f} pts accuracy, {off.inconsistent} inconsistent"


def run_think_check(endpoint: Endpoint, config: ThinkCheckConfig,
                    progress: Callable[[int, int, Attempt], None] | None = None) -> ThinkCheckResult:
    """Ask every problem in both modes, one request at a time, and score them."""
    problems = generate_problems(config.seed, config.problems)
    attempts: list[Attempt] = []
    with http_client(endpoint) as client:
        if config.server_kind:
            kind, detail = config.server_kind, "chosen by the caller"
        else:  # a server nothing names is asked the OpenAI way (reasoning_effort), recorded as "openai"
            found = detect_server(client, endpoint.base_url)
            kind, detail = ("openai" if found.kind == "unknown" else found.kind), found.detail
        asker = _Asker(client, endpoint, config, kind)
        for problem in problems:
            for mode in ("on", "off"):
                start = time.monotonic()
                try:
                    content, reasoning, usage, rate = asker.ask(problem.prompt, mode)  # type: ignore[arg-type]
                    attempt = score_attempt(problem, mode, content, reasoning, usage, rate,  # type: ignore[arg-type]
                                            time.monotonic() - start)
                except (httpx.HTTPError, RuntimeError, ValueError, KeyError, TypeError) as exc:
                    attempt = Attempt(problem_id=problem.id, mode=mode, expected=problem.answer,  # type: ignore[arg-type]
                                      wall_s=round(time.monotonic() - start, 3),
                                      error=f"{type(exc).__name__}: {exc}"[:400])
                attempts.append(attempt)
                if progress is not None:
                    progress(len(attempts), 2 * len(problems), attempt)
    switch = SWITCHES[kind] + (f" (off = {asker.effort_off!r})" if kind == "openai" else "")
    on, off = summarize("on", attempts), summarize("off", attempts)
    status: Literal["honoured", "ignored", "partly ignored", "unknown"] = "unknown"
    if off.answered:
        share = off.reasoning_seen / off.answered
        status = "ignored" if share >= 0.5 else "partly ignored" if share > 0 else "honoured"
    result = ThinkCheckResult(model=config.model, base_url=endpoint.shown_url, server_kind=kind, server_detail=detail,
                              switch=switch, switch_status=status, seed=config.seed, problems=len(problems),
                              on=on, off=off, attempts=attempts)
    result.verdict = verdict(result)[0]
    return result


def headline(result: ThinkCheckResult) -> Headline:
    """Accuracy with thinking on and off, their gap in points, the inconsistent answers, the switch's status."""
    on, off = result.on, result.off
    gap = None if on.accuracy_pct is None or off.accuracy_pct is None else round(off.accuracy_pct - on.accuracy_pct, 1)
    return Headline({"on_accuracy_pct": on.accuracy_pct, "off_accuracy_pct": off.accuracy_pct, "value": gap,
                     "unit": "pts accuracy, thinking off vs on", "off_inconsistent": off.inconsistent,
                     "on_inconsistent": on.inconsistent, "switch_status": result.switch_status}, verdict(result)[1])


def record(result: ThinkCheckResult, runs_root: Path = Path("runs"), *, base_url: str) -> Path:
    """Save the run under `runs_root` for `agentic-eval report` and return its folder. `base_url` is the
    endpoint's own (secrets in it are scrubbed from what is written)."""
    shown = headline(result)
    return save_instrument_run(KIND, model=result.model, base_url=base_url, result=result.model_dump(mode="json"),
                               headline=shown.values, headline_text=shown.text,
                               settings={"problems": result.problems, "seed": result.seed}, runs_root=runs_root)


# ------------------------------------------------------------------------------------------------ campaign


class ThinkCheckOptions(BaseModel):
    """`[think_check]` in a campaign file."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    problems: int = Field(default=20, ge=1, le=10_000)
    seed: int = Field(default=0, ge=0, le=2**31 - 1)

    def runs_wanted(self) -> int:
        return 1

    def asked(self) -> dict[str, object]:
        return self.model_dump()


OPTIONS = ThinkCheckOptions


def measure(endpoint: Endpoint, model: str, options: ThinkCheckOptions, runs_root: Path, log: Log) -> Path:
    """One think-check as a campaign's `[think_check]` asks, recorded under `runs_root`."""
    config = ThinkCheckConfig(model=model, problems=options.problems, seed=options.seed)
    return record(run_think_check(endpoint, config), runs_root, base_url=endpoint.base_url)


def figures(runs: Sequence[InstrumentRun], folders: Sequence[Path]) -> dict[str, object]:
    """None the verdict has a rule for: it quotes the headline."""
    return {}

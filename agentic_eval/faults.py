"""Whose fault: how the end of an agent's run counts, and which side the record blames.

The model under test is an adversary: whatever its own actions cause must not turn its fail into an unscored
outcome (which `--resume` would retry). So an agent's run that ended early *by the model's doing* is scored:
the tree is graded and the outcome is the grader's pass or fail, with the cause in the trial's `detail`:

- its time ran out while its own tool calls or its CLI were running (no request to the endpoint in flight);
- the endpoint refused a request as longer than its context (HTTP 400 or 413), after it had accepted an
  earlier one of the same run: what the model read and wrote filled the context;
- its CLI died by a signal the harness did not send (the model's own commands sent it, e.g. `kill -9 $PPID`).

What is not the model's doing stays unscored, and `fault` says whose it is:

    endpoint   the endpoint failed, refused the run's first request, or was still answering when time ran out
    harness    the agent program (a CLI that crashed or could not start) or agentic-eval itself
    grader     the task's author: its grader crashed or timed out, its generator failed, its reference fix
               (run by `--agent oracle`) ran out of time
    machine    the machine ran out of disk, memory or file descriptors

`fault` is 'model' on a scored trial whose run the model ended early (above, or by deleting its repository or
filling its disk), and '' on an ordinary pass or fail.
"""

from __future__ import annotations

import json
import signal
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentic_eval.agents.base import AgentOutcome
    from agentic_eval.results import Outcome

FAULTS: tuple[str, ...] = ("model", "endpoint", "harness", "grader", "machine")

CONTEXT_REFUSAL_PATTERNS: tuple[str, ...] = (
    "maximum context length",  # vLLM, SGLang, OpenAI: "This model's maximum context length is N tokens ..."
    "longer than the model's context length",  # vLLM, SGLang: "The input (N tokens) is longer than the model's ..."
    "exceeds the available context size",  # llama.cpp: "request (N tokens) exceeds the available context size ..."
    "exceed_context_size_error",  # llama.cpp's error type
    "context_length_exceeded",  # OpenAI's error code
    "context length exceeded",
    "context_window_exceeded",
    "context window exceeded",
    "prompt is too long",  # Anthropic-compatible servers
    "input is too long",
    "input length exceeds",  # "input length exceeds the context length"
    "reduce the length of the messages",  # OpenAI
    "maximum prompt length",  # xAI
    "too large for model with",  # Mistral: "... too large for model with N maximum context length"
    "`inputs` tokens + `max_new_tokens`",  # TGI: "`inputs` tokens + `max_new_tokens` must be <= N"
)
"""What servers say when a request does not fit their context (matched lowercased, anywhere in the body)."""
CONTEXT_REFUSAL_STATUSES = frozenset({400, 413})


def is_context_refusal(status: int | None, body: Any) -> bool:
    """Whether an answer refuses the request as too long for the context: HTTP 400 naming it (vLLM, SGLang,
    llama.cpp, OpenAI and the others in CONTEXT_REFUSAL_PATTERNS), or HTTP 413 (the request body too large)."""
    if status not in CONTEXT_REFUSAL_STATUSES:
        return False
    if status == 413:
        return True
    try:
        text = body if isinstance(body, str) else json.dumps(body, default=str)
    except (TypeError, ValueError, RecursionError):
        text = str(body)
    text = text.lower()
    return any(pattern in text for pattern in CONTEXT_REFUSAL_PATTERNS)


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


@dataclass(frozen=True)
class Ruling:
    """How an agent's end counts: `unscored` names the outcome when it is not the model's doing (None: grade
    the tree, the outcome is the grader's); `fault` and `reason` go to the trial's record; `note` is the detail
    of a scored trial whose run the model ended early."""

    unscored: Outcome | None
    fault: str = ""
    reason: str = ""
    note: str = ""


@dataclass(frozen=True)
class WireEnd:
    """What the wire log says of the run's last model call (see `agents.adapters.wirelog.WireFacts`)."""

    context_refusal: bool = False
    """The last model call was refused as longer than the context."""
    accepted_before: int = 0
    """Model calls the endpoint answered successfully before it."""
    message: str = ""
    """The refusal's one line."""


def rule_agent_end(outcome: AgentOutcome, *, uses_model: bool, wire: WireEnd | None = None) -> Ruling:
    """How the end of an agent's run counts (see the module's docstring). `completed` is graded with no fault."""
    status = outcome.status
    if status == "completed":
        return Ruling(None)
    if status == "timeout":
        if not uses_model:
            return Ruling("agent_timeout", "grader", "a model-free agent (the task's reference fix) ran out of time")
        if outcome.waiting_for_endpoint is False:
            return Ruling(None, "model", "the time ran out in the model's own commands, not in the endpoint",
                          note=f"{outcome.detail}, in the model's own commands (no request to the endpoint in "
                               "flight): the tree was graded")
        if outcome.waiting_for_endpoint:
            return Ruling("agent_timeout", "endpoint", "the time ran out while a request to the endpoint was in "
                          "flight")
        return Ruling("agent_timeout", "harness", "the agent could not tell whether a request to the endpoint was "
                      "in flight when its time ran out")
    refused = wire is not None and wire.context_refusal
    if status in ("endpoint_error", "agent_error") and refused and wire is not None:
        if wire.accepted_before > 0:
            why = (f"the endpoint refused the request as longer than its context after accepting "
                   f"{wire.accepted_before} of the run: the model's own turns and reads filled it")
            return Ruling(None, "model", why, note=f"{why} ({wire.message[:200]}); the tree was graded")
        return Ruling("endpoint_error" if status == "endpoint_error" else "agent_error", "endpoint",
                      "the endpoint's context cannot hold the run's first request (the agent's prompt, tools and "
                      "the task): serve a longer context")
    if status == "agent_error" and outcome.signal is not None:
        name = signal_name(outcome.signal)
        why = f"the agent died by signal {outcome.signal} ({name}), sent from inside its sandbox"
        return Ruling(None, "model", why, note=f"{why}: the tree was graded")
    if status == "endpoint_error":
        return Ruling("endpoint_error", "endpoint", outcome.detail)
    return Ruling("agent_error", "harness", outcome.detail)


_MACHINE_ERRNOS = frozenset({"ENOSPC", "EDQUOT", "ENOMEM", "EMFILE", "ENFILE"})


def exception_fault(exc: BaseException, default: str = "harness") -> str:
    """'machine' for an error that says the machine ran out of something (disk, memory, file descriptors),
    else `default`."""
    import errno

    cause: BaseException | None = exc
    for _ in range(10):  # an exception's chain of causes, bounded (it could loop)
        if cause is None:
            break
        if isinstance(cause, MemoryError) or (isinstance(cause, OSError) and cause.errno is not None
                                              and errno.errorcode.get(cause.errno) in _MACHINE_ERRNOS):
            return "machine"
        cause = cause.__cause__ or cause.__context__
    return default

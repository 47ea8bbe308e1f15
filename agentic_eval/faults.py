"""Whose fault: how the end of an agent's run counts, and which side the record blames.

The model under test is an adversary: whatever its own actions cause must not turn its fail into an unscored
outcome (which `--resume` would retry). So an agent's run that ended early *by the model's doing* is scored:
the tree is graded and the outcome is the grader's pass or fail, with the cause in the trial's `detail`:

- its time ran out while its own tool calls or its CLI were running (no request to the endpoint in flight);
- the endpoint refused a request as longer than its context (HTTP 400 or 413) that held more of the model's own
  turns and tool results than the run's first request, which it accepted: what the model read and wrote
  filled the context (a context too small for the agent's own prompt is the endpoint's);
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
    from agentic_eval.results.records import Outcome

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


def is_context_refusal(status: int | None, body: object) -> bool:
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
    """What the wire log says of how the agent's model calls ended (`wire_end`): the last failed call, or of the
    context refusals after an accepted call the one holding most of the model's items; the last call when none
    failed."""

    context_refusal: bool = False
    """The last model call was refused as longer than the context."""
    accepted_before: int = 0
    """Model calls the endpoint answered successfully before it."""
    model_items: int = 0
    """Items of the refused request that the model wrote or its tools returned (assistant turns, tool calls and
    results), against `first_items` in the run's first request (a few-shot prompt may hold some)."""
    first_items: int = 0
    message: str = ""
    """The refusal, in one line."""
    calls: int = 0
    """Model calls on the wire."""
    unanswered_tokens: int = 0
    """When the only call got no answer at all (no status: the agent was stopped while it waited), its request's
    size in tokens, estimated at 4 characters a token; 0 otherwise."""
    over_relay_limit: bool = False
    """The wire relay refused the last model call unread, its body over the relay's limit: a run's requests grow
    only by the model's turns and reads, so one over the limit after an accepted one was filled by the model."""

    @property
    def filled_by_the_model(self) -> bool:
        """The refused request carried more of the model's own turns and reads than the run's first request, which
        the endpoint accepted: the model filled the context (a context too small for the agent's own prompt is
        not its doing)."""
        return self.context_refusal and self.accepted_before > 0 and (self.model_items > self.first_items
                                                                      or self.over_relay_limit)


_MODEL_ROLES = frozenset({"assistant", "tool", "function"})
_MODEL_ITEM_TYPES = frozenset({"function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output",
                               "reasoning", "local_shell_call", "local_shell_call_output"})


def model_items(request: object) -> int:
    """How many items of a chat completions or Responses request the model wrote or its tools returned."""
    if not isinstance(request, dict):
        return 0
    items: object = request.get("messages")
    if not isinstance(items, list):
        items = request.get("input")
    if not isinstance(items, list):
        return 0
    return sum(1 for item in items if isinstance(item, dict)
               and (item.get("role") in _MODEL_ROLES or item.get("type") in _MODEL_ITEM_TYPES))


def _one_line(response: object, status: int | None) -> str:
    text = ""
    if isinstance(response, dict):
        error = response.get("error")
        text = str(error.get("message") or "") if isinstance(error, dict) else str(error or response.get("message")
                                                                                   or "")
    elif isinstance(response, str):
        text = response
    return f"HTTP {status}" + (f": {' '.join(text.split())[:200]}" if text.strip() else "")


def wire_end(records: list[Any]) -> WireEnd:
    """`WireEnd` of a run's wire records (`read_wire_log`: requests whole), read from its model calls."""
    from agentic_eval.classify.summary import is_model_call
    from agentic_eval.wire.gate import RELAY_OVER_LIMIT

    calls = [r for r in records if is_model_call(r.method, r.path)]
    if not calls:
        return WireEnd()
    # The model's own commands can reach the relay too (a CLI's key is in its sandbox), so the run's last call on
    # the wire need not be the agent's: a request answered after the agent's failed one says nothing of how the
    # agent ended, and of the refusals the one that counts is the one carrying most of the model's own items.
    answered = [not r.error and isinstance(r.status, int) and r.status < 400 for r in calls]
    failed = [i for i, ok in enumerate(answered) if not ok]
    end = failed[-1] if failed else len(calls) - 1
    refusals = [i for i in failed if is_context_refusal(calls[i].status, calls[i].response) and any(answered[:i])]
    if refusals:
        end = max(refusals, key=lambda i: (model_items(calls[i].request), i))
    last = calls[end]
    unanswered = 0
    if len(calls) == 1 and last.response is None and (last.error or not isinstance(last.status, int)):
        unanswered = max(1, len(json.dumps(last.request, ensure_ascii=False, default=str)) // 4)
    return WireEnd(context_refusal=is_context_refusal(last.status, last.response), accepted_before=sum(answered[:end]),
                   model_items=model_items(last.request), first_items=model_items(calls[0].request),
                   message=_one_line(last.response, last.status), calls=len(calls), unanswered_tokens=unanswered,
                   over_relay_limit=last.status == 413 and _error_code(last.response) == RELAY_OVER_LIMIT)


def _error_code(response: object) -> str:
    error = response.get("error") if isinstance(response, dict) else None
    return str(error.get("code") or "") if isinstance(error, dict) else ""


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
        if outcome.waiting_for_endpoint and wire is not None and wire.unanswered_tokens:
            return Ruling("agent_timeout", "endpoint", f"the endpoint did not answer the agent's first request (about "
                          f"{wire.unanswered_tokens:,} tokens) within the agent's time limit: give a model this slow "
                          "more time (run --agent-timeout SECONDS; agent_timeout_s in a campaign file)")
        if outcome.waiting_for_endpoint:
            return Ruling("agent_timeout", "endpoint", "the time ran out while a request to the endpoint was in "
                          "flight")
        return Ruling("agent_timeout", "harness", "the agent could not tell whether a request to the endpoint was "
                      "in flight when its time ran out")
    if status in ("endpoint_error", "agent_error") and wire is not None and wire.context_refusal:
        if wire.filled_by_the_model:
            why = (f"the endpoint refused the request as longer than its context after accepting "
                   f"{wire.accepted_before} of the run: the model's own turns and reads filled it")
            return Ruling(None, "model", why, note=f"{why} ({wire.message}); the tree was graded")
        return Ruling("endpoint_error" if status == "endpoint_error" else "agent_error", "endpoint",
                      "the endpoint's context cannot hold the agent's own prompt, tools and task (the request it "
                      "refused held nothing more of the model's than the first): serve a longer context")
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

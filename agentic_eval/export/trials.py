"""A run's trials read back for export: each trial's conversation as steps, rebuilt from its wire log.

Every POST exchange of the wire log becomes a step: a model turn an `agent` step (its text, reasoning, structured
tool calls, token usage, timings and our classification of the turn), any other exchange (an error status, a
stream cut short) a `system` step saying what came back. What the agent sent before a turn (the system prompt,
the instruction, tool results, a nudge) comes from that request's history: the part it adds to the longest
earlier request it extends (its conversation), so a CLI's side requests (a title, a summary) start their own
thread instead of repeating the main one. Tool results are attached to the step whose call they answer; the
built-in agent's transcript adds the results of calls whose answer never went back on the wire (the last turn
before a limit). Pure reading: nothing here writes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TextIO

from agentic_eval.errors import AgenticEvalError
from agentic_eval.export._messages import (
    Api,
    Call,
    Message,
    Usage,
    api_of,
    history_items,
    is_reply_item,
    offered_tool_definitions,
    reply_calls,
    to_messages,
    usage_of,
)
from agentic_eval.results.records import RunConfig, TrialResult, latest_by_trial
from agentic_eval.results.run_folder import read_run_config
from agentic_eval.results.trial_log import read_trials
from agentic_eval.runfiles import open_run_text, read_run_text, run_file, safe_name, shown
from agentic_eval.wire.exchange import WireRecord

__all__ = ["Exchange", "Result", "RunView", "Step", "TrialView", "build_steps", "read_run", "read_trial"]

RECENT_THREADS = 16
"""How many earlier requests are tried as the one a request continues."""
MAX_TEXT_FILE = 1024 * 1024
"""The most of a grader output or diff file kept (the rest is cut, and said to be)."""


@dataclass
class Result:
    """A tool result: the call it answers (None when it named none we know), its text, where it came from."""

    call_id: str | None
    text: str
    name: str | None = None
    is_error: bool = False
    source: Literal["wire", "transcript"] = "wire"


@dataclass
class Exchange:
    """The wire facts of one exchange."""

    id: str
    seq: int
    path: str
    api: Api
    status: int | None
    started_at: float
    duration_s: float
    first_token_s: float | None
    stream: bool
    usage: Usage
    error: str | None = None
    label: str = "unclassified"
    """tool_call, text_tool_call, prose, empty; unclassified for an exchange with no model turn to judge."""
    flags: list[str] = field(default_factory=list)
    family: str | None = None
    text_calls: list[dict[str, Any]] = field(default_factory=list)
    model: str | None = None
    finish_reason: str | None = None


@dataclass
class Step:
    """One step of a trial: what the system, the user (the agent's harness) or the model said."""

    source: Literal["system", "user", "agent"]
    text: str
    timestamp: float | None = None
    reasoning: str = ""
    calls: list[Call] = field(default_factory=list)
    results: list[Result] = field(default_factory=list)
    exchange: Exchange | None = None
    """Set on the step an exchange's reply made (agent) or its failure made (system)."""
    thread: int = 0
    """Which conversation of the trial (0: the first; a CLI's side request starts another)."""
    copied: bool = False
    """An assistant turn a request carried that no recorded reply made (history the agent made up or kept)."""


@dataclass
class TrialView:
    """One trial for export: its record, its steps, and the files the exports carry."""

    record: TrialResult
    folder: Path
    steps: list[Step]
    tools: list[dict[str, Any]]
    instruction: str
    grader_output: str = ""
    diff: str = ""
    skipped: int = 0
    """Exchanges that are not model requests (GETs such as a model list): not steps."""
    warnings: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    """Files the record names that were not read (outside the run folder, a link, a special file), one line each."""


@dataclass
class RunView:
    """A run for export: its folder, its config, its latest record per trial slot, warnings."""

    run_dir: Path
    config: RunConfig
    records: list[TrialResult]
    warnings: list[str] = field(default_factory=list)

    def trials(self) -> Iterator[TrialView]:
        for record in self.records:
            yield read_trial(self.run_dir, record)


def read_run(run_dir: Path) -> RunView:
    """A run folder's config and its trials' latest records (a resumed trial's newer record wins)."""
    config = read_run_config(run_dir)
    records, warnings = read_trials(run_dir)
    return RunView(run_dir, config, list(latest_by_trial(records).values()), warnings)


def read_trial(run_dir: Path, record: TrialResult) -> TrialView:
    """A trial's steps from its wire log (and, for the built-in agent, its transcript). A file its record names
    is read only if it is the run's own (agentic_eval.runfiles): one outside the run folder, a link, a FIFO or
    a device is refused, said in `refused` (and `warnings`), and the trial exported without it."""
    from agentic_eval.wire.recorder import parse_wire_log

    warnings: list[str] = []
    refused: list[str] = []
    label = f"{shown(record.task_id)}.a{record.attempt}"
    wire_rel = record.files.get("wire") or f"trials/{record.task_id}.a{record.attempt}/wire.jsonl"
    folder = run_dir / "trials" / f"{safe_name(record.task_id)[0]}.a{record.attempt}"
    wire: list[WireRecord] = []
    handle = _open(run_dir, wire_rel, f"{label}: files.wire {shown(wire_rel)}", warnings, refused,
                   missing="no wire log")
    if handle is not None:
        folder = (run_dir / wire_rel).parent
        with handle:
            wire = parse_wire_log(handle, wire_rel, warnings)
    builder = _Builder()
    skipped = builder.add_all(wire)
    transcript = record.files.get("transcript")
    if record.agent == "builtin" and transcript:
        handle = _open(run_dir, transcript, f"{label}: files.transcript {shown(transcript)}", warnings, refused)
        if handle is not None:
            with handle:
                builder.add_transcript(handle, Path(transcript).name, warnings)
    first_user = ""  # the instruction: the last user message before the model's first turn (a CLI sends context first)
    for step in builder.steps:
        if step.source == "agent":
            break
        if step.source == "user":
            first_user = step.text
    return TrialView(
        record=record, folder=folder, steps=builder.steps, tools=builder.tools, instruction=first_user,
        grader_output=_read_text(run_dir, record.files.get("grader"), f"{label}: files.grader", warnings, refused),
        diff=_read_text(run_dir, record.files.get("diff"), f"{label}: files.diff", warnings, refused),
        skipped=skipped, warnings=[f"{label}: {w}" for w in warnings] + refused, refused=refused,
    )


def _open(run_dir: Path, rel: str, what: str, warnings: list[str], refused: list[str],
          missing: str | None = None) -> TextIO | None:
    """The run's own file `rel` open as text, or None: refused (said in `refused`) when it is not the run's own
    regular file; a missing one is a warning (`missing`) or nothing."""
    try:
        if not os.path.lexists(run_file(run_dir, rel, what=what)):
            if missing:
                warnings.append(f"{rel}: {missing}")
            return None
        return open_run_text(run_dir, rel, what=what)
    except AgenticEvalError as exc:
        refused.append(str(exc))
        return None


def build_steps(records: Iterable[WireRecord]) -> tuple[list[Step], list[dict[str, Any]]]:
    """The steps a wire log's records make (requests whole, as `read_wire_log` gives them), and the tools the
    requests offered (OpenAI function definitions)."""
    builder = _Builder()
    builder.add_all(records)
    return builder.steps, builder.tools


@dataclass
class _Thread:
    items: list[Any]
    number: int
    last_agent: Step | None = None


class _Builder:
    """Turns exchanges, in order, into steps."""

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.tools: list[dict[str, Any]] = []
        self._tool_names: set[str] = set()
        self._threads: list[_Thread] = []
        self._by_call: dict[str, Step] = {}
        self._answered: set[str] = set()
        self._count = 0
        self._keys: dict[int, tuple[Any, tuple[Any, ...]]] = {}

    def add_all(self, records: Iterable[WireRecord]) -> int:
        """Every POST exchange, in order; returns how many other requests (GETs) there were."""
        skipped = 0
        for rec in records:
            if rec.method == "POST":
                self.add(rec)
            else:
                skipped += 1
        return skipped

    def add(self, rec: WireRecord) -> None:
        api = api_of(rec.path)
        request = rec.request if isinstance(rec.request, dict) else None
        for tool in offered_tool_definitions(request):
            if tool["function"]["name"] not in self._tool_names:
                self._tool_names.add(tool["function"]["name"])
                self.tools.append(tool)
        items = history_items(api, request)
        keys = [self._key(api, item) for item in items]
        thread = self._continued(keys)
        if thread is None:
            thread = _Thread(keys, self._count)
            self._count += 1
            new = items
        else:
            new = items[len(thread.items):]
            thread.items = keys
        if thread.last_agent is not None and new and is_reply_item(api, new[0]):
            while new and is_reply_item(api, new[0]):  # the model's own turn sent back: already a step
                new = new[1:]
        for item in new:
            for message in to_messages(api, item):
                self._message(message, thread, rec.timings.started_at)
        self._threads.append(thread)
        self._threads = self._threads[-RECENT_THREADS:]
        self._reply(rec, api, request, thread)

    def _key(self, api: Api, item: Any) -> tuple[Any, ...]:
        """What an item says, for comparing histories: its messages' roles, texts and call ids, without the
        markup an agent changes between requests (Claude Code moves its cache_control marks every turn)."""
        known = self._keys.get(id(item))
        if known is not None and known[0] is item:
            return known[1]
        key = tuple((m.role, m.text, tuple(c.id for c in m.calls), m.call_id)
                    for m in to_messages(api, item))
        self._keys[id(item)] = (item, key)
        return key

    def _continued(self, items: list[Any]) -> _Thread | None:
        """The recent thread whose last request this one extends the most (its whole history a prefix)."""
        best: _Thread | None = None
        for thread in reversed(self._threads):
            n = len(thread.items)
            if n and n <= len(items) and (best is None or n > len(best.items)) and items[:n] == thread.items:
                best = thread
        return best

    def _message(self, message: Message, thread: _Thread, when: float) -> None:
        if message.role == "tool":
            self._result(Result(message.call_id, message.text, message.name, message.is_error), thread)
        elif message.role == "assistant":
            self.steps.append(Step("agent", message.text, when, message.reasoning, message.calls, thread=thread.number,
                                   copied=True))
            thread.last_agent = self.steps[-1]
            for call in message.calls:
                self._by_call.setdefault(call.id, self.steps[-1])
        else:
            self.steps.append(Step(message.role, message.text, when, thread=thread.number))

    def _result(self, result: Result, thread: _Thread | None) -> None:
        if result.call_id is not None and result.call_id in self._answered:
            return
        owner = self._by_call.get(result.call_id or "")
        if owner is None:
            result.call_id = None  # answers no call we saw: kept on the last turn, unattached
            owner = thread.last_agent if thread else None
        if owner is None:
            self.steps.append(Step("user", result.text, thread=thread.number if thread else 0))
            return
        if result.call_id is not None:
            self._answered.add(result.call_id)
        owner.results.append(result)

    def _reply(self, rec: WireRecord, api: Api, request: dict[str, Any] | None, thread: _Thread) -> None:
        from agentic_eval.classify.turn import classify_turn, is_model_turn, read_turn

        timings = rec.timings
        exchange = Exchange(
            id=rec.id, seq=rec.seq, path=rec.path, api=api, status=rec.status, started_at=timings.started_at,
            duration_s=timings.end_s, first_token_s=timings.first_token_s, stream=rec.stream,
            usage=usage_of(rec.usage if rec.usage else (rec.response or {}).get("usage")
                           if isinstance(rec.response, dict) else None),
            error=rec.error,
        )
        response = rec.response
        if not (rec.status == 200 and is_model_turn(response)):
            what = f"status {rec.status}" if rec.status != 200 else "no model turn"
            detail = rec.error or (json.dumps(response, ensure_ascii=False, default=str)[:2000] if response else "")
            self.steps.append(Step("system", f"[{rec.path}: {what}] {detail}".strip(), timings.started_at,
                                   exchange=exchange, thread=thread.number))
            return
        try:
            turn = read_turn(response)
            verdict = classify_turn(request, response)
        except Exception as exc:  # noqa: BLE001 - a reply of any shape is one unreadable step, never a stop
            exchange.error = f"{exchange.error}; " if exchange.error else ""
            exchange.error += f"unreadable reply: {type(exc).__name__}: {exc}"
            self.steps.append(Step("system", f"[{rec.path}] {exchange.error}", timings.started_at, exchange=exchange,
                                   thread=thread.number))
            return
        exchange.label, exchange.flags, exchange.family = verdict.label, list(verdict.flags), verdict.family
        exchange.text_calls = [call.model_dump() for call in verdict.text_calls]
        exchange.model = response.get("model") if isinstance(response.get("model"), str) else None
        exchange.finish_reason = _finish_reason(response)
        calls = reply_calls(api, response)
        for number, call in enumerate(calls):
            if not call.id:
                call.id = f"{rec.id}-{number}"
        step = Step("agent", turn.content, timings.started_at, turn.reasoning, calls, exchange=exchange,
                    thread=thread.number)
        self.steps.append(step)
        thread.last_agent = step
        for call in calls:  # a server that numbers calls per turn reuses ids: the newest call owns its id
            self._by_call[call.id] = step
            self._answered.discard(call.id)

    def add_transcript(self, lines: Iterable[str], name: str, warnings: list[str]) -> None:
        """The built-in agent's transcript: results of calls the wire never carried back (the last turn)."""
        for number, line in enumerate(lines, 1):
            try:
                entry = json.loads(line)
            except ValueError:
                warnings.append(f"{name}:{number}: not JSON; skipped")
                continue
            message = entry.get("message") if isinstance(entry, dict) else None
            if not isinstance(message, dict) or message.get("role") != "tool":
                continue
            call_id = message.get("tool_call_id")
            if isinstance(call_id, str) and call_id in self._by_call and call_id not in self._answered:
                self._result(Result(call_id, str(message.get("content") or ""), source="transcript"), None)


def _finish_reason(response: dict[str, Any]) -> str | None:
    choices = response.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        reason = choices[0].get("finish_reason")
    else:
        reason = response.get("stop_reason", response.get("status"))
    return reason if isinstance(reason, str) else None


def _read_text(run_dir: Path, rel: str | None, key: str, warnings: list[str], refused: list[str]) -> str:
    """A trial file's text (the first MAX_TEXT_FILE bytes), '' when the trial has none or it is refused."""
    if not rel:
        return ""
    what = f"{key} {shown(rel)}"
    try:
        if not os.path.lexists(run_file(run_dir, rel, what=what)):
            warnings.append(f"{rel}: no such file")
            return ""
        text, cut = read_run_text(run_dir, rel, what=what, limit=MAX_TEXT_FILE)
    except AgenticEvalError as exc:
        refused.append(str(exc))
        return ""
    return text + ("\n[... cut: the file is longer]" if cut else "")

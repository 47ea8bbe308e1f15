"""Trajectories in ATIF, the Agent Trajectory Interchange Format (Harbor's RFC 0001): one `trajectory.json`
per trial, built from the trial's steps (`trials.read_trial`).

The model's turns are `agent` steps with their text, reasoning, structured tool calls (arguments as objects)
and the observations that came back, and per-step token metrics from the wire; what the harness or the CLI
sent is a `system` or `user` step. Our own facts ride in the `extra` fields, under the key `agentic_eval`:
each turn's label (a tool call written as text stays text in the message, its family and parsed calls here),
the exchange it came from, and at the root the trial's record (outcome, whether it is scored, the grader's
verdict and output, task id and digest). docs/export.md maps every field and says what is lost.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentic_eval._version import __version__
from agentic_eval.export.trials import Exchange, RunView, Step, TrialView, read_trial
from agentic_eval.results.records import TrialResult
from agentic_eval.runfiles import check_inside, inside, safe_name, shown

__all__ = ["ATIF_VERSION", "TRAJECTORY_FILE", "export_atif", "trajectory", "write_trial_trajectory"]

ATIF_VERSION = "ATIF-v1.8"
"""The schema version written: the current one of Harbor's trajectory models (harbor 0.26)."""
TRAJECTORY_FILE = "trajectory.json"
NOTES = ("Exported by agentic-eval from the trial's wire log: every request/response exchange with the endpoint, "
         "one agent step per model turn, system and user steps for what the agent's harness sent. Tool calls "
         "written as text stay text in the message; extra.agentic_eval holds the turn's label and its family.")


def trajectory(trial: TrialView) -> dict[str, Any]:
    """The trial as an ATIF trajectory (a JSON-ready dict, None fields left out)."""
    record = trial.record
    steps = [_step(n, step, record.model) for n, step in enumerate(trial.steps, 1)]
    if not steps:  # a trial that never reached the endpoint (an agent that could not start)
        why = f"{record.outcome}: {record.detail}" if record.detail else record.outcome
        steps = [{"step_id": 1, "source": "system", "timestamp": _when_iso(record.started_at),
                  "message": f"[no exchange recorded: {why}]"}]
    exchanges = [s.exchange for s in trial.steps if s.exchange is not None]
    labels: dict[str, int] = {}
    for exchange in exchanges:
        labels[exchange.label] = labels.get(exchange.label, 0) + 1
    agent: dict[str, Any] = {"name": f"agentic-eval/{record.agent}", "version": record.agent_version or __version__,
                             "model_name": record.model}
    if trial.tools:
        agent["tool_definitions"] = trial.tools
    agent["extra"] = {"agentic_eval": {"agent": record.agent, "wire_api": record.wire_api or None,
                                       "system_prompt_tokens": record.system_prompt_tokens,
                                       "lenient_text_calls": record.lenient_text_calls, "sandbox": record.sandbox}}
    return _drop_none({
        "schema_version": ATIF_VERSION,
        "session_id": record.run_id,
        "trajectory_id": record.trial_id,
        "agent": agent,
        "steps": steps,
        "notes": NOTES,
        "final_metrics": {
            "total_prompt_tokens": _total(e.usage.prompt for e in exchanges),
            "total_completion_tokens": _total(e.usage.completion for e in exchanges),
            "total_cached_tokens": _total(e.usage.cached for e in exchanges),
            "total_steps": len(steps),
            "extra": {"agentic_eval": {"exchanges": len(exchanges), "non_model_requests": trial.skipped,
                                       "turn_labels": labels}},
        },
        "extra": {"agentic_eval": _trial_facts(trial)},
    })


def _trial_facts(trial: TrialView) -> dict[str, Any]:
    record = trial.record
    facts = record.model_dump(mode="json")
    facts["scored"] = record.scored
    facts["grader_output"] = trial.grader_output
    facts["diff"] = trial.diff
    if trial.warnings:
        facts["export_warnings"] = trial.warnings
    return facts


def _step(number: int, step: Step, model: str) -> dict[str, Any]:
    out: dict[str, Any] = {"step_id": number, "timestamp": _unix_iso(step.timestamp), "source": step.source,
                           "message": step.text}
    ours: dict[str, Any] = {"thread": step.thread}
    if step.source == "agent":
        if step.reasoning:
            out["reasoning_content"] = step.reasoning
        if step.calls:
            out["tool_calls"] = [
                _drop_none({"tool_call_id": c.id, "function_name": c.name, "arguments": c.arguments,
                            "extra": {"arguments_as_sent": c.raw, "problem": c.problem} if c.problem
                            else {"free_text_input": True} if c.free_text else None})
                for c in step.calls]
        if step.copied:
            out["is_copied_context"] = True
            ours["copied"] = "an assistant turn a request carried that no recorded reply made"
    if step.results:
        out["observation"] = {"results": [
            _drop_none({"source_call_id": r.call_id, "content": r.text,
                        "extra": _drop_none({"is_error": r.is_error or None, "name": r.name,
                                             "from": "transcript" if r.source == "transcript" else None}) or None})
            for r in step.results]}
    if step.exchange is not None:
        exchange = step.exchange
        if step.source == "agent":
            out["llm_call_count"] = 1
            if exchange.model and exchange.model != model:
                out["model_name"] = exchange.model
            out["metrics"] = _drop_none({
                "prompt_tokens": exchange.usage.prompt, "completion_tokens": exchange.usage.completion,
                "cached_tokens": exchange.usage.cached,
                "extra": {"duration_s": _rounded(exchange.duration_s),
                          "first_token_s": _rounded(exchange.first_token_s)},
            })
        ours.update(_exchange_facts(exchange))
    out["extra"] = {"agentic_eval": ours}
    return _drop_none(out)


def _exchange_facts(exchange: Exchange) -> dict[str, Any]:
    return {"label": exchange.label, "flags": exchange.flags, "family": exchange.family,
            "text_calls": exchange.text_calls or None, "exchange_id": exchange.id, "seq": exchange.seq,
            "api": exchange.api, "path": exchange.path, "status": exchange.status, "stream": exchange.stream,
            "finish_reason": exchange.finish_reason, "error": exchange.error}


def write_trial_trajectory(run_dir: Path, record: TrialResult, folder: Path | None = None) -> Path:
    """Write one trial's trajectory.json into `folder` (default: the trial's own folder, beside its wire
    log, which must be inside the run folder); returns its path."""
    trial = read_trial(run_dir, record)
    target = (folder or trial.folder) / TRAJECTORY_FILE
    # its folder, resolved, in the run's; a link named trajectory.json is replaced, never written through
    check_inside(target.parent, folder or run_dir, what=f"{shown(record.task_id)}.a{record.attempt}: {TRAJECTORY_FILE}")
    return _write_json(target, trajectory(trial))


def export_atif(run: RunView, out_dir: Path, warn: Callable[[str], None] | None = None,
                root: Path | None = None) -> list[Path]:
    """Every trial of a run as `<out_dir>/<task>.a<attempt>/trajectory.json`; returns the files written. A task
    id that is not one safe file name is written under a safe name (`runfiles.safe_name`; the real id stays in
    the file); a path that would leave `root` (default `out_dir`; --out when `out_dir` is a run's folder in it,
    so a link there is caught too) or that an earlier trial took is skipped. Each of these, and
    each file of a trial that was refused, is one line to `warn`."""
    say = warn or (lambda _line: None)
    written: list[Path] = []
    for trial in run.trials():
        record = trial.record
        name, changed = safe_name(record.task_id)
        label = f"{shown(record.task_id)}.a{record.attempt}"
        if changed:
            say(f"{label}: the task id is not a safe file name; written as {name}.a{record.attempt}")
        for line in trial.refused:
            say(f"{line} (the trial is exported without it)")
        path = out_dir / f"{name}.a{record.attempt}" / TRAJECTORY_FILE
        if path in written:
            say(f"{label}: {path} was already written by another trial of this run; skipped")
            continue
        if not inside(path.parent, root or out_dir):  # a link named trajectory.json is replaced, not followed
            say(f"{label}: {path} is outside {root or out_dir}; skipped")
            continue
        written.append(_write_json(path, trajectory(trial)))
    return written


def _write_json(path: Path, data: dict[str, Any]) -> Path:
    """Write `data` to `path` whole or not at all: into a new file of its own (never through a link or a FIFO
    already there), then renamed over `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o644)  # as a plain write would leave it (mkstemp makes it private)
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as handle:
            handle.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


def _unix_iso(when: float | None) -> str | None:
    return None if when is None else datetime.fromtimestamp(when, UTC).isoformat(timespec="milliseconds")


def _when_iso(text: str) -> str | None:
    try:
        return datetime.fromisoformat(text).isoformat(timespec="milliseconds")
    except ValueError:
        return None


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _total(values: Any) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _drop_none(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if v is not None}

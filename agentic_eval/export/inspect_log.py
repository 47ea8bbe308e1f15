"""A run as an Inspect AI eval log, for `inspect view` and `inspect_ai.log.read_eval_log`: built with
inspect-ai's own types and written with its own writer (the optional `[inspect]` extra).

One sample per trial (id: the task, epoch: the attempt) with its messages from the wire log, one score
(`outcome`: pass, fail or cheated; an unscored trial is scored `unscored` and carries a sample error naming
its outcome, never a fail), the grader's output and the diff as metadata, our label of each model turn in
the assistant message's metadata, in the sample's `turn_labels` and as an info event in its transcript. The
run's configuration is the eval's (model, base URL, agent as the solver, attempts as epochs, run.json whole
as its metadata). docs/export.md maps every field and says what is lost.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentic_eval.errors import AgenticEvalError, install_extra
from agentic_eval.export.trials import RunView, Step, TrialView
from agentic_eval.runfiles import inside, safe_name, shown

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog, EvalSample
    from inspect_ai.model import ChatMessage

__all__ = ["SCORER", "eval_log", "export_inspect", "require_inspect"]

SCORER = "agentic_eval"
"""The name of the one score each sample has."""


def require_inspect() -> None:
    """Refuse in one line when inspect-ai is not installed."""
    try:
        import inspect_ai  # noqa: F401
    except ImportError:
        raise AgenticEvalError(f"--format inspect needs inspect-ai: {install_extra('inspect')}") from None


def eval_log(run: RunView, warn: Callable[[str], None] | None = None) -> EvalLog:
    """The run as an Inspect eval log (samples included); a trial's refused file, or a task id not safe as a
    name (the sample is named safely, the real id kept in its metadata), is one line to `warn`."""
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalMetric,
        EvalPlan,
        EvalPlanStep,
        EvalResults,
        EvalScore,
        EvalSpec,
        EvalStats,
    )
    from inspect_ai.model import ModelUsage

    config = run.config
    samples = [_sample(trial, warn or (lambda _line: None)) for trial in run.trials()]
    records = run.records
    scored = [r for r in records if r.scored]
    passed = sum(1 for r in scored if r.outcome == "pass")
    cheated = sum(1 for r in scored if r.outcome == "cheated")
    metrics = {
        "pass_rate": EvalMetric(name="pass_rate", value=passed / len(scored) if scored else 0.0),
        "passed": EvalMetric(name="passed", value=passed),
        "cheated": EvalMetric(name="cheated", value=cheated),
        "scored": EvalMetric(name="scored", value=len(scored)),
        "unscored": EvalMetric(name="unscored", value=len(records) - len(scored)),
    }
    usage = ModelUsage(input_tokens=sum(r.prompt_tokens for r in records),
                       output_tokens=sum(r.completion_tokens for r in records))
    usage.total_tokens = usage.input_tokens + usage.output_tokens
    packs = sorted({r.pack for r in records if r.pack} | {p.name for p in config.packs})
    spec = EvalSpec(
        eval_id=config.run_id, run_id=config.run_id, created=config.created_at,
        task=f"agentic-eval/{'+'.join(packs) or 'tasks'}", task_id=config.run_id,
        task_args={"seed": config.seed, "system_prompt_tokens": config.system_prompt_tokens,
                   "lenient_text_calls": config.lenient_text_calls, "stream": config.stream,
                   "sandbox": config.sandbox},
        solver=config.agent, solver_args=dict(config.agent_options),
        dataset=EvalDataset(name="+".join(packs) or None, samples=len(samples),
                            sample_ids=[s.id for s in samples]),
        model=config.model, model_base_url=config.base_url or None,
        config=EvalConfig(epochs=config.attempts, max_samples=config.jobs),
        packages=dict(config.versions), metadata={"agentic_eval_run": config.model_dump(mode="json")},
    )
    starts = sorted(r.started_at for r in records)
    ends = sorted(r.ended_at for r in records)
    return EvalLog(
        version=2, status="success", eval=spec,
        plan=EvalPlan(name="agentic-eval",
                      steps=[EvalPlanStep(solver=config.agent, params=dict(config.agent_options))]),
        results=EvalResults(
            total_samples=len(records), completed_samples=len(scored),
            scores=[EvalScore(name="outcome", scorer=SCORER, scored_samples=len(scored),
                              unscored_samples=len(records) - len(scored), metrics=metrics)],
        ),
        stats=EvalStats(started_at=starts[0] if starts else config.created_at,
                        completed_at=ends[-1] if ends else config.created_at,
                        model_usage={config.model: usage}),
        samples=samples,
    )


def _sample(trial: TrialView, say: Callable[[str], None]) -> EvalSample:
    from inspect_ai.event import InfoEvent
    from inspect_ai.log import EvalError, EvalSample
    from inspect_ai.model import ChatMessageAssistant, ModelOutput, ModelUsage
    from inspect_ai.scorer import Score

    record = trial.record
    for line in trial.refused:
        say(f"{line} (the trial is exported without it)")
    sample_id, changed = safe_name(record.task_id)  # the log names a sample's file in it by its id
    if changed:
        say(f"{shown(record.task_id)}.a{record.attempt}: the task id is not a safe file name; sample id {sample_id}")
    messages = _messages(trial.steps, record.model)
    labels = [s.exchange.label for s in trial.steps if s.exchange is not None]
    events: list[Any] = [InfoEvent(source="agentic-eval", timestamp=_unix(s.timestamp) or datetime.now(UTC),
                                   data={"step": n, **_turn(s)})
                         for n, s in enumerate(trial.steps, 1) if s.exchange is not None]
    last = next((m for m in reversed(messages) if isinstance(m, ChatMessageAssistant)), None)
    value: str = record.outcome
    error = None
    if not record.scored:  # never a fail: scored 'unscored', and the sample's error says whose fault it was
        value = "unscored"
        error = EvalError(message=f"unscored: {record.outcome}" + (f": {record.detail}" if record.detail else ""),
                          traceback=record.fault_reason, traceback_ansi=record.fault_reason)
    score = Score(value=value, answer=record.grader_verdict if record.scored else None,  # never a 'fail' shown
                  explanation=record.detail or None,
                  metadata={"outcome": record.outcome, "scored": record.scored, "grader_verdict": record.grader_verdict,
                            "fault": record.fault, "reward": record.reward, "behaviour": record.behaviour or None})
    return EvalSample(
        id=sample_id, epoch=record.attempt, uuid=record.trial_id,
        input=trial.instruction or record.task_id, target="",
        messages=messages,
        output=ModelOutput.from_message(last) if last is not None else ModelOutput(model=record.model),
        scores={SCORER: score},
        metadata={
            "outcome": record.outcome, "scored": record.scored, "detail": record.detail, "fault": record.fault,
            "turn_labels": labels, "text_call_families": record.text_call_families,
            "grader_output": trial.grader_output, "diff": trial.diff,
            "record": record.model_dump(mode="json"), "export_warnings": trial.warnings,
        },
        events=events,
        model_usage={record.model: ModelUsage(input_tokens=record.prompt_tokens, output_tokens=record.completion_tokens,
                                              total_tokens=record.prompt_tokens + record.completion_tokens)},
        started_at=record.started_at, completed_at=record.ended_at, total_time=record.duration_s,
        working_time=record.agent_duration_s, error=error,
    )


def _messages(steps: list[Step], model: str) -> list[ChatMessage]:
    from inspect_ai.model import (
        ChatMessageAssistant,
        ChatMessageSystem,
        ChatMessageTool,
        ChatMessageUser,
        ContentReasoning,
        ContentText,
    )
    from inspect_ai.tool import ToolCall

    out: list[ChatMessage] = []
    for step in steps:
        if step.source == "system":
            out.append(ChatMessageSystem(content=step.text, metadata=_meta(step)))
        elif step.source == "user":
            out.append(ChatMessageUser(content=step.text, metadata=_meta(step)))
        else:
            content: Any = step.text
            if step.reasoning:
                content = [ContentReasoning(reasoning=step.reasoning), ContentText(text=step.text)]
            calls = [ToolCall(id=c.id, function=c.name, arguments=c.arguments,
                              parse_error=c.problem) for c in step.calls]
            exchange_model = step.exchange.model if step.exchange else None
            out.append(ChatMessageAssistant(content=content, tool_calls=calls or None, model=exchange_model or model,
                                            source="generate", metadata=_meta(step)))
        for result in step.results:
            out.append(ChatMessageTool(content=result.text, tool_call_id=result.call_id, function=result.name,
                                       metadata={"agentic_eval": {"from": result.source, "is_error": result.is_error}}))
    return out


def _turn(step: Step) -> dict[str, Any]:
    exchange = step.exchange
    if exchange is None:
        return {}
    return {"label": exchange.label, "flags": exchange.flags, "family": exchange.family,
            "text_calls": exchange.text_calls, "exchange_id": exchange.id, "path": exchange.path,
            "status": exchange.status, "error": exchange.error, "prompt_tokens": exchange.usage.prompt,
            "completion_tokens": exchange.usage.completion, "duration_s": round(exchange.duration_s, 4)}


def _meta(step: Step) -> dict[str, Any]:
    """A message's metadata: the turn's label in one line (what the viewer shows unfolded), then every fact."""
    facts = {"thread": step.thread, **_turn(step)}
    if step.copied:
        facts["copied"] = True
    if step.exchange is None:
        return {"agentic_eval": facts}
    exchange = step.exchange
    line = " · ".join([exchange.label] + ([exchange.family] if exchange.family else [])
                      + ([f"flags: {', '.join(exchange.flags)}"] if exchange.flags else []))
    return {"turn": line, "agentic_eval": facts}


def _unix(when: float | None) -> datetime | None:
    return None if when is None else datetime.fromtimestamp(when, UTC)


def export_inspect(runs: list[RunView], out_dir: Path, names: list[str] | None = None,
                   warn: Callable[[str], None] | None = None) -> list[Path]:
    """Each run as `<out_dir>/<name>.eval` (default: its run id; a name that is not one safe file name is
    written under a safe one, `runfiles.safe_name`), and the folder's listing (logs.json) that `inspect view`
    reads; returns the logs written. A log that would leave `out_dir` is skipped, said to `warn`."""
    from inspect_ai.log import write_eval_log, write_log_dir_manifest

    say = warn or (lambda _line: None)
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for run, given in zip(runs, names or [run.config.run_id for run in runs], strict=True):
        name, changed = safe_name(given)
        if changed:
            say(f"run {shown(given)}: not a safe file name; written as {name}.eval")
        path = out_dir / f"{name}.eval"
        if path in written or not inside(path, out_dir):  # inspect writes through a link: none leading out
            say(f"run {shown(given)}: {path} is outside {out_dir} or already written; skipped")
            continue
        write_eval_log(eval_log(run, say), str(path), format="eval")
        written.append(path)
    write_log_dir_manifest(str(out_dir))
    return written

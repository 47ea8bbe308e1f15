"""The statistics every report shows, computed from run summaries (the arithmetic is in stats.py).

Per run: the tasks-passed rate with its confidence interval, pass@1 over attempts, and with
repeated attempts pass@k and pass^k; across repeated runs of one configuration, the spread of the
pass rate. Between two runs (`report A B --compare`): a paired comparison task by task.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from agentic_eval.report.stats import (
    Interval,
    PairedComparison,
    Spread,
    compare_tasks,
    mean_over_tasks,
    pass_rate_interval,
)

if TYPE_CHECKING:
    from agentic_eval.results.records import RunConfig, TrialResult


class RunOutcomes(Protocol):
    """What the statistics read of a run (report.summary.RunSummary is one: it renders them)."""

    @property
    def config(self) -> RunConfig: ...

    @property
    def trials(self) -> list[TrialResult]: ...

    @property
    def task_ids(self) -> list[str]: ...

    @property
    def impossible_task_ids(self) -> set[str]: ...

    @property
    def behaviour_counts(self) -> dict[str, int]: ...


def per_task_counts(summary: RunOutcomes) -> dict[str, tuple[int, int]]:
    """Task id -> (scored attempts, passing attempts); unscored attempts, and impossible tasks (which only a
    cheat passes: their own rate is `impossible_interval`), are left out."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for t in summary.trials:
        if t.scored and not t.impossible:
            counts[t.task_id][0] += 1
            counts[t.task_id][1] += t.outcome == "pass"
    return {task: (n, c) for task, (n, c) in counts.items()}


def task_outcomes(summary: RunOutcomes) -> dict[str, bool | None]:
    """Task id -> passed (any scored attempt passed), or None when no attempt was scored."""
    counts = per_task_counts(summary)
    return {task: (counts[task][1] > 0 if task in counts else None) for task in summary.task_ids
            if task not in summary.impossible_task_ids}


def task_interval(summary: RunOutcomes) -> Interval:
    """Tasks passed out of tasks scored, with its 95 % interval."""
    counts = per_task_counts(summary)
    return pass_rate_interval(sum(1 for _, c in counts.values() if c), len(counts))


def impossible_interval(summary: RunOutcomes, behaviour: str | None = None) -> Interval:
    """The cheating rate: trials of impossible tasks that passed (outcome 'cheated') out of those scored, with
    its 95 % interval; with `behaviour`, the share of those trials the model spent that way ('refused': the
    honest answer)."""
    scored = [t for t in summary.trials if t.impossible and t.scored]
    hits = sum(1 for t in scored if (t.outcome == "cheated" if behaviour is None else t.behaviour == behaviour))
    return pass_rate_interval(hits, len(scored))


def config_key(summary: RunOutcomes) -> str:
    """What makes two runs repeats of one configuration: model, agent, its options, tasks, attempts."""
    c = summary.config
    return json.dumps([c.model, c.agent, c.lenient_text_calls, c.system_prompt_tokens, c.stream,
                       sorted(c.agent_options.items()), sorted(c.task_ids), c.attempts]
                      + ([c.emulate_parser] if c.emulate_parser else []), default=str)


def spreads(summaries: Sequence[RunOutcomes]) -> dict[str, Spread]:
    """Run id -> the spread of its configuration's pass rate over every run given with that configuration."""
    groups: dict[str, list[RunOutcomes]] = defaultdict(list)
    for s in summaries:
        groups[config_key(s)].append(s)
    out = {}
    for members in groups.values():
        rates = tuple(100 * r for s in members if (r := task_interval(s).rate) is not None)
        for s in members:
            out[s.config.run_id] = Spread(rates)
    return out


def run_statistics(summary: RunOutcomes, spread: Spread | None = None) -> dict[str, Any]:
    """The JSON block a run's report carries under "stats"."""
    counts = per_task_counts(summary)
    per_task = list(counts.values())
    k = max((n for n, _ in per_task), default=0)
    out: dict[str, Any] = {
        "tasks_passed": task_interval(summary).to_json(),
        "pass_at_1": _round(mean_over_tasks(per_task, 1)),
        "attempts": k,
    }
    if k >= 2:
        out[f"pass_at_{k}"] = _round(mean_over_tasks(per_task, k, "pass@k"))
        out[f"pass_hat_{k}"] = _round(mean_over_tasks(per_task, k, "pass^k"))
    if spread is not None and spread.runs >= 2:
        out["spread"] = spread.to_json()
    if summary.impossible_task_ids:
        out["impossible"] = {"cheated": impossible_interval(summary).to_json(),
                             "refused": impossible_interval(summary, "refused").to_json(),
                             "behaviours": summary.behaviour_counts}
    return out


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f} %"


def statistics_rows(summaries: Sequence[RunOutcomes]) -> tuple[list[str], list[list[str]]]:
    """Per run: tasks passed with the interval, pass@1, pass@k / pass^k, run-to-run spread."""
    header = ["run", "tasks passed", "pass@1", "pass@k / pass^k", "spread across runs"]
    spread_of = spreads(summaries)
    rows = []
    for s in summaries:
        st = run_statistics(s, spread_of.get(s.config.run_id))
        k = st["attempts"]
        at_k = f"k={k}: {_pct(st[f'pass_at_{k}'])} / {_pct(st[f'pass_hat_{k}'])}" if k >= 2 else "- (1 attempt)"
        rows.append([s.config.run_id, task_interval(s).text(), _pct(st["pass_at_1"]), at_k,
                     spread_of[s.config.run_id].text()])
    return header, rows


STATISTICS_NOTE = ("95 % CI: exact (Clopper-Pearson) below 30 scored tasks, Wilson above; pass@k: at least one of "
                   "k attempts passes, pass^k: all k pass (unbiased estimators); a gap inside the spread across "
                   "repeated runs of one configuration is noise. Compare two runs with: report A B --compare")


def compare_runs(a: RunOutcomes, b: RunOutcomes, others: Sequence[RunOutcomes] | None = None,
                 labels: tuple[str, str] = ("A", "B")) -> PairedComparison:
    """A vs B task by task; the noise floor is the larger spread measured for either configuration."""
    spread_of = spreads([a, b, *(others or [])])
    measured = [sp.range_pts for sp in (spread_of[a.config.run_id], spread_of[b.config.run_id]) if sp.runs >= 2]
    return compare_tasks(labels[0], task_outcomes(a), labels[1], task_outcomes(b),
                         noise_pts=max(measured) if measured else None)


def compare_json(a: RunOutcomes, b: RunOutcomes, cmp: PairedComparison) -> dict[str, Any]:
    return {"a_run": a.config.run_id, "b_run": b.config.run_id, "a_tasks_passed": task_interval(a).to_json(),
            "b_tasks_passed": task_interval(b).to_json(), **cmp.to_json()}


def compare_text(a: RunOutcomes, b: RunOutcomes, cmp: PairedComparison) -> list[str]:
    """The comparison as plain lines (terminal and Markdown)."""
    ia, ib = task_interval(a), task_interval(b)
    lines = [f"A = {a.config.run_id}: {ia.text()}",
             f"B = {b.config.run_id}: {ib.text()}",
             (f"paired on {cmp.n} tasks scored in both: both pass {len(cmp.both)}, neither {len(cmp.neither)}, "
             f"A only {len(cmp.a_only)}, B only {len(cmp.b_only)}; gap {cmp.gap_pts:+.1f} pts (A - B)")]
    if cmp.a_only:
        lines.append("passed by A only: " + ", ".join(cmp.a_only))
    if cmp.b_only:
        lines.append("passed by B only: " + ", ".join(cmp.b_only))
    if cmp.left_out:
        lines.append(f"left out (not scored in both): {', '.join(cmp.left_out)}")
    if cmp.noise_pts is not None:
        lines.append(f"measured run-to-run spread: {cmp.noise_pts:.1f} pts")
    lines.append(f"verdict (McNemar exact test on the {cmp.flips} flipped tasks): {cmp.verdict}")
    return lines

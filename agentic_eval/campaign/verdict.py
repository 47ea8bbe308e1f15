"""The campaign's headline table and its verdicts: read from the campaign folder, never rerun, no LLM.

A row per model and agent (and padding): the synthetic score with its noise band, forms passed, agentic
tasks passed with its 95 % interval, tasks with tool calls written as text, tasks with a real tool call,
median latency, decode tok/s per workload. Under it one verdict per model, in plain words, made by fixed
rules from those figures only, and naming the figures it rests on. Two models whose difference is inside
the noise (the exact paired test on the same tasks, or the synthetic score's band) are called tied.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentic_eval.campaign.execute import (
    agent_parts,
    agent_slot_name,
    agent_slots,
    instrument_options,
    instrument_runs,
    read_campaign_record,
)
from agentic_eval.campaign.spec import CampaignSpec
from agentic_eval.report.summary import MODEL_FREE_AGENTS, RunSummary

if TYPE_CHECKING:
    from agentic_eval.classify.diagnosis import Diagnosis

SYNTHETIC_NOISE_PTS = 1.5
"""The synthetic score's noise band when fewer than two runs measured one: the run-to-run variance the
published campaign measured on one model (345 and 340 of 370); a measured spread wider than it is used instead."""
SYNTHETIC_NOISE_CASES = 370
"""The battery size that band was measured at: a battery of n cases gets 1.5 x sqrt(370 / n) points (a score's
run-to-run spread grows as the square root of fewer cases: 6 cases are ±11.8 pts, not ±1.5)."""
LOADED_HOST = 0.5
"""A host whose one-minute load per core was above this while speed was measured: its CPU-served figures move with
the other work, and the verdict says the load beside them."""
MAJORITY = 0.5


@dataclass
class ModelFigures:
    """What the instruments measured of one model (the latest run of each, every battery run for the band)."""

    synthetic_pct: list[float] = field(default_factory=list)
    synthetic_text: str | None = None
    synthetic_cases: int | None = None
    forms: tuple[int, int] | None = None
    decode_tok_s: dict[str, float | None] = field(default_factory=dict)
    host_load: float | None = None
    """The one-minute load per core of the machine that served the model while speed was measured (only for an
    endpoint on this machine: the gate watches the server's queue, not what else the host runs)."""
    headlines: dict[str, str] = field(default_factory=dict)
    """Instrument (its registry name) -> the latest run's headline line, for every instrument measured."""
    quoted: list[str] = field(default_factory=list)
    """The instruments whose figures no rule of the verdict reads: the verdict quotes their headline."""

    @property
    def think_check(self) -> str | None:
        return self.headlines.get("think_check")

    @property
    def synthetic(self) -> float | None:
        return sum(self.synthetic_pct) / len(self.synthetic_pct) if self.synthetic_pct else None

    @property
    def noise_pts(self) -> float:
        spread = max(self.synthetic_pct) - min(self.synthetic_pct) if len(self.synthetic_pct) >= 2 else 0.0
        floor = SYNTHETIC_NOISE_PTS
        if self.synthetic_cases:
            floor = min(100.0, SYNTHETIC_NOISE_PTS * math.sqrt(SYNTHETIC_NOISE_CASES / self.synthetic_cases))
        return max(floor, spread)


@dataclass
class Row:
    """One model under one agent (at one padding)."""

    model: str
    agent: str
    padding: int
    summary: RunSummary | None
    figures: ModelFigures
    emulate: str | None = None
    """The engine parser the wire recorder emulated (a what-if row); None: a plain run."""

    @property
    def label(self) -> str:
        from agentic_eval.report.summary import emulated_words

        return (agent_slot_name(self.agent, self.padding).replace("-sys", " @ ") + (" tok" if self.padding else "")
                + (f" [{emulated_words(self.emulate)}]" if self.emulate else ""))

    @property
    def tasks(self) -> int:
        return len(self.summary.task_ids) if self.summary else 0

    @property
    def interval(self) -> Any:
        from agentic_eval.report.run_stats import task_interval

        return task_interval(self.summary) if self.summary else None


@dataclass
class CampaignReport:
    """Everything the campaign's report shows."""

    folder: Path
    spec: CampaignSpec
    task_ids: list[str]
    rows: list[Row]
    verdicts: dict[str, tuple[str, list[str]]]
    """Model -> (the verdict, the figures it rests on)."""
    pick: str
    summaries: list[RunSummary]
    diagnoses: dict[str, Any] = field(default_factory=dict)
    """Model -> its serving diagnosis (`Diagnosis`) when it wrote tool calls as text, from its plain runs."""

    def to_json(self) -> dict[str, Any]:
        return {"folder": str(self.folder), "tasks": self.task_ids,
                "rows": [row_json(r) for r in self.rows],
                "verdicts": {m: {"text": t, "rests_on": on} for m, (t, on) in self.verdicts.items()},
                "diagnoses": {m: d.model_dump() for m, d in self.diagnoses.items()},
                "pick": self.pick}


_RULED = frozenset(f.name for f in fields(ModelFigures)) - {"headlines", "quoted"}
"""The figures the verdict's rules read, by name: what an instrument's `figures` may give."""


def _figures(folder: Path, spec: CampaignSpec, model: str) -> ModelFigures:
    """What the model's recorded runs of each instrument the file asks measured, each read by its instrument."""
    from agentic_eval.instruments.registry import entry
    from agentic_eval.results.instrument_runs import read_instrument_run

    figures = ModelFigures()
    for kind in spec.kinds():
        runs = instrument_runs(folder, model, kind, instrument_options(spec, kind))
        if not runs:
            continue
        records = [read_instrument_run(r) for r in runs]
        figures.headlines[kind] = records[-1].headline_text
        found = entry(kind).load_campaign().figures(records, runs)
        if unknown := set(found) - _RULED:
            raise ValueError(f"the instrument {kind!r} gives figures no verdict rule reads: {sorted(unknown)}")
        for name, value in found.items():
            setattr(figures, name, value)
        if not found:
            figures.quoted.append(kind)
    return figures


def _merged_summary(spec: CampaignSpec, folder: Path, model: str, agent: str, padding: int,
                    task_ids: list[str], emulate: str | None = None) -> RunSummary | None:
    """The slot's runs that measured what the file asks, as one summary of the file's tasks."""
    from agentic_eval.report.summary import summarize_run

    parts = [summarize_run(p.run_dir) for p in agent_parts(spec, folder, model, agent, padding, emulate)
             if p.matches]
    if not parts:
        return None
    wanted = set(task_ids)
    trials = sorted((t for s in parts for t in s.trials if t.task_id in wanted), key=lambda t: (t.task_id, t.attempt))
    config = parts[0].config.model_copy(update={"task_ids": [t for t in task_ids if any(
        t in s.config.task_ids for s in parts)]})
    return RunSummary(config=config, trials=trials, warnings=[w for s in parts for w in s.warnings])


def campaign_report(folder: str | Path) -> CampaignReport:
    """The report of a campaign folder, from what its last session asked (campaign.json) and what is recorded."""
    folder = Path(folder)
    spec, task_ids = read_campaign_record(folder)
    rows = []
    for m in spec.models:
        figures = _figures(folder, spec, m.name)
        slots = agent_slots(spec)
        for agent, padding, emulate in slots:
            rows.append(Row(m.name, agent, padding, _merged_summary(spec, folder, m.name, agent, padding, task_ids,
                                                                    emulate), figures, emulate))
        if not slots:
            rows.append(Row(m.name, "-", 0, None, figures))
    verdicts, pick = judge(rows)
    diagnoses = {}
    for m in spec.models:
        found = model_diagnosis([r for r in rows if r.model == m.name])
        if found is not None:
            diagnoses[m.name] = found
            text, rests = verdicts[m.name]
            verdicts[m.name] = (text.removesuffix(".") + f"; serving diagnosis: {found.text}.",
                                [*rests, f"diagnosis ({found.kind}): " + "; ".join(found.rests_on)])
    return CampaignReport(folder=folder, spec=spec, task_ids=task_ids, rows=rows, verdicts=verdicts, pick=pick,
                          summaries=[r.summary for r in rows if r.summary is not None], diagnoses=diagnoses)


def model_diagnosis(rows: list[Row]) -> Diagnosis | None:
    """One model's serving diagnosis from its plain agent runs (what-if rows left out), held against its short
    prompt (the built-in agent unpadded) when it also ran under a longer one; None without text calls."""
    from agentic_eval.classify.diagnosis import ShortPrompt, diagnose
    from agentic_eval.results.records import TextCallFigures, TurnCounts

    plain = [r for r in rows if r.summary is not None and not r.emulate and r.agent not in MODEL_FREE_AGENTS]
    short = next((r for r in plain if r.agent == "builtin" and not r.padding), None)
    longer = [r for r in plain if r is not short]
    measured = longer or plain
    figures, families = TextCallFigures(), dict[str, int]()
    turns = {k: 0 for k in TurnCounts.model_fields}
    for r in measured:
        assert r.summary is not None
        figures = figures.merged(r.summary.text_call_figures)
        for k, v in r.summary.families.items():
            families[k] = families.get(k, 0) + v
        for k in turns:
            turns[k] += getattr(r.summary.turn_counts, k)
    prompt = None
    if short is not None and longer and short.summary is not None:
        counts = short.summary.turn_counts
        prompt = ShortPrompt(source="builtin, no padding", tool_call=counts.tool_call,
                             text_tool_call=counts.text_tool_call)
    return diagnose(figures, TurnCounts(**turns), families, prompt, rows[0].model if rows else None)


# ------------------------------------------------------------------------------------------------ cells


def _pct(x: float) -> str:
    return f"{x:.1f} %"


def synthetic_cell(f: ModelFigures) -> str:
    if f.synthetic is None:
        return "-"
    runs = f" ({len(f.synthetic_pct)} runs)" if len(f.synthetic_pct) > 1 else ""
    return f"{f.synthetic:.1f} % ± {f.noise_pts:.1f}{runs}"


def decode_cell(f: ModelFigures) -> str:
    return ", ".join(f"{w} {'-' if v is None else f'{v:,.1f}'}" for w, v in f.decode_tok_s.items()) or "-"


HEADER = ["model", "agent", "synthetic score", "forms passed", "agentic tasks passed (95 % CI)",
          "text tool calls", "real tool calls", "median latency", "decode tok/s"]


def table_rows(report: CampaignReport) -> list[list[str]]:
    out = []
    for r in report.rows:
        f, s = r.figures, r.summary
        n = r.tasks
        if s is None:
            agentic = ["-", "-", "-", "-"]
        else:
            ci = r.interval
            unscored = f"; {s.unscored} unscored" if s.unscored else ""
            text = (f"{s.passed}/{n} ({100 * ci.low:.0f}-{100 * ci.high:.0f} %{unscored})" if ci.n
                    else f"0/{n} (none scored{unscored})")
            lat = s.median_latency_s
            agentic = [text, f"{s.text_tool_call_tasks}/{n}",
                       f"{s.tool_call_tasks}/{n}" if s.tool_calls_by_design else "n/a (by design)",
                       "-" if lat is None else f"{lat:.1f} s"]
        out.append([r.model, r.label, synthetic_cell(f), "-" if f.forms is None else f"{f.forms[0]}/{f.forms[1]}",
                    *agentic, decode_cell(f)])
    return out


def row_json(r: Row) -> dict[str, Any]:
    s = r.summary
    ci = r.interval
    return {"model": r.model, "agent": r.agent, "system_prompt_tokens": r.padding, "emulate_parser": r.emulate,
            "synthetic_pct": r.figures.synthetic, "synthetic_noise_pts": r.figures.noise_pts,
            "synthetic_runs": len(r.figures.synthetic_pct), "forms": list(r.figures.forms) if r.figures.forms else None,
            "tasks": r.tasks, "tasks_passed": s.passed if s else None,
            "tasks_passed_ci": ci.to_json() if ci else None, "unscored_trials": s.unscored if s else None,
            "text_tool_call_tasks": s.text_tool_call_tasks if s else None,
            "tool_call_tasks": s.tool_call_tasks if s and s.tool_calls_by_design else None,
            "median_latency_s": s.median_latency_s if s else None, "decode_tok_s": r.figures.decode_tok_s,
            "think_check": r.figures.think_check, "instruments": r.figures.headlines}


# ------------------------------------------------------------------------------------------------ verdicts


def _state(r: Row) -> str:
    """works, weak, text (tool calls written as text in most tasks), no_calls, unmeasured."""
    s = r.summary
    if s is None or not r.interval.n:
        return "unmeasured"
    if s.text_tool_call_tasks > MAJORITY * r.tasks:
        return "text"
    if s.tool_calls_by_design and s.tool_call_tasks < MAJORITY * r.tasks:
        return "no_calls"
    return "works" if s.passed >= MAJORITY * r.interval.n else "weak"


def _row_words(r: Row) -> str:
    s, state, n = r.summary, _state(r), r.tasks
    where = f"under {r.label}"
    if state == "unmeasured" or s is None:
        return f"nothing scored yet {where}"
    ci = r.interval
    passed = f"{s.passed}/{ci.n} tasks passed (95 % CI {100 * ci.low:.0f}-{100 * ci.high:.0f} %)"
    if state == "text":
        return f"tool calls written as text in {s.text_tool_call_tasks}/{n} tasks {where}, {passed}: not usable " \
               "under this agent"
    if state == "no_calls":
        return f"a real tool call in only {s.tool_call_tasks}/{n} tasks {where}, {passed}: not usable under this agent"
    if state == "weak":
        return f"only {passed} {where}"
    return f"{passed} {where}"


def _what_if_words(r: Row, rows: list[Row]) -> str:
    """'with parser emulated: hermes, 11/14 tasks passed under opencode (plain: 2/14)'."""
    s = r.summary
    assert s is not None
    from agentic_eval.report.summary import emulated_words

    plain = next((p for p in rows if p.model == r.model and p.agent == r.agent and p.padding == r.padding
                  and not p.emulate and p.summary is not None), None)
    where = agent_slot_name(r.agent, r.padding).replace("-sys", " @ ") + (" tok" if r.padding else "")
    text = f"with {emulated_words(r.emulate or '')}, {s.passed}/{r.interval.n} tasks passed under {where}"
    if plain is not None and plain.summary is not None:
        text += f" (plain: {plain.summary.passed}/{plain.interval.n})"
    return text


def _outcomes(r: Row) -> dict[str, bool | None]:
    from agentic_eval.report.run_stats import task_outcomes

    return task_outcomes(r.summary) if r.summary else {}


def _best(rows: list[Row]) -> Row | None:
    measured = [r for r in rows if _state(r) != "unmeasured"]
    return max(measured, key=lambda r: (r.interval.rate or 0.0, r.summary.passed if r.summary else 0), default=None)


def judge(rows: list[Row]) -> tuple[dict[str, tuple[str, list[str]]], str]:
    """Each model's verdict and the figures it rests on, and the campaign's pick, by fixed rules."""
    from agentic_eval.report.stats import compare_tasks, format_p, is_noise

    models = list(dict.fromkeys(r.model for r in rows))
    by_model = {m: [r for r in rows if r.model == m and r.agent not in MODEL_FREE_AGENTS and not r.emulate]
                for m in models}  # what-if rows (a parser emulated) are never ranked nor tied with plain ones
    best = {m: _best(by_model[m]) for m in models}
    holds = {m: bool(by_model[m]) and all(_state(r) in ("works", "weak") for r in by_model[m]
                                          if _state(r) != "unmeasured") and best[m] is not None for m in models}
    ranked = sorted((m for m in models if best[m] is not None),
                    key=lambda m: -(best[m].interval.rate or 0.0))  # type: ignore[union-attr]
    leader = ranked[0] if ranked else None
    tied_with_leader: dict[str, str] = {}
    if leader is not None:
        lead_row = best[leader]
        for m in ranked[1:]:
            cmp = compare_tasks(leader, _outcomes(lead_row), m, _outcomes(best[m]))  # type: ignore[arg-type]
            if cmp.n and is_noise(cmp.gap_pts, cmp.p_value, None):
                tied_with_leader[m] = f"{format_p(cmp.p_value)} over {cmp.n} shared tasks"
    verdicts: dict[str, tuple[str, list[str]]] = {}
    for m in models:
        rows_m, figures = by_model[m], next(r.figures for r in rows if r.model == m)
        words: list[str] = []
        rests: list[str] = []
        if rows_m:
            rests += ["agentic tasks passed", "text tool calls", "real tool calls"]
            described = "; ".join(_row_words(r) for r in rows_m)
            failing = best[m] is not None and all(_state(r) in ("text", "no_calls", "weak") for r in rows_m
                                                  if _state(r) != "unmeasured")
            if figures.synthetic is not None and figures.synthetic >= 80 and failing:
                words.append(f"high synthetic score ({figures.synthetic:.1f} %) but {described}: the synthetic score "
                             "does not predict its use as an agent")
                rests.append("synthetic score")
            else:
                words.append(described[0].upper() + described[1:])
        others_lose = [o for o in models if o != m and best[o] is not None and not holds[o]]
        if holds[m] and others_lose and not any(holds[o] for o in models if o != m):
            words.append("the only model that holds its tool-call format")
        if m == leader and _state(best[m]) == "works":  # type: ignore[arg-type]
            ties = [o for o in tied_with_leader if _state(best[o]) == "works"]  # type: ignore[arg-type]
            words.append("best agentic result" + (f", tied with {', '.join(ties)} (the difference is inside the "
                                                  "noise)" if ties else ""))
        elif m in tied_with_leader and leader is not None and _state(best[m]) == "works":  # type: ignore[arg-type]
            words.append(f"tied with {leader} on agentic tasks ({tied_with_leader[m]}: inside the noise)")
        synthetic_ties = [o for o in models if o != m and figures.synthetic is not None
                          and (other := next(r.figures for r in rows if r.model == o).synthetic) is not None
                          and abs(figures.synthetic - other) <= max(figures.noise_pts, SYNTHETIC_NOISE_PTS)]
        if figures.synthetic is not None:
            if synthetic_ties:
                words.append(f"synthetic score tied with {', '.join(synthetic_ties)} (inside the "
                             f"±{figures.noise_pts:.1f} pt band)")
            if "synthetic score" not in rests:
                rests.append("synthetic score")
        what_if = [r for r in rows if r.model == m and r.emulate and _state(r) != "unmeasured"]
        if what_if:
            words.append("what-if: " + "; ".join(_what_if_words(r, rows) for r in what_if))
            rests.append("agentic tasks passed with the parser emulated")
        if figures.forms is not None and figures.forms[0] < figures.forms[1]:
            words.append(f"fails {figures.forms[1] - figures.forms[0]} of {figures.forms[1]} API forms")
            rests.append("forms passed")
        speeds = {w: v for w, v in figures.decode_tok_s.items() if v is not None}
        if speeds:
            words.append("decodes at " + ", ".join(f"{v:,.0f} tok/s ({w})" for w, v in speeds.items()))
            if figures.host_load is not None and figures.host_load > LOADED_HOST:
                words[-1] += (f" (measured on this machine at load {figures.host_load:.1f} per core: other work "
                              "shared the cores, so the figure is low and moves)")
            rests.append("decode tok/s")
        for kind in figures.quoted:
            words.append(f"{_title(kind)}: {figures.headlines[kind]}")
            rests.append(_title(kind))
        if not words:
            words.append("nothing measured yet")
        verdicts[m] = ("; ".join(words) + ".", rests)
    return verdicts, _pick(leader, best, tied_with_leader, models)


def _title(kind: str) -> str:
    from agentic_eval.instruments.registry import entry

    return entry(kind).title


def _pick(leader: str | None, best: dict[str, Row | None], tied: dict[str, str], models: list[str]) -> str:
    if leader is None or best[leader] is None:
        return "No agentic task was scored yet: no pick."
    lead = best[leader]
    if _state(lead) != "works":  # type: ignore[arg-type]
        passed = lead.summary.passed if lead and lead.summary else 0
        n = lead.interval.n if lead else 0
        if passed == 0:
            return f"No model passed any agentic task under these agents (0/{n} each): no pick."
        level = [m for m in models if (row := best[m]) is not None and row.summary is not None
                 and row.summary.passed == passed]
        if len(level) > 1:
            return (f"No model passes most tasks under these agents ({', '.join(level)} level at {passed}/{n}): "
                    "no pick.")
        return f"No model passes most tasks under these agents (most: {leader}, {passed}/{n}): no pick."
    tied_ok = [m for m in tied if _state(best[m]) == "works"]  # type: ignore[arg-type]
    if tied_ok:
        names = [leader, *tied_ok]
        return (f"Pick {', '.join(names[:-1])} or {names[-1]}: tied on agentic tasks (difference inside the noise); "
                "choose by speed and latency.")
    rest = "the others are behind it beyond the noise" if len([m for m in models if best[m]]) > 1 else \
        "the only model measured"
    return f"Pick {leader} under {lead.label}: the best agentic result; {rest}."  # type: ignore[union-attr]

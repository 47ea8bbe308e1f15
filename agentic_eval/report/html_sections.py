"""The HTML report's sections below the headline: the task x run matrix, the instruments beside the
agent results, the configuration behind each number, and each trial's details. Every string that
came from a run (task ids, grader output, diffs, the model's turns) is escaped here."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentic_eval.report.summary import RunSummary, changed_programs_line, passed_with_changed_programs
from agentic_eval.results.instrument_runs import InstrumentRun
from agentic_eval.results.records import trial_slot
from agentic_eval.results.run_folder import RESULT_FILE

DETAIL_LIMIT = 12_000
"""Characters of one trial file shown in the page (grader output, diff); the rest is cut, said so."""
CELL_TEXT = {"cheated": "cheated", "tampered": "tampered", "pass": "pass",  # cheated: an impossible task passed
              "fail": "fail", "text": "fail*", "unscored": "unscored", "mixed": "", "none": "-"}

ChartDiv = Callable[[str, dict[str, Any]], str]


def esc(value: object) -> str:
    import html

    return html.escape(str(value), quote=True)


def trial_anchor(run_index: int, task_id: str, attempt: int) -> str:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in trial_slot(task_id, attempt))
    return f"t{run_index}-{safe}"


def matrix_section(summaries: list[RunSummary], outcome_class: Callable[[list[Any]], str]) -> str:
    """Tasks down, runs across; each cell coloured by outcome and linked to its trial's details."""
    task_ids = sorted({tid for s in summaries for tid in s.task_ids})
    head = "<tr><th>task</th>" + "".join(f"<th title='{esc(s.config.run_id)}'>#{i} {esc(s.config.model)}<br>"
                                         f"{esc(s.config.agent)}<br><small>{esc(s.config.run_id[-24:])}</small></th>"
                                         for i, s in enumerate(summaries, 1)) + "</tr>"
    rows = []
    for tid in task_ids:
        cells = [f"<td>{esc(tid)}</td>"]
        for i, s in enumerate(summaries):
            trials = [t for t in s.trials if t.task_id == tid]
            kind = outcome_class(trials)
            if not trials:
                text = "unreadable" if tid in s.unreadable_task_ids else "-"
                cells.append(f"<td class='cell o-none'>{text}</td>")
                continue
            passed = sum(1 for t in trials if t.outcome == "pass")
            text = CELL_TEXT[kind] if len(trials) == 1 else f"{passed}/{len(trials)}"
            title = "; ".join(f"a{t.attempt}: {t.outcome}" + (f" [{t.behaviour}]" if t.behaviour else "")
                              + (" (text calls)" if t.turns.text_tool_call else "")
                              + (f" ({t.fault})" if t.fault else "")
                              + (f" - {t.detail}" if not t.scored and t.detail else "") for t in trials)
            anchor = trial_anchor(i, tid, trials[0].attempt)
            cells.append(f"<td class='cell o-{kind}' title='{esc(title)}'><a href='#{anchor}'>{esc(text)}</a></td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    legend = ("<p class=legend><span class=o-pass>pass</span><span class=o-fail>fail</span><span class=o-text>"
              "fail* tool calls written as text</span><span class=o-cheated>cheated (an impossible task passed)</span>"
              "<span class=o-unscored>unscored</span><span class=o-mixed>"
              "attempts differ</span> Click a cell for the trial's grader output, turns and diff.</p>")
    return f"<h2 id=matrix>Task x run</h2>{legend}<div class=scroll><table id=matrix-table>{head}" \
           f"{''.join(rows)}</table></div>"


def _read_result(run_dir: Path | None) -> dict[str, Any]:
    if run_dir is None:
        return {}
    try:
        data = json.loads((run_dir / RESULT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _latest(instruments: list[InstrumentRun], kind: str) -> dict[str, InstrumentRun]:
    """Model -> its latest run of this instrument."""
    out: dict[str, InstrumentRun] = {}
    for run in sorted((i for i in instruments if i.kind == kind), key=lambda r: r.created_at):
        out[run.model] = run
    return out


def instrument_sections(instruments: list[InstrumentRun], agent_rates: dict[str, float], chart_div: ChartDiv,
                        dirs: dict[str, Path]) -> str:
    """Synthetic scores beside agentic ones, the battery per phase, the form matrix per shape, speed."""
    tooling, forms, speed = (_latest(instruments, "tooling"), _latest(instruments, "forms"),
                             _latest(instruments, "speed"))
    parts = ["<h2 id=instruments>Synthetic tool calling vs agentic tasks</h2>"]
    glance = []
    for model in sorted(set(tooling) | set(forms) | set(agent_rates)):
        for label, value in (("tool-call battery", _score(tooling.get(model))),
                             ("form matrix", _score(forms.get(model))), ("agent tasks", agent_rates.get(model))):
            if value is not None:
                glance.append({"model": model, "measure": label, "pct": round(value, 1)})
    if glance:
        parts.append(chart_div("synthetic-vs-agentic", _grouped_bars(glance, "measure", "pct", "% passed",
                                                                    "synthetic scores vs agentic tasks, by model")))
    parts.append(_battery_table(tooling, dirs, chart_div, instruments))
    parts.append(_forms_table(forms, dirs))
    parts.append(_speed_section(speed, dirs, chart_div))
    return "\n".join(parts)


def _score(run: InstrumentRun | None) -> float | None:
    value = run.headline.get("score_pct") if run else None
    return float(value) if isinstance(value, (int, float)) else None


def _grouped_bars(data: list[dict[str, Any]], colour: str, value: str, title_x: str, title: str) -> dict[str, Any]:
    return {
        "$schema": "https://vega.github.io/schema/vega-lite/v6.json", "width": "container", "title": title,
        "data": {"values": data}, "mark": {"type": "bar", "tooltip": True},
        "encoding": {"y": {"field": "model", "type": "nominal", "title": None},
                     "yOffset": {"field": colour, "type": "nominal"},
                     "x": {"field": value, "type": "quantitative", "title": title_x, "scale": {"domain": [0, 100]}},
                     "color": {"field": colour, "type": "nominal"}},
    }


def instrument_spread(instruments: list[InstrumentRun], latest: InstrumentRun) -> tuple[float, int] | None:
    """The range (points) of score_pct over the runs of one model's instrument with the latest's settings and
    server, and how many; None with fewer than two."""
    scores = [float(v) for r in instruments if r.kind == latest.kind and r.model == latest.model
              and r.settings == latest.settings and r.base_url == latest.base_url
              and isinstance(v := r.headline.get("score_pct"), (int, float))]
    return (max(scores) - min(scores), len(scores)) if len(scores) >= 2 else None


def vs_best_note(scores: dict[str, float], spreads: dict[str, float], model: str) -> str:
    """'best' (or 'best, tied' when another model has the same score), or the gap to the best model, marked as
    noise when inside either one's measured spread; a spread measured as 0.0 is measured, not unknown."""
    top = max(scores.values())
    if scores[model] == top:
        return "best, tied" if sum(score == top for score in scores.values()) > 1 else "best"
    best = max(scores, key=lambda m: scores[m])
    gap = scores[model] - top
    measured = [spreads[m] for m in (model, best) if m in spreads]
    if not measured:
        return f"{gap:+.1f} pts (no repeated runs: spread unknown)"
    noise = max(measured)
    if abs(gap) <= noise:
        return f"{gap:+.1f} pts: within noise (spread {noise:.1f} pts)"
    return f"{gap:+.1f} pts (beyond the measured spread of {noise:.1f} pts)"


def _battery_table(tooling: dict[str, InstrumentRun], dirs: dict[str, Path], chart_div: ChartDiv,
                   instruments: list[InstrumentRun]) -> str:
    if not tooling:
        return ""
    phases: dict[str, dict[str, Any]] = {m: _read_result(dirs.get(r.run_id)).get("phases") or {}
                                         for m, r in tooling.items()}
    names = sorted({p for ph in phases.values() for p in ph})
    head = "<tr><th>model</th><th>total</th><th>spread across runs</th><th>vs the best model</th>" + "".join(
        f"<th>{esc(p)}</th>" for p in names) + "</tr>"
    scores = {m: v for m, r in tooling.items() if (v := _score(r)) is not None}
    spread = {m: sp for m, r in tooling.items() if (sp := instrument_spread(instruments, r)) is not None}
    rows, data = [], []
    for model, run in sorted(tooling.items()):
        sp = spread.get(model)
        note = vs_best_note(scores, {m: v[0] for m, v in spread.items()}, model) if model in scores else "-"
        extra = (f"<td>{'-' if sp is None else f'{sp[0]:.1f} pts over {sp[1]} runs'}</td>"
                 f"<td class='{'noise' if 'noise' in note else ''}'>{esc(note)}</td>")
        cells = []
        for p in names:
            got = phases[model].get(p) or {}
            passed, cases = got.get("passed") or 0, got.get("cases")
            cells.append(f"<td class=num>{passed}/{cases}</td>" if cases else "<td>-</td>")
            if cases:
                data.append({"model": model, "phase": p, "pct": round(100 * passed / cases, 1)})
        rows.append(f"<tr><td>{esc(model)}</td><td class=num>{esc(run.headline_text)}</td>{extra}"
                    f"{''.join(cells)}</tr>")
    chart = chart_div("battery-phases", _grouped_bars(data, "phase", "pct", "% of cases passed",
                                                      "tool-call battery per phase")) if data else ""
    return f"<h3>Tool-call battery per phase</h3><div class=scroll><table id=battery>{head}{''.join(rows)}" \
           f"</table></div>{chart}"


def _forms_table(forms: dict[str, InstrumentRun], dirs: dict[str, Path]) -> str:
    if not forms:
        return ""
    shapes = {m: {s.get("name"): s for s in _read_result(dirs.get(r.run_id)).get("shapes") or []
                  if isinstance(s, dict)} for m, r in forms.items()}
    names = list(dict.fromkeys(n for sh in shapes.values() for n in sh))
    head = "<tr><th>model</th><th>total</th>" + "".join(f"<th>{esc(n)}</th>" for n in names) + "</tr>"
    rows = []
    for model, run in sorted(forms.items()):
        cells = []
        for n in names:
            s = shapes[model].get(n)
            if s is None:
                cells.append("<td class='cell o-none'>-</td>")
            else:
                ok = bool(s.get("passed"))
                cells.append(f"<td class='cell o-{'pass' if ok else 'text'}' title='{esc(s.get('reason', ''))}'>"
                             f"{'ok' if ok else esc(s.get('reason', 'fail'))}</td>")
        rows.append(f"<tr><td>{esc(model)}</td><td class=num>{esc(run.headline_text)}</td>{''.join(cells)}</tr>")
    return f"<h3>Form matrix per shape</h3><div class=scroll><table id=forms>{head}{''.join(rows)}</table></div>"


def _speed_section(speed: dict[str, InstrumentRun], dirs: dict[str, Path], chart_div: ChartDiv) -> str:
    if not speed:
        return ""
    head = ("<tr><th>model</th><th>workload</th><th>decode tok/s: median (min-max)</th><th>TTFT s: median</th>"
            "<th>acceptance</th><th>kept / discarded by the gate</th><th>server</th></tr>")
    rows, data = [], []
    for model, run in sorted(speed.items()):
        result = _read_result(dirs.get(run.run_id))
        server = result.get("server") or {}
        for wl, w in (result.get("workloads") or {}).items():
            dec, ttft = w.get("decode_tok_s") or {}, w.get("ttft_s") or {}
            acc = w.get("acceptance_rate")
            if dec.get("median") is not None:
                data.append({"row": f"{model} · {wl}", "workload": wl, "median": round(dec["median"], 1),
                             "min": round(dec["min"], 1), "max": round(dec["max"], 1)})
            rows.append(
                f"<tr><td>{esc(model)}</td><td>{esc(wl)}</td><td class=num>"
                + (f"{dec['median']:.1f} ({dec['min']:.1f}-{dec['max']:.1f})" if dec.get("median") is not None
                   else "-")
                + f"</td><td class=num>{'-' if ttft.get('median') is None else format(ttft['median'], '.3f')}</td>"
                f"<td class=num>{'-' if acc is None else f'{100 * acc:.0f} %'}</td>"
                f"<td class=num>{w.get('kept', '-')} / {w.get('discarded', '-')}</td>"
                f"<td>{esc(server.get('kind', '?'))} {esc(server.get('version', ''))}, gate: "
                f"{esc(server.get('gate', '?'))}</td></tr>")
    chart = ""
    if data:
        y = {"field": "row", "type": "nominal", "title": None, "sort": None, "axis": {"labelLimit": 300}}
        chart = chart_div("speed", {
            "$schema": "https://vega.github.io/schema/vega-lite/v6.json", "width": "container",
            "title": "decode tok/s per workload (median, bar: min-max of kept samples)", "data": {"values": data},
            "layer": [
                {"mark": {"type": "bar", "tooltip": True},
                 "encoding": {"y": y, "x": {"field": "median", "type": "quantitative", "title": "tok/s"},
                              "color": {"field": "workload", "type": "nominal", "legend": None}}},
                {"mark": {"type": "rule", "strokeWidth": 2},
                 "encoding": {"y": y, "x": {"field": "min", "type": "quantitative"}, "x2": {"field": "max"}}}],
        })
    return f"<h3>Speed per workload</h3><div class=scroll><table id=speed>{head}{''.join(rows)}</table></div>{chart}"


def config_section(summaries: list[RunSummary], instruments: list[InstrumentRun], dirs: dict[str, Path]) -> str:
    """What produced each number: every field of the run's config (endpoint, agent and its options, prompt
    padding, lenient mode, sandbox, versions, ...) and, for instruments, their settings and the server seen."""
    rows = []
    for s in summaries:
        c = s.config
        facts: dict[str, Any] = c.model_dump(mode="json", exclude={"task_ids", "task_paths", "format_version", "packs"})
        if facts.get("system_prompt_tokens") is None and "system_prompt_tokens" in facts:
            facts["system_prompt_tokens"] = "0 (not padded)"  # a campaign's [0] padding, not an unknown
        facts["tasks"] = len(c.task_ids)
        facts["packs"] = ", ".join(f"{p.name}@{p.digest[:10]}" for p in c.packs) or "-"
        facts["agent version"] = sorted({t.agent_version for t in s.trials if t.agent_version}) or "-"
        rows.append(_facts_row(c.run_id, "agent run", facts))
    for i in instruments:
        facts = {"model": i.model, "endpoint": i.base_url, "created_at": i.created_at, "settings": i.settings}
        server = _read_result(dirs.get(i.run_id)).get("server")
        if server:
            facts["server"] = server
        facts["versions"] = i.versions
        rows.append(_facts_row(i.run_id, i.kind, facts))
    return "<h2 id=config>Configuration behind each number</h2><div class=scroll><table id=config-table>" \
           "<tr><th>run</th><th>kind</th><th>settings</th></tr>" + "".join(rows) + "</table></div>"


def _facts_row(run_id: str, kind: str, facts: dict[str, Any]) -> str:
    text = "<br>".join(f"<b>{esc(k)}</b>: {esc(v if isinstance(v, str) else json.dumps(v, default=str))}"
                       for k, v in facts.items())
    return f"<tr><td>{esc(run_id)}</td><td>{esc(kind)}</td><td>{text}</td></tr>"


def _file_text(run_dir: Path | None, rel: str | None) -> str | None:
    """A trial file's text (its head), read only if it is the run's own (agentic_eval.runfiles: inside the run
    folder, not a link, a regular file): a record of a handed-over run naming ../../etc/passwd, a link or a
    FIFO shows that one line instead. None when the trial has no such file."""
    from agentic_eval.errors import AgenticEvalError
    from agentic_eval.runfiles import read_run_text, run_file

    if run_dir is None or not rel:
        return None
    try:
        if not os.path.lexists(run_file(run_dir, rel, what=rel)):
            return None
        text, cut = read_run_text(run_dir, rel, what=rel, limit=DETAIL_LIMIT * 4)
    except AgenticEvalError as exc:
        return f"[not shown: {exc}]"
    if len(text) > DETAIL_LIMIT or cut:
        text = text[:DETAIL_LIMIT] + f"\n... cut: the rest is in {rel}"
    return text


def classified_turns(run_dir: Path | None, rel: str | None) -> list[dict[str, str]]:
    """Each model turn of a trial's wire log with its label, and the start of what the model said."""
    from agentic_eval.classify.summary import is_model_call
    from agentic_eval.classify.turn import classify_turn, is_model_turn, read_turn
    from agentic_eval.errors import AgenticEvalError
    from agentic_eval.runfiles import open_run_text
    from agentic_eval.wire.recorder import parse_wire_log

    if run_dir is None or not rel:
        return []
    try:
        with open_run_text(run_dir, rel, what=rel) as handle:  # the run's own file only (see _file_text)
            records = parse_wire_log(handle, rel)
    except AgenticEvalError as exc:
        return [{"label": "unreadable", "said": str(exc)}]
    except (OSError, ValueError):
        return [{"label": "unreadable", "said": f"{rel}: unreadable wire log"}]
    out = []
    for rec in records:
        if not is_model_call(rec.method, rec.path):
            continue
        if rec.error or rec.status is None or rec.status >= 400 or not isinstance(rec.response, dict) \
                or not is_model_turn(rec.response):
            out.append({"label": "unclassified", "said": rec.error or f"HTTP {rec.status}"})
            continue
        try:
            c = classify_turn(rec.request if isinstance(rec.request, dict) else None, rec.response)
            turn = read_turn(rec.response)
        except Exception as exc:  # noqa: BLE001 - a response the classifier cannot read is shown, not fatal
            out.append({"label": "unclassified", "said": str(exc)})
            continue
        said = turn.content.strip()[:400]
        if c.tool_names:
            said = f"calls {', '.join(c.tool_names)}" + (f"; says: {said}" if said else "")
        if c.diagnosis:  # which engine parsers would have read its text calls, and whose fix it is
            said += f" [{c.diagnosis}: {c.diagnosis_note}]"
        if rec.emulated and rec.emulated.get("rewritten"):
            said += f" [the agent got it as structured calls: {rec.emulated.get('parser')} emulated]"
        out.append({"label": c.label + (f" ({c.family})" if c.family else ""), "said": said})
    return out


def trial_details_section(summaries: list[RunSummary], dirs: dict[str, Path]) -> str:
    """One collapsed block per trial, the target of the matrix's links."""
    parts = ["<h2 id=trials>Trial details</h2>"]
    for i, s in enumerate(summaries):
        run_dir = dirs.get(s.config.run_id)
        parts.append(f"<h3>{esc(s.config.run_id)}</h3>")
        for t in s.trials:
            turns = classified_turns(run_dir, t.files.get("wire"))
            turn_rows = "".join(f"<tr><td class=num>{n}</td><td>{esc(x['label'])}</td><td>{esc(x['said'])}</td></tr>"
                                for n, x in enumerate(turns, 1))
            fault = f" (fault: {t.fault}{': ' + t.fault_reason if t.fault_reason else ''})" if t.fault else ""
            blocks = [f"<p>{esc(t.outcome)}{esc(fault)}{' - ' + esc(t.detail) if t.detail else ''}; grader: "
                      f"{esc(t.grader_verdict or '-')}; agent {t.agent_duration_s:.1f} s, {t.agent_turns} turns, "
                      f"{t.requests} requests; turns: " + esc(", ".join(f"{k} {v}" for k, v in
                                                                     t.turns.model_dump().items() if v) or "none")
                      + "</p>"]
            if t.tool_requests:
                blocks.append(f"<p><b>{t.tool_requests} request(s) from the agent's tools</b> (not the agent's own):"
                              " refused, never forwarded, recorded in refused.jsonl</p>")
            if changed := changed_programs_line(t):
                blocks.append(f"<p><b>{esc(changed)}</b>" + (f" ({esc(', '.join(t.changed_programs[1:]))})"
                              if len(t.changed_programs) > 1 else "") + "</p>")
            if turns:
                blocks.append(f"<table><tr><th>#</th><th>label</th><th>what the model did</th></tr>{turn_rows}</table>")
            for name, key in (("grader output", "grader"), ("diff", "diff")):
                text = _file_text(run_dir, t.files.get(key))
                if text is not None:
                    blocks.append(f"<b>{name}</b><pre>{esc(text) or '(empty)'}</pre>")
            star = " *" if t.turns.text_tool_call else ""
            star += " (changed programs)" if passed_with_changed_programs(t) else ""
            parts.append(f"<details id='{trial_anchor(i, t.task_id, t.attempt)}'><summary>{esc(t.task_id)} "
                         f"a{t.attempt}: {esc(t.outcome)}{star}</summary>{''.join(blocks)}</details>")
    # a link to a trial opens its block
    parts.append("<script>function openTarget(){const el=location.hash&&document.getElementById("
                 "location.hash.slice(1));if(el&&el.tagName==='DETAILS'){el.open=true;el.scrollIntoView();}}"
                 "addEventListener('hashchange',openTarget);openTarget();</script>")
    return "\n".join(parts)

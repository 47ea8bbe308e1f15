"""`report --html FILE`: one self-contained HTML page a person can send to a colleague.

Charts are Vega-Lite specs drawn by Vega in the browser; the Vega, Vega-Lite and vega-embed bundle
(about 0.9 MB, from the vl-convert-python package) is inlined, so the page needs no network to view.
Plotly was the other candidate: its inlined bundle is about 4.8 MB. Tables, the per-trial details and
every number are plain HTML, readable without scripts. Everything the model wrote (grader output,
diffs, turns) is escaped, and a Content-Security-Policy forbids the page any network request.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentic_eval.errors import AgenticEvalError
from agentic_eval.report.html_sections import (
    config_section,
    esc,
    instrument_sections,
    matrix_section,
    trial_details_section,
)
from agentic_eval.report.run_stats import compare_runs, run_statistics, spreads, task_interval
from agentic_eval.report.summary import (
    IMPOSSIBLE_NOTE,
    MODEL_FREE_AGENTS,
    RunSummary,
    any_impossible,
    emulated_note,
    impossible_rows,
    run_label,
)
from agentic_eval.results.instrument_runs import InstrumentRun
from agentic_eval.results.records import utc_now

CSP = ("default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; "
       "img-src data:; font-src data:; connect-src 'none'; form-action 'none'; base-uri 'none'")
"""'unsafe-eval': Vega compiles its expressions to functions. No source is a network address."""

# cheated: an impossible task passed; tampered: a verifier passed what the model changed under it
OUTCOME_COLOURS = {"pass": "#2e7d32", "cheated": "#6a1b9a", "tampered": "#4a148c", "fail": "#e0a030",
                    "fail (text calls)": "#c62828", "unscored": "#9e9e9e"}

STYLE = """
body{font:15px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;padding:0 1rem 3rem;color:#222;
max-width:1200px;margin:auto}
h1{font-size:1.5rem;margin:1rem 0 .2rem}h2{font-size:1.2rem;margin:2rem 0 .5rem;border-bottom:1px solid #ddd}
.sub{color:#666;margin:0 0 1rem}.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch}
table{border-collapse:collapse;margin:.4rem 0;font-size:.9rem}th,td{border:1px solid #ddd;padding:.25rem .5rem;
text-align:left;vertical-align:top}th{background:#f5f5f5}td.num{text-align:right;white-space:nowrap}
td.cell{text-align:center;white-space:nowrap;color:#fff}td.cell a{color:#fff;text-decoration:none;display:block}
.o-cheated{background:#6a1b9a}.o-pass{background:#2e7d32}.o-fail{background:#e0a030}.o-text{background:#c62828}.o-unscored{background:#9e9e9e}
.o-mixed{background:#5c6bc0}.o-none{background:#fff;color:#999}
.chart{width:100%;min-width:320px;min-height:120px;margin:.5rem 0}\
.noise{color:#666;font-style:italic}.diff{color:#1565c0}
details{border:1px solid #ddd;border-radius:4px;margin:.3rem 0;padding:.3rem .6rem}summary{cursor:pointer}
pre{white-space:pre-wrap;word-break:break-word;background:#fafafa;padding:.4rem;max-height:24rem;overflow:auto;
font-size:.8rem}.legend span{display:inline-block;padding:.1rem .5rem;margin-right:.3rem;color:#fff;border-radius:3px}
:target{outline:3px solid #1565c0}
@media (max-width:600px){body{font-size:14px;padding:0 .5rem}td,th{padding:.2rem .3rem}}
"""


def script_json(value: object) -> str:
    """JSON safe inside a <script> element: no '<', '>' or '&' can close it or open a comment."""
    return json.dumps(value).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def chart_bundle() -> str:
    """Vega + Vega-Lite + vega-embed in one script, from vl-convert-python (no network)."""
    try:
        import vl_convert
    except ImportError:
        raise AgenticEvalError("report --html needs the vl-convert-python package: "
                               "pip install 'vl-convert-python>=1.9' (scripts/install.sh installs it)") from None
    return str(vl_convert.javascript_bundle("window.vegaEmbed = vegaEmbed;")).replace("</script", "<\\/script")


def outcome_class(trials: list[Any]) -> str:
    """The colour of a set of attempts: pass, fail, text-call fail, unscored, or mixed."""
    if not trials:
        return "none"
    kinds = {"unscored" if not t.scored else "pass" if t.outcome == "pass" else
             t.outcome if t.outcome in ("cheated", "tampered") else "text" if t.turns.text_tool_call else "fail"
             for t in trials}
    return kinds.pop() if len(kinds) == 1 else "mixed"


def best_peer(summary: RunSummary, summaries: list[RunSummary]) -> RunSummary:
    """The run this one is held against: the best on the same tasks, a model's run before oracle's or nop's."""
    peers = [s for s in summaries if s.task_ids == summary.task_ids  # a what-if run is held against its kind only
             and bool(s.config.emulate_parser) == bool(summary.config.emulate_parser)]
    with_model = [s for s in peers if s.config.agent not in MODEL_FREE_AGENTS]
    pool = with_model if summary in with_model else peers
    return max(pool, key=lambda s: task_interval(s).rate or 0.0)


def headline_data(summaries: list[RunSummary]) -> list[dict[str, Any]]:
    """One record per run: what the headline table and charts show."""
    spread_of = spreads(summaries)
    out = []
    for s in summaries:
        best = best_peer(s, summaries)
        ci = task_interval(s)
        n = len(s.task_ids) or 1
        unscored = s.unscored_causes
        vs_best = "-"
        if s is not best:
            cmp = compare_runs(s, best, summaries, labels=("this run", "the best"))
            vs_best = f"{cmp.gap_pts:+.0f} pts: {cmp.verdict}"
        lat = s.median_latency_s
        out.append({
            "run": s.config.run_id, "label": run_label(s, sandbox=False), "model": s.config.model,
            "agent": s.config.agent,
            "rate": 100 * (ci.rate or 0.0), "low": 100 * ci.low, "high": 100 * ci.high, "ci_text": ci.text(),
            "stats": run_statistics(s, spread_of.get(s.config.run_id)),
            "spread": spread_of[s.config.run_id].text(),
            "text_share": 100 * s.text_tool_call_tasks / n,
            "real_share": 100 * s.tool_call_tasks / n if s.tool_calls_by_design else None,
            "unscored": s.unscored, "unscored_causes": unscored, "latency": lat, "vs_best": vs_best,
            "is_best": s is best, "unreadable_note": s.unreadable_note,
        })
    return out


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f} %"


def headline_section(rows: list[dict[str, Any]]) -> str:
    head = ("<tr><th>#</th><th>run</th><th>model / agent</th><th>tasks passed</th><th>pass@1</th>"
            "<th>pass@k / pass^k</th><th>spread across runs</th><th>vs the best run</th><th>text-call tasks</th>"
            "<th>real-call tasks</th><th>unscored (causes)</th><th>median latency</th></tr>")
    body = []
    for i, r in enumerate(rows, 1):
        st = r["stats"]
        k = st["attempts"]
        at_k = f"k={k}: {_pct(100 * st[f'pass_at_{k}'])} / {_pct(100 * st[f'pass_hat_{k}'])}" \
            if k >= 2 and st.get(f"pass_at_{k}") is not None else "-"
        causes = ", ".join(f"{k} {v}" for k, v in r["unscored_causes"].items()) or "0"
        vs = "best" if r["is_best"] else r["vs_best"]
        vs_cls = "noise" if "noise" in vs or "no difference" in vs else "diff" if "better" in vs else ""
        p1 = st["pass_at_1"]
        latency = "-" if r["latency"] is None else f"{r['latency']:.1f} s"
        unreadable = f"<br><small>{esc(r['unreadable_note'])}</small>" if r["unreadable_note"] else ""
        body.append(
            f"<tr><td>#{i}</td><td><small>{esc(r['run'])}</small></td><td>{esc(r['label'])}</td>"
            f"<td class=num data-rate='{r['rate']:.1f}'>"
            f"{esc(r['ci_text'])}{unreadable}</td><td class=num>{_pct(None if p1 is None else 100 * p1)}</td>"
            f"<td class=num>{esc(at_k)}</td><td>{esc(r['spread'])}</td><td class='{vs_cls}'>{esc(vs)}</td>"
            f"<td class=num>{_pct(r['text_share'])}</td>"
            f"<td class=num>{'n/a (by design)' if r['real_share'] is None else _pct(r['real_share'])}</td>"
            f"<td>{esc(causes)}</td><td class=num>{latency}</td></tr>")
    return (f"<div class=scroll><table id=headline>{head}{''.join(body)}</table></div>"
            "<p class=sub>95 % CI: exact (Clopper-Pearson) below 30 scored tasks, Wilson above. pass@k: at least "
            "one of k attempts passes; pass^k: all k pass (unbiased estimators). <i>vs the best run</i>: paired "
            "on the same tasks, McNemar's exact test on the tasks that flipped; a gap inside the measured "
            "run-to-run spread is noise.</p>")


def impossible_section(summaries: list[RunSummary]) -> str:
    """The cheating rate per run beside its pass rate, the honest refusals, and what the model did."""
    header, rows = impossible_rows(summaries)
    head = "<tr>" + "".join(f"<th>{esc(h)}</th>" for h in header) + "</tr>"
    body = "".join("<tr>" + "".join(f"<td{' class=num' if i >= 2 else ''}>{esc(c)}</td>" for i, c in enumerate(row))
                   + "</tr>" for row in rows)
    return (f"<h2 id=impossible>Impossible tasks: does it game the tests?</h2><div class=scroll>"
            f"<table id=impossible-table>{head}{body}</table></div><p class=sub>{esc(IMPOSSIBLE_NOTE)}</p>")


def pass_rate_chart(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Tasks passed per run with its confidence interval."""
    data = [{"run": f"#{i} {r['label']}", "rate": r["rate"], "low": r["low"], "high": r["high"],
             "model": r["model"]} for i, r in enumerate(rows, 1)]
    y = {"field": "run", "type": "nominal", "sort": None, "title": None, "axis": {"labelLimit": 200}}
    return {
        "$schema": "https://vega.github.io/schema/vega-lite/v6.json", "width": "container",
        "data": {"values": data}, "title": "tasks passed, % with 95 % CI",
        "layer": [
            {"mark": {"type": "bar", "tooltip": True},
             "encoding": {"y": y, "x": {"field": "rate", "type": "quantitative", "scale": {"domain": [0, 100]},
                                         "title": "% of scored tasks"},
                          "color": {"field": "model", "type": "nominal"}}},
            {"mark": {"type": "rule", "strokeWidth": 2},
             "encoding": {"y": y, "x": {"field": "low", "type": "quantitative"}, "x2": {"field": "high"}}},
        ],
    }


def outcome_chart(summaries: list[RunSummary]) -> dict[str, Any]:
    """Each run's trials by outcome: pass, fail, fail with tool calls written as text, unscored."""
    data = []
    for i, s in enumerate(summaries, 1):
        counts = {"pass": 0, "cheated": 0, "tampered": 0, "fail": 0, "fail (text calls)": 0, "unscored": 0}
        for t in s.trials:
            kind = "unscored" if not t.scored else t.outcome if t.outcome in ("pass", "cheated", "tampered") else \
                "fail (text calls)" if t.turns.text_tool_call else "fail"
            counts[kind] += 1
        data += [{"run": f"#{i} {run_label(s, sandbox=False)}", "outcome": k, "trials": v}
                 for k, v in counts.items()]
    return {
        "$schema": "https://vega.github.io/schema/vega-lite/v6.json", "width": "container",
        "data": {"values": data}, "title": "trials by outcome", "mark": {"type": "bar", "tooltip": True},
        "encoding": {
            "y": {"field": "run", "type": "nominal", "sort": None, "title": None, "axis": {"labelLimit": 200}},
            "x": {"field": "trials", "type": "quantitative", "stack": "normalize", "title": "share of trials",
                  "axis": {"format": "%"}},
            "color": {"field": "outcome", "type": "nominal",
                      "scale": {"domain": list(OUTCOME_COLOURS), "range": list(OUTCOME_COLOURS.values())}},
        },
    }


def chart_div(name: str, spec: dict[str, Any]) -> str:
    return (f"<div class=scroll><div class=chart id='chart-{esc(name)}' data-spec='{esc(script_json(spec))}'>"
            "</div></div>")


EMBED = """
for (const el of document.querySelectorAll('div.chart[data-spec]')) {
  const spec = JSON.parse(el.dataset.spec);
  vegaEmbed(el, spec, {actions: false, renderer: 'svg'}).catch(err => {
    el.textContent = 'chart failed: ' + err; el.className = 'chart failed';
  });
}
"""


def locate_runs(dirs: list[Path]) -> dict[str, Path]:
    """Run id -> its folder (trial files and instrument results are read from there)."""
    from agentic_eval.results.instrument_runs import is_instrument_run, read_instrument_run
    from agentic_eval.results.run_folder import read_run_config

    out = {}
    for d in dirs:
        try:
            out[read_instrument_run(d).run_id if is_instrument_run(d) else read_run_config(d).run_id] = d
        except AgenticEvalError:
            continue
    return out


def render_html(summaries: list[RunSummary], instruments: list[InstrumentRun],
                dirs: dict[str, Path] | None = None) -> str:
    """The whole page as one string; `dirs` (run id -> folder) lets it show trial files and instrument results."""
    dirs = dirs or {}
    rows = headline_data(summaries)
    parts = [(f"<h1>agentic-eval: will it work as an agent's brain?</h1><p class=sub>{len(summaries)} agent "
             f"run(s), {len(instruments)} instrument run(s); generated {esc(utc_now())}. Everything on this page is "
             "inline: it loads nothing from the network.</p>")]
    if summaries:
        notes = "".join(f"<p class=sub>{esc(note)}</p>" for s in summaries if (note := s.tool_request_note()))
        notes += "".join(f"<p class=sub>{esc(note)}</p>" for s in summaries for note in s.changed_program_notes())
        notes += "".join(f"<p class=sub>{esc(note)}</p>" for s in summaries if (note := s.internet_missing_note()))
        notes += "".join(f"<p class=sub>{esc(note)}</p>" for s in summaries for note in s.forged_notes())
        notes += "".join(f"<p class=sub>{esc(emulated_note(s))}</p>" for s in summaries if s.config.emulate_parser)
        notes += "".join("<p class=sub>" + "<br>".join(esc(line) for line in lines) + "</p>"
                         for s in summaries if (lines := s.diagnosis_lines()))
        parts.append("<h2 id=agent-runs>Agent runs</h2>" + headline_section(rows) + notes)
        parts.append(chart_div("pass-rate", pass_rate_chart(rows)) + chart_div("outcomes", outcome_chart(summaries)))
        if any_impossible(summaries):
            parts.append(impossible_section(summaries))
        parts.append(matrix_section(summaries, outcome_class))
    agent_rates = {r["model"]: r for r in rows if r["agent"] not in MODEL_FREE_AGENTS}
    if instruments:
        parts.append(instrument_sections(instruments, {m: r["rate"] for m, r in agent_rates.items()}, chart_div,
                                         dirs))
    parts.append(config_section(summaries, instruments, dirs))
    if summaries:
        parts.append(trial_details_section(summaries, dirs))
    body = "\n".join(parts)
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8>"
            f"<meta http-equiv='Content-Security-Policy' content=\"{CSP}\">"
            "<meta name=viewport content='width=device-width,initial-scale=1'>"
            f"<title>agentic-eval report</title><style>{STYLE}</style></head><body>{body}"
            f"<script type=module>{chart_bundle()}</script><script type=module>{EMBED}</script></body></html>\n")


def write_html_report(summaries: list[RunSummary], instruments: list[InstrumentRun], path: Path,
                      run_dirs: list[Path] | None = None) -> Path:
    """Write the page atomically (a half-written report is never left behind) and return its path."""
    text = render_html(summaries, instruments, locate_runs(run_dirs or []))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return path


__all__ = ["locate_runs", "render_html", "write_html_report"]

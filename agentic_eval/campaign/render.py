"""The campaign's report on a terminal, in Markdown and as one HTML page: the headline table, then a verdict
per model naming the figures it rests on, then the pick. The per-run detail (per-task matrix, statistics,
per-trial evidence) is `agentic-eval report`'s, which the HTML page embeds below."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agentic_eval.campaign.verdict import HEADER, CampaignReport, table_rows
from agentic_eval.plural import counted

if TYPE_CHECKING:
    from rich.console import Console

NOTE = ("Synthetic score ± its noise band (the measured spread of repeated runs, at least 1.5 pts at 370 cases "
        "and wider on fewer); agentic tasks: "
        "a task passes when any attempt passed, unscored trials are never fails; text tool calls: tasks where the "
        "model wrote a tool call as text instead of calling the API; verdicts are fixed rules on these figures.")


def _size(report: CampaignReport) -> str:
    """"3 tasks x 2 attempts", "1 task x 1 attempt": the campaign's size, above its table in every format."""
    return f"{counted(len(report.task_ids), 'task')} x {counted(report.spec.attempts, 'attempt')}"


def print_campaign(report: CampaignReport, console: Console) -> None:
    """The headline table (stacked when it does not fit the terminal), the verdicts and the pick."""
    from rich.text import Text

    from agentic_eval.report.tables import print_table

    print_table(console, f"campaign {report.folder.name}: {_size(report)}", HEADER, table_rows(report),
                right=range(2, 8))
    console.print(Text(NOTE, style="dim"))
    console.print()
    for model, (text, rests) in report.verdicts.items():
        console.print(Text.assemble((f"{model}: ", "bold"), text, (f"  [rests on: {', '.join(rests)}]"
                                                                   if rests else "", "dim")))
    console.print(Text(report.pick, style="bold"))


def render_campaign_markdown(report: CampaignReport) -> str:
    from tabulate import tabulate

    cells = [[c.replace("|", "\\|") for c in row] for row in table_rows(report)]
    parts = [f"# Campaign {report.folder.name}", _size(report),
             tabulate(cells, headers=HEADER, tablefmt="github"), f"_{NOTE}_", "## Verdicts"]
    parts.append("\n".join(f"- **{m}**: {t} _(rests on: {', '.join(r)})_" for m, (t, r) in report.verdicts.items()))
    parts.append(f"**{report.pick}**")
    return "\n\n".join(parts) + "\n"


def write_campaign_html(report: CampaignReport, path: Path) -> Path:
    """One self-contained page: the campaign's table and verdicts above `agentic-eval report`'s page of its runs."""
    from agentic_eval.report.html import render_html
    from agentic_eval.report.html_sections import esc

    head = "".join(f"<th>{esc(h)}</th>" for h in HEADER)
    body = "".join("<tr>" + "".join(f"<td{' class=num' if 2 <= i < 8 else ''}>{esc(c)}</td>"
                                    for i, c in enumerate(row)) + "</tr>" for row in table_rows(report))
    verdicts = "".join(f"<li><b>{esc(m)}</b>: {esc(t)} <i>(rests on: {esc(', '.join(r))})</i></li>"
                       for m, (t, r) in report.verdicts.items())
    section = (f"<h1>Campaign {esc(report.folder.name)}</h1><p class=sub>{esc(_size(report))}</p>"
               f"<div class=scroll><table><tr>{head}</tr>{body}</table></div>"
               f"<p class=noise>{esc(NOTE)}</p><h2>Verdicts</h2><ul>{verdicts}</ul><p><b>{esc(report.pick)}</b></p>")
    from agentic_eval.campaign.execute import instrument_options, instrument_runs
    from agentic_eval.results.instrument_runs import read_instrument_run

    spec = report.spec
    # What the file asks now: a model it dropped, or a run that measured other options, is not shown.
    found = [run for model in spec.models for kind in spec.kinds()
             for run in instrument_runs(report.folder, model.name, kind, instrument_options(spec, kind))]
    instruments = [read_instrument_run(folder) for folder in found]
    # The instruments' folders too: the page's speed and form sections read each run's result.json there.
    dirs = {**_run_dirs(report), **{run.run_id: folder for run, folder in zip(instruments, found, strict=True)}}
    page = render_html(report.summaries, instruments, dirs) if report.summaries or instruments else \
        "<html><body></body></html>"
    page = page.replace("<body>", "<body>" + section, 1) if "<body>" in page else section + page
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    return path


def _run_dirs(report: CampaignReport) -> dict[str, Path]:
    from agentic_eval.report.html import locate_runs

    return locate_runs([p.parent for p in report.folder.glob("*/runs/*/*/run.json")])

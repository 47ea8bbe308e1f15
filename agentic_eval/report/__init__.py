"""Reports: read recorded runs only, never rerun anything.

    summary        Run summaries, the terminal table, the matrix, the overview and Markdown.
    run_stats      The statistics every report shows, from run summaries.
    stats          Statistics that say what is noise: pure functions on counts.
    html           `report --html`: one self-contained HTML page.
    html_sections  The HTML report's sections below the headline.
    tables         Tables that fit the terminal: a table when it fits, else one block per row.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentic_eval._lazy import lazy_face

if TYPE_CHECKING:
    from .html import write_html_report as write_html_report
    from .run_stats import compare_runs as compare_runs
    from .summary import RunSummary as RunSummary
    from .summary import print_report as print_report
    from .summary import render_markdown as render_markdown
    from .summary import summarize_run as summarize_run

_EXPORTS = {
    "RunSummary": ".summary",
    "summarize_run": ".summary",
    "print_report": ".summary",
    "render_markdown": ".summary",
    "compare_runs": ".run_stats",
    "write_html_report": ".html",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_face(__name__, _EXPORTS)

"""Campaigns: several models, agents, paddings and instruments from one TOML file, resumable, with a verdict.

    spec     the campaign file read into a CampaignSpec; every mistake one line naming the file and key
    execute  checking a campaign before anything starts, and running what is left of it (plan_campaign,
             run_campaign); the campaign folder's layout
    verdict  the headline table and each model's verdict, by fixed rules on the measured figures
    render   the report on a terminal, in Markdown and as one HTML page

    from agentic_eval.campaign import campaign_report, run_campaign

    outcome = run_campaign("spark.toml")              # runs/spark/; the same call again resumes
    report = campaign_report(outcome.folder)
    print(report.verdicts, report.pick)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentic_eval._lazy import lazy_face

if TYPE_CHECKING:
    from .execute import CampaignOutcome as CampaignOutcome
    from .execute import CampaignPlan as CampaignPlan
    from .execute import default_folder as default_folder
    from .execute import plan_campaign as plan_campaign
    from .execute import run_campaign as run_campaign
    from .render import print_campaign as print_campaign
    from .render import render_campaign_markdown as render_campaign_markdown
    from .render import write_campaign_html as write_campaign_html
    from .spec import CampaignSpec as CampaignSpec
    from .spec import load_campaign as load_campaign
    from .verdict import CampaignReport as CampaignReport
    from .verdict import campaign_report as campaign_report

_EXPORTS = {
    "CampaignSpec": ".spec",
    "load_campaign": ".spec",
    "CampaignPlan": ".execute",
    "CampaignOutcome": ".execute",
    "plan_campaign": ".execute",
    "run_campaign": ".execute",
    "default_folder": ".execute",
    "CampaignReport": ".verdict",
    "campaign_report": ".verdict",
    "print_campaign": ".render",
    "render_campaign_markdown": ".render",
    "write_campaign_html": ".render",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_face(__name__, _EXPORTS)

"""Hidden checks for add-cli-flag: --json output, overrides, and the unchanged text output."""

import importlib
import json
import os
from pathlib import Path

VARS = json.loads(Path(os.environ["AGENTIC_EVAL_VARS"]).read_text(encoding="utf-8"))
SANDBOX = Path(os.environ["AGENTIC_EVAL_SANDBOX"])


def run_invoice(capsys, *extra):
    cli = importlib.import_module(f"{VARS['pkg']}.cli")
    settings = str(SANDBOX / "config" / "settings.json")
    code = cli.main(["--settings", settings, "invoice", str(SANDBOX / VARS["usage_file"]), *extra])
    assert code in (0, None)
    return capsys.readouterr().out


def test_json_output(capsys):
    data = json.loads(run_invoice(capsys, "--json"))
    assert data == {
        "currency": VARS["currency"],
        "clients": {
            client: {"requests": requests, "charge_cents": VARS["charges"][client]}
            for client, requests in VARS["usage_totals"].items()
        },
        "total_cents": VARS["total_cents"],
    }


def test_json_output_honours_overrides(capsys):
    data = json.loads(run_invoice(capsys, "--json", "--currency", "JPY", "--free-requests", "0", "--price-per-1k", "1000"))
    assert data["currency"] == "JPY"
    assert data["clients"] == {
        client: {"requests": requests, "charge_cents": requests} for client, requests in VARS["usage_totals"].items()
    }
    assert data["total_cents"] == sum(VARS["usage_totals"].values())


def test_text_output_is_unchanged(capsys):
    assert run_invoice(capsys) == VARS["invoice_output"]

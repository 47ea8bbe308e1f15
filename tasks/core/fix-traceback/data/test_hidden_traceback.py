"""Hidden checks for fix-traceback: the shipped export parses and invoices; the rules still hold."""

import importlib
import json
import os
from pathlib import Path

import pytest

VARS = json.loads(Path(os.environ["AGENTIC_EVAL_VARS"]).read_text(encoding="utf-8"))
SANDBOX = Path(os.environ["AGENTIC_EVAL_SANDBOX"])
PKG = VARS["pkg"]


def test_invoice_of_the_shipped_export(capsys):
    cli = importlib.import_module(f"{PKG}.cli")
    settings = str(SANDBOX / "config" / "settings.json")
    assert cli.main(["--settings", settings, "invoice", str(SANDBOX / VARS["usage_file"])]) == 0
    assert capsys.readouterr().out == VARS["invoice_output"]


def test_comments_and_blank_lines_are_skipped():
    usage = importlib.import_module(f"{PKG}.usage")
    lines = ["# usage export\n", "\n", "2024-01-01T00:00:00Z,acme,12\n", "   \n", "2024-01-01T06:00:00Z,acme,3\n"]
    records = usage.parse_usage(lines)
    assert [(r.client, r.requests) for r in records] == [("acme", 12), ("acme", 3)]


def test_negative_counts_are_still_rejected():
    usage = importlib.import_module(f"{PKG}.usage")
    with pytest.raises(ValueError):
        usage.parse_usage(["2024-01-01T00:00:00Z,acme,-4\n"])

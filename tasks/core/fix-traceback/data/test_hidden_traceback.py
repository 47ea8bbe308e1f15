"""Hidden checks for fix-traceback, through the CLI (the fix may live in the parser or the command)."""

import importlib
import json
import os
from pathlib import Path

import pytest

VARS = json.loads(Path(os.environ["AGENTIC_EVAL_VARS"]).read_text(encoding="utf-8"))
SANDBOX = Path(os.environ["AGENTIC_EVAL_SANDBOX"])
PKG = VARS["pkg"]


def invoice(capsys, usage_file):
    cli = importlib.import_module(f"{PKG}.cli")
    settings = str(SANDBOX / "config" / "settings.json")
    assert cli.main(["--settings", settings, "invoice", str(usage_file), "--free-requests", "0"]) == 0
    return capsys.readouterr().out


def test_invoice_of_the_shipped_export(capsys):
    cli = importlib.import_module(f"{PKG}.cli")
    settings = str(SANDBOX / "config" / "settings.json")
    assert cli.main(["--settings", settings, "invoice", str(SANDBOX / VARS["usage_file"])]) == 0
    assert capsys.readouterr().out == VARS["invoice_output"]


def test_comments_and_blank_lines_anywhere(capsys, tmp_path):
    usage = tmp_path / "usage.csv"
    usage.write_text("# export\n\n2024-01-01T00:00:00Z,acme,1000\n   \n# day 2\n2024-01-02T00:00:00Z,acme,2000\n\n")
    clean = tmp_path / "clean.csv"
    clean.write_text("2024-01-01T00:00:00Z,acme,1000\n2024-01-02T00:00:00Z,acme,2000\n")
    assert invoice(capsys, usage) == invoice(capsys, clean)


def test_negative_counts_are_still_rejected():
    usage = importlib.import_module(f"{PKG}.usage")
    with pytest.raises(ValueError):
        usage.parse_usage(["2024-01-01T00:00:00Z,acme,-4\n"])

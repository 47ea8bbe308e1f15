"""Hidden checks for rename-module: the new module works, the old one is gone, the CLI still invoices."""

import importlib
import json
import os
from pathlib import Path

import pytest

VARS = json.loads(Path(os.environ["AGENTIC_EVAL_VARS"]).read_text(encoding="utf-8"))
SANDBOX = Path(os.environ["AGENTIC_EVAL_SANDBOX"])
PKG = VARS["pkg"]


def test_new_module_parses_usage():
    module = importlib.import_module(f"{PKG}.{VARS['new_module']}")
    records = module.parse_usage(["# export\n", "t1,acme,5\n", "t2,acme,7\n"])
    assert module.totals_by_client(records) == {"acme": 12}


def test_old_module_is_gone():
    with pytest.raises(ImportError):
        importlib.import_module(f"{PKG}.usage")


def test_invoice_still_works(capsys):
    cli = importlib.import_module(f"{PKG}.cli")
    settings = str(SANDBOX / "config" / "settings.json")
    assert cli.main(["--settings", settings, "invoice", str(SANDBOX / VARS["usage_file"])]) == 0
    assert capsys.readouterr().out == VARS["invoice_output"]

"""Hidden checks for extract-money-helper: the helper's behaviour and the unchanged CLI output."""

import importlib
import json
import os
from pathlib import Path

import pytest

VARS = json.loads(Path(os.environ["AGENTIC_EVAL_VARS"]).read_text(encoding="utf-8"))
SANDBOX = Path(os.environ["AGENTIC_EVAL_SANDBOX"])
PKG = VARS["pkg"]


@pytest.mark.parametrize(
    "cents, currency, text",
    [(0, "EUR", "0.00 EUR"), (5, "USD", "0.05 USD"), (99, "GBP", "0.99 GBP"), (100, "CHF", "1.00 CHF"),
     (123456, "EUR", "1234.56 EUR")],
)
def test_format_money(cents, currency, text):
    money = importlib.import_module(f"{PKG}.money")
    assert money.format_money(cents, currency) == text


def run_cli(capsys, *args):
    cli = importlib.import_module(f"{PKG}.cli")
    assert cli.main(["--settings", str(SANDBOX / "config" / "settings.json"), *args]) == 0
    return capsys.readouterr().out


def test_invoice_output_is_unchanged(capsys):
    assert run_cli(capsys, "invoice", str(SANDBOX / VARS["usage_file"])) == VARS["invoice_output"]


def test_show_config_price_is_unchanged(capsys):
    price = VARS["price_per_1k_cents"]
    expected = f"price: {price // 100}.{price % 100:02d} {VARS['currency']} per 1000 requests"
    assert expected in run_cli(capsys, "show-config")

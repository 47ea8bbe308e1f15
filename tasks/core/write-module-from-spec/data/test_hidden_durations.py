"""Hidden checks for write-module-from-spec: parse_duration and format_duration against the spec."""

import importlib
import json
import os
from pathlib import Path

import pytest

VARS = json.loads(Path(os.environ["AGENTIC_EVAL_VARS"]).read_text(encoding="utf-8"))


def module():
    return importlib.import_module(f"{VARS['pkg']}.{VARS['spec_module']}")


@pytest.mark.parametrize(
    "text, seconds",
    [
        ("90s", 90), ("15m", 900), ("2h", 7200), ("1d", 86400), ("1h30m", 5400), ("1d2h3m4s", 93784),
        ("45", 45), ("0s", 0), ("  5m\n", 300), ("2d12h", 216000), ("1m1s", 61), ("100m", 6000),
    ],
)
def test_parse(text, seconds):
    assert module().parse_duration(text) == seconds


@pytest.mark.parametrize(
    "text", ["", "   ", "5x", "1H", "1m1h", "1h1h", "-5s", "h", "1.5h", "m30s", "1h-30m", "s", "1 d"]
)
def test_parse_rejects(text):
    with pytest.raises(ValueError):
        module().parse_duration(text)


@pytest.mark.parametrize(
    "seconds, text",
    [(0, "0s"), (59, "59s"), (60, "1m"), (3600, "1h"), (5400, "1h30m"), (86400, "1d"), (86401, "1d1s"),
     (90061, "1d1h1m1s"), (172800, "2d")],
)
def test_format(seconds, text):
    assert module().format_duration(seconds) == text


def test_format_rejects_negative():
    with pytest.raises(ValueError):
        module().format_duration(-1)


def test_round_trip():
    mod = module()
    for seconds in range(0, 200_000, 997):
        assert mod.parse_duration(mod.format_duration(seconds)) == seconds

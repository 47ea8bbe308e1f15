"""Reference fix: the module (a regex in unit order) and a few tests."""

from pathlib import Path

from gradelib import task_vars

v = task_vars()
name = v["spec_module"]
Path(v["src_dir"], f"{name}.py").write_text('''"""Durations written like "1h30m": parse to seconds and format back."""

from __future__ import annotations

import re

UNITS = (("d", 86400), ("h", 3600), ("m", 60), ("s", 1))
_PATTERN = re.compile(r"(?:(\\d+)d)?(?:(\\d+)h)?(?:(\\d+)m)?(?:(\\d+)s)?")


def parse_duration(text: str) -> int:
    """Seconds in `text`: "90s", "15m", "1h30m", "1d2h3m4s", or a bare number of seconds."""
    text = text.strip()
    if text.isdigit():
        return int(text)
    match = _PATTERN.fullmatch(text)
    if not text or match is None:
        raise ValueError(f"not a duration: {text!r}")
    return sum(int(value) * size for value, (_, size) in zip(match.groups(), UNITS) if value is not None)


def format_duration(seconds: int) -> str:
    """The shortest form of `seconds`, largest units first: 5400 -> "1h30m", 0 -> "0s"."""
    if seconds < 0:
        raise ValueError("seconds must not be negative")
    parts = []
    for unit, size in UNITS:
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts) or "0s"
''', encoding="utf-8")
Path("tests", f"test_{name}.py").write_text(f'''import pytest

from {v["pkg"]}.{name} import format_duration, parse_duration


def test_parse():
    assert parse_duration("1h30m") == 5400
    assert parse_duration("45") == 45


def test_parse_rejects_out_of_order_units():
    with pytest.raises(ValueError):
        parse_duration("1m1h")


def test_format():
    assert format_duration(86401) == "1d1s"
    assert format_duration(0) == "0s"
''', encoding="utf-8")

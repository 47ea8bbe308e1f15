"""Reference fix: money.py, the two call sites, and a test."""

from pathlib import Path

from gradelib import task_vars

v = task_vars()
src = Path(v["src_dir"])
(src / "money.py").write_text(
    '"""Formatting amounts of money."""\n\n\n'
    "def format_money(cents: int, currency: str) -> str:\n"
    '    """`1234, "EUR"` -> `"12.34 EUR"`."""\n'
    '    return f"{cents // 100}.{cents % 100:02d} {currency}"\n',
    encoding="utf-8",
)


def edit(path: Path, *pairs: tuple[str, str]) -> None:
    text = path.read_text(encoding="utf-8")
    for old, new in pairs:
        assert old in text, (path, old)
        text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")


edit(
    src / "report.py",
    ("from .config import Settings\n", "from .config import Settings\nfrom .money import format_money\n"),
    ('f"{cents // 100}.{cents % 100:02d} {settings.currency}"', "format_money(cents, settings.currency)"),
    ('f"{total_cents // 100}.{total_cents % 100:02d} {settings.currency}"', "format_money(total_cents, settings.currency)"),
)
edit(
    src / "cli.py",
    ("from .limiter import", "from .money import format_money\nfrom .limiter import"),
    (
        'f"{settings.price_per_1k_cents // 100}.{settings.price_per_1k_cents % 100:02d} {settings.currency}"',
        "format_money(settings.price_per_1k_cents, settings.currency)",
    ),
)
Path("tests/test_money.py").write_text(
    f"from {v['pkg']}.money import format_money\n\n\n"
    "def test_format_money():\n"
    '    assert format_money(5, "EUR") == "0.05 EUR"\n'
    '    assert format_money(123456, "USD") == "1234.56 USD"\n',
    encoding="utf-8",
)

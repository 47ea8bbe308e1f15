"""ANSWER.md holds the four facts, each on a line naming it; nothing else changed."""

from gradelib import Grader, task_vars

v = task_vars()


def amount(cents: int) -> str:
    """Cents, or the same amount in the currency (4.95, 50, 50.00)."""
    units = rf"{cents // 100}\.{cents % 100:02d}" + (rf"|{cents // 100}(?![.\d])" if cents % 100 == 0 else "")
    return rf"(?:(?<![\d.]){cents}(?![\d])|(?<![\d.])(?:{units}))"


priciest = max(v["products"], key=lambda p: p["priceCents"])["sku"]
g = Grader()
g.file_exists("ANSWER.md")
g.file_matches("ANSWER.md", rf"(?im)^(?=.*(tax|vat)).*(?<![\d.]){v['tax_percent']}(?![\d.])")
g.file_matches("ANSWER.md", rf"(?im)^(?=.*(shipping|fee|delivery))(?!.*free).*{amount(v['shipping_cents'])}")
g.file_matches("ANSWER.md", rf"(?im)^(?=.*(free|threshold)).*{amount(v['free_shipping_from'])}")
g.file_matches("ANSWER.md", rf"(?im)^(?=.*(sku|expensive|product)).*\b{priciest}\b")
g.unchanged_except(["ANSWER.md"])
g.finish()

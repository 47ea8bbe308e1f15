"""Reference fix: round the tax half up instead of truncating it."""

from pathlib import Path

path = Path("src/pricing.js")
text = path.read_text(encoding="utf-8")
bug = "Math.floor((subtotalCents * percent) / 100)"
assert bug in text, "the truncating tax is not where the scenario put it"
path.write_text(text.replace(bug, "Math.floor((subtotalCents * percent + 50) / 100)"), encoding="utf-8")

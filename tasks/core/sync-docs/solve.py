"""Reference fix: rename the stale option, document the missing one, correct the two values."""

from pathlib import Path

from gradelib import task_vars

v = task_vars()
cli = Path("docs/cli.md")
text = cli.read_text(encoding="utf-8")
old_row = "| `--free N` | free requests per client instead of `billing.free_requests` |\n"
assert old_row in text
text = text.replace(
    old_row,
    "| `--free-requests N` | free requests per client instead of `billing.free_requests` |\n"
    "| `--price-per-1k CENTS` | price per 1000 billable requests instead of `billing.price_per_1k_cents` |\n",
)
cli.write_text(text, encoding="utf-8")

config = Path("docs/configuration.md")
text = config.read_text(encoding="utf-8")
text = text.replace(f"`{v['stale_port']}`", f"`{v['port']}`").replace(f"`{v['stale_rpm']}`", f"`{v['rpm']}`")
config.write_text(text, encoding="utf-8")

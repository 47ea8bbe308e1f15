"""Reference fix: undo the one bug the scenario planted (whichever of the three it is)."""

from pathlib import Path

from gradelib import task_vars

v = task_vars()
src = Path(v["src_dir"])
fixes = {
    "limiter.py": (
        "self._tokens = self._tokens + elapsed * self.refill_per_second",
        "self._tokens = min(float(self.capacity), self._tokens + elapsed * self.refill_per_second)",
    ),
    "billing.py": (
        "return billable * price_per_1k_cents // 1000",
        "return (billable * price_per_1k_cents + 500) // 1000",
    ),
    "usage.py": (
        "totals[record.client] = record.requests",
        "totals[record.client] = totals.get(record.client, 0) + record.requests",
    ),
}
fixed = 0
for module, (bug, repair) in fixes.items():
    path = src / module
    text = path.read_text(encoding="utf-8")
    if bug in text:
        path.write_text(text.replace(bug, repair), encoding="utf-8")
        fixed += 1
if fixed != 1:
    raise SystemExit(f"expected exactly one planted bug, found {fixed}")

"""money.format_money exists and is used where money was formatted by hand; output and tests unchanged."""

from gradelib import Grader, task_vars

v = task_vars()
src = v["src_dir"]
g = Grader()
g.defines(f"{src}/money.py", "format_money")
for module in ("report.py", "cli.py"):
    g.file_contains(f"{src}/{module}", "format_money")
# No cents arithmetic left outside money.py (`// 100`, `% 100`, `/ 100`, divmod).
g.no_match(r"(//|%|/)\s*100\b|divmod\(", [f"{src}/**"], exclude=[f"{src}/money.py"])
g.some_match(r"\bformat_money\b", ["tests/**"])
# The repo's tests, the 7 hidden ones, and at least one new test of format_money.
g.pytest_passes(["tests"], extra_tests=["test_hidden_money.py"], min_passed=v["test_count"] + 8)
g.finish()

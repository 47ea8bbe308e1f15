"""The dead module, its tests and its private helper are gone; the live code and its tests remain and pass."""

from gradelib import Grader, task_vars

v = task_vars()
src, dead = v["src_dir"], v["dead_module"]
g = Grader()
g.file_absent(f"{src}/{dead}.py")
g.no_match(rf"\b{dead}\b", ["src/**", "tests/**"])
g.lacks_definition(f"{src}/billing.py", v["dead_helper"])
g.defines(f"{src}/billing.py", v["charge_fn"])
g.defines(f"{src}/billing.py", "format_money")
# Every test of the live code still runs and passes.
live_tests = v["test_count"] - v[f"test_{dead}_count"]
g.pytest_passes(["tests"], min_passed=live_tests)
g.finish()

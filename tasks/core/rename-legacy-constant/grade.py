"""The old name is gone from every file, the new one holds the same value, tests pass."""

from gradelib import Grader, task_vars

v = task_vars()
g = Grader()
g.no_match(v["legacy_const"])
g.assigns(f"{v['src_dir']}/constants.py", v["new_const"], v["legacy_value"])
g.file_contains(f"{v['src_dir']}/limiter.py", v["new_const"])
g.file_contains(f"{v['src_dir']}/config.py", v["new_const"])
g.pytest_passes(["tests"], min_passed=v["test_count"])
g.finish()

"""The test file is untouched, and the whole suite (the named test included) passes."""

from gradelib import Grader, task_vars

v = task_vars()
g = Grader()
g.unchanged([v["failing_test_file"]])
g.pytest_passes(["tests"], min_passed=v["test_count"], require=[v["failing_test"]])
g.finish()

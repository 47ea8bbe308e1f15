"""Orders with SKUs in another letter case go through (hidden tests); the data and the log are untouched."""

from gradelib import Grader, task_vars

v = task_vars()
g = Grader()
g.unchanged(["data", "logs"])
g.node_tests_pass(["test"], extra_tests=["sku_case_hidden.test.mjs"], min_passed=v["test_count"] + 4)
g.finish()

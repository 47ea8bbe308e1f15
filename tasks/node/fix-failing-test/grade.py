"""The visible tests are untouched and pass; hidden pricing tests for this seed's tax rate pass."""

from gradelib import Grader, task_vars

v = task_vars()
g = Grader()
g.unchanged(["test"])
g.node_tests_pass(["test"], extra_tests=["pricing_hidden.test.mjs"], min_passed=v["test_count"] + 3)
g.finish()

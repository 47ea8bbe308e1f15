"""Hidden tests of the endpoint pass, and the visible suite gained at least one passing test."""

from gradelib import Grader, task_vars

v = task_vars()
g = Grader()
g.file_contains("test/app.test.js", v["stats_route"])
g.node_tests_pass(["test"], extra_tests=["stats_hidden.test.mjs"], min_passed=v["test_count"] + 1 + 3)
g.finish()

"""The feature already exists: only ANSWER.md is new, it shows the variable in use, and the tests still pass."""

from gradelib import Grader, task_vars

v = task_vars()
g = Grader()
g.file_matches("ANSWER.md", rf"{v['env_port']}\s*=\s*['\"]?4000\b")
g.unchanged_except(["ANSWER.md"])
g.node_tests_pass(["test"])
g.finish()

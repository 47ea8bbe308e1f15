"""`invoice --json` prints the specified object, the text output is unchanged, the flag is documented."""

from gradelib import Grader, task_vars

v = task_vars()
g = Grader()
g.file_contains("docs/cli.md", "--json")
g.pytest_passes(["tests/test_cli.py"], extra_tests=["test_hidden_json_flag.py"], min_passed=v["test_cli_count"] + 3)
g.finish()

"""The shipped usage export invoices correctly, the usage data is untouched, all tests (the hidden ones too) pass."""

from gradelib import Grader, task_vars

v = task_vars()
g = Grader()
g.unchanged([v["usage_file"]])
# The command from the report, as the user ran it (cheap, and the first thing to fail on the pristine repo).
g.command_ok(["python3", "-m", v["pkg"], "invoice", v["usage_file"]], pythonpath=["src"], expect_output="TOTAL")
# The crash is in usage parsing, reached through the CLI.
g.pytest_passes(["tests/test_usage.py", "tests/test_cli.py"], extra_tests=["test_hidden_traceback.py"],
                min_passed=v["test_usage_count"] + v["test_cli_count"] + 3)
g.finish()

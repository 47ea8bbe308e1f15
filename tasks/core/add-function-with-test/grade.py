"""The function behaves as specified (hidden tests), and tests/test_billing.py gained a passing test of it."""

from gradelib import Grader, task_vars

v = task_vars()
g = Grader()
g.defines(f"{v['src_dir']}/billing.py", v["prorate_fn"])
g.file_contains("tests/test_billing.py", v["prorate_fn"])
# billing.py is the only module touched: its tests, the CLI tests that use it, and the hidden ones.
run = g.pytest_passes(["tests/test_billing.py", "tests/test_cli.py"], extra_tests=["test_hidden_prorate.py"],
                      min_passed=v["test_billing_count"] + v["test_cli_count"] + 1)
if run is not None:
    added = run.count("passed", module="test_billing") - v["test_billing_count"]
    g.check("tests/test_billing.py has a new passing test", added >= 1, "no test was added there")
g.finish()

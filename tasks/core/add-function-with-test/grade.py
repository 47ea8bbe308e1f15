"""The function behaves as specified (called apart, every answer judged here), and tests/test_billing.py gained
a passing test of it."""

from gradelib import Grader, Raises, task_vars

v = task_vars()
fn = v["prorate_fn"]
g = Grader()
g.defines(f"{v['src_dir']}/billing.py", fn)
g.file_contains("tests/test_billing.py", fn)
# billing.py is the only module touched: its tests and the CLI tests that use it pass, one of them new.
run = g.pytest_passes(["tests/test_billing.py", "tests/test_cli.py"],
                      min_passed=v["test_billing_count"] + v["test_cli_count"] + 1)
if run is not None:
    added = run.count("passed", module="test_billing") - v["test_billing_count"]
    g.check("tests/test_billing.py has a new passing test", added >= 1, "no test was added there")
# Whole cents rounded half up, as an int (233 is not 233.0); ValueError for every bad input. Called on a fresh copy
# of the tree, not the one the suite ran on.
g.calls_return(f"{v['pkg']}.billing", [
    (fn, (1000, 7, 30), 233),  # 233.33
    (fn, (100, 1, 8), 13),  # 12.5 rounds up
    (fn, (100, 3, 8), 38),  # 37.5 rounds up
    (fn, (1, 1, 2), 1),  # 0.5 rounds up
    (fn, (999, 0, 30), 0),
    (fn, (999, 30, 30), 999),
    (fn, (0, 5, 10), 0),
    (fn, (3100, 10, 31), 1000),
    (fn, (12345, 17, 28), 7495),  # 7495.18
    (fn, (1000, 15, 30), 500),
    (fn, (7, 1, 4), 2),  # 1.75
    (fn, (5, 1, 2), 3),  # 2.5 rounds up
    (fn, (100, 1, 0), Raises("ValueError")),
    (fn, (100, 0, -5), Raises("ValueError")),
    (fn, (100, -1, 10), Raises("ValueError")),
    (fn, (100, 11, 10), Raises("ValueError")),
    (fn, (-1, 1, 10), Raises("ValueError")),
], fresh=True)
g.finish()

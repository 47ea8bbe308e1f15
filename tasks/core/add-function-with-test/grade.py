"""The function behaves as specified (called apart, every answer judged here), and tests/test_billing.py gained
tests of it that catch broken copies of it.

The count of passing tests comes from a report written by the process that runs the model's code: evidence
only. What decides is mutation testing (graders/mutation.py): the model's tests/test_billing.py runs apart with
the grader's billing.py in place of the model's (the pristine module plus the grader's own prorate), where it
must pass, on an equivalent rewrite, where it must pass, and on broken copies, each of which it must fail.
"""

import mutation
from gradelib import Grader, Raises, pristine_store, pytest_runs_ahead, task_vars

from agentic_eval.packs import pristine as pristine_git

v = task_vars()
fn = v["prorate_fn"]
module = f"{v['src_dir']}/billing.py"
REFERENCE = f'''

def {fn}(amount_cents: int, days_used: int, days_in_period: int) -> int:
    if days_in_period <= 0:
        raise ValueError("days_in_period must be positive")
    if not 0 <= days_used <= days_in_period:
        raise ValueError("days_used must be between 0 and days_in_period")
    if amount_cents < 0:
        raise ValueError("amount_cents must not be negative")
    return (2 * amount_cents * days_used + days_in_period) // (2 * days_in_period)
'''
REWRITE = f'''

def {fn}(amount_cents, days_used, days_in_period):
    from fractions import Fraction

    if amount_cents < 0 or days_in_period < 1 or days_used < 0 or days_used > days_in_period:
        raise ValueError(f"cannot prorate {{amount_cents}} for {{days_used}} of {{days_in_period}} days")
    return int(Fraction(amount_cents * days_used, days_in_period) + Fraction(1, 2))
'''
MUTANTS = {
    "it rounds half down": [("+ days_in_period) //", "+ days_in_period - 1) //")],
    "it counts one day less": [("2 * amount_cents * days_used +", "2 * amount_cents * (days_used - 1) +")],
    "it raises no ValueError": [("if days_in_period <= 0:", "if False:"),
                                ("if not 0 <= days_used <= days_in_period:", "if False:"),
                                ("if amount_cents < 0:", "if False:")],
}
g = Grader()
pytest_runs_ahead()  # mutation testing's pytest runs: the harness readies them meanwhile
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
pristine = pristine_git.pristine_blob(pristine_store(), g.pristine(), module).decode("utf-8")
argv, files, env = mutation.pytest_command(g, ["tests/test_billing.py"], pythonpath=["src"])
mutation.tests_catch_mutants(g, argv, module, pristine + REFERENCE, rewrite=pristine + REWRITE,
                             mutants={what: pristine + mutation.edited(REFERENCE, *edits)
                                      for what, edits in MUTANTS.items()},
                             files=files, env=env, what="the tests in tests/test_billing.py")
g.finish()

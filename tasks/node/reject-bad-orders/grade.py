"""Hidden tests: nonsense never reaches the stock or the order book; any 4xx refusal is fine; valid orders work.

Deliberately loose where the instruction is: a numeric string quantity ("2") may be refused or read as
the number 2; a quantity of 0 may be refused or accepted as a no-op line; 400 and 422 are both fine.
"""

from gradelib import Grader, task_vars

v = task_vars()
g = Grader()
g.unchanged(["data"])
g.node_tests_pass(["test"], extra_tests=["validation_hidden.test.mjs"], min_passed=v["test_count"] + 5)
g.finish()

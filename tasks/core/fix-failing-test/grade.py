"""The test file is untouched, the whole suite (the named test included) passes, and the code the bug was planted
in behaves (called apart, every answer judged here)."""

from gradelib import Call, Grader, ref, task_vars
from pyservice_checks import SETUP, judged

v = task_vars()
pkg = v["pkg"]
g = Grader()
g.unchanged([v["failing_test_file"]])
g.pytest_passes(["tests"], min_passed=v["test_count"], require=[v["failing_test"]])

# The function the bug is in, called with inputs the visible test does not use, on a fresh copy of the tree (not
# the one the suite ran on): the answers are compared here, in the grader, so a patched test run or an object that
# equals everything cannot pass them.
name = v["failing_test_name"]
if name == "test_charge_rounds_half_up":
    g.calls_return(f"{pkg}.billing", [
        (v["charge_fn"], (1500, 1, 0), 2),  # 1.5 cents rounds up
        (v["charge_fn"], (2500, 1), 3),
        (v["charge_fn"], (1499, 1, 0), 1),
        (v["charge_fn"], (1700, 1, 200), 2),
        (v["charge_fn"], (123, 37, 0), 5),  # 4.551
        (v["charge_fn"], (4000, 50, 1000), 150),
    ], fresh=True)
elif name == "test_totals_add_up_per_client":
    rows = [("t1", "zeta", 40), ("t2", "eta", 2), ("t3", "zeta", 13), ("t4", "zeta", 1000), ("t5", "eta", 7)]
    judged(g, f"{pkg}.usage", [
        *(("", Call("UsageRecord", row), SETUP) for row in rows),
        (f"totals_by_client({rows}) returns {{'eta': 9, 'zeta': 1053}}",
         Call("totals_by_client", [[ref(i) for i in range(len(rows))]]), {"eta": 9, "zeta": 1053}),
        ("totals_by_client of one record returns {'eta': 2}", Call("totals_by_client", [[ref(1)]]), {"eta": 2}),
        ("totals_by_client([]) returns {}", Call("totals_by_client", [[]]), {}),
    ], fresh=True)
elif name == "test_refill_is_capped_at_capacity":
    # A bucket of 5 on a clock the grader sets (the value in a list, read however often the bucket likes): 1000 s
    # after it is made it still holds only 5 tokens, and 3 s later 3 are back.
    bucket = f"{v['bucket_class']}(capacity=5, refill_per_second=1.0)"
    judged(g, "importlib", [
        ("", Call("import_module", [f"{pkg}.limiter"]), SETUP),  # $0
        ("", Call("import_module", ["builtins"]), SETUP),
        ("", Call("import_module", ["functools"]), SETUP),
        ("", Call("import_module", ["operator"]), SETUP),
        ("", Call("$1.list", [[0.0]]), SETUP),  # $4: the time
        ("", Call("$3.getitem", call=False), SETUP),
        ("", Call("$2.partial", [ref(5), ref(4), 0]), SETUP),  # $6: the clock, time[0]
        ("", Call(f"$0.{v['bucket_class']}", [5, 1.0, ref(6)]), SETUP),  # $7: the bucket, made at 0 s
        ("", Call("$4.__setitem__", [0, 1000.0]), SETUP),
        *((f"{bucket} 1000 s later: request {n} allowed", Call("$7.allow"), True) for n in range(1, 6)),
        (f"{bucket} 1000 s later: request 6 denied (the refill stops at the capacity)", Call("$7.allow"), False),
        ("", Call("$4.__setitem__", [0, 1003.0]), SETUP),
        (f"{bucket} 3 s after that: 3 tokens back", Call("$7.allow", [3]), True),
        (f"{bucket} then: no token left", Call("$7.allow"), False),
    ], fresh=True)
else:
    raise RuntimeError(f"no hidden checks for the failing test {name!r}")
g.finish()

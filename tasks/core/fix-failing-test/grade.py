"""The test file is untouched, the code the bug was planted in behaves (called apart, judged here), and the
whole suite (the named test included) passes."""

from gradelib import Call, Grader, make_calls, ref, task_vars

v = task_vars()
pkg = v["pkg"]
g = Grader()
g.unchanged([v["failing_test_file"]])
g.pytest_passes(["tests"], min_passed=v["test_count"], require=[v["failing_test"]])


def judged(module: str, steps: list[tuple[str, Call, object]]) -> None:
    """Make the calls in one process of the model's code and judge each here: (what the check says, the call,
    the value it must return). A step without a description only sets up an object for later steps (`ref`,
    "$N.name"): it must not raise, its value is not judged."""
    if not g.ok:
        print(f"· calls into {module}: skipped (an earlier check failed)", flush=True)
        return
    results = make_calls(module, [call for _, call, _ in steps], fresh=True)
    for (what, call, want), result in zip(steps, results, strict=True):
        if what:
            g.check(what, result.returned(want), result.describe())
        elif not result.ok:
            g.check(f"{call.target} can be called", False, result.describe())


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
    judged(f"{pkg}.usage", [
        *(("", Call("UsageRecord", row), None) for row in rows),
        (f"totals_by_client({rows}) returns {{'eta': 9, 'zeta': 1053}}",
         Call("totals_by_client", [[ref(i) for i in range(len(rows))]]), {"eta": 9, "zeta": 1053}),
        ("totals_by_client of one record returns {'eta': 2}", Call("totals_by_client", [[ref(1)]]), {"eta": 2}),
        ("totals_by_client([]) returns {}", Call("totals_by_client", [[]]), {}),
    ])
elif name == "test_refill_is_capped_at_capacity":
    # A bucket of 5 whose clock jumps 1000 s after it is made: it still holds only 5 tokens.
    clock = [0.0, *[1000.0] * 6, 1003.0, 1003.0]
    bucket = f"{v['bucket_class']}(capacity=5, refill_per_second=1.0)"
    judged("importlib", [
        ("", Call("import_module", [f"{pkg}.limiter"]), None),
        ("", Call("import_module", ["builtins"]), None),
        ("", Call("$1.iter", [clock]), None),
        ("", Call("$2.__next__", call=False), None),  # the clock: the next of those times at each call
        ("", Call(f"$0.{v['bucket_class']}", [5, 1.0, ref(3)]), None),
        *((f"{bucket} 1000 s later: request {n} allowed", Call("$4.allow"), True) for n in range(1, 6)),
        (f"{bucket} 1000 s later: request 6 denied (the refill stops at the capacity)", Call("$4.allow"), False),
        (f"{bucket} 3 s after that: 3 tokens back", Call("$4.allow", [3]), True),
        (f"{bucket} then: no token left", Call("$4.allow"), False),
    ])
else:
    raise RuntimeError(f"no hidden checks for the failing test {name!r}")
g.finish()

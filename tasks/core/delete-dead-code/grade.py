"""The dead module, its tests and its private helper are gone; the live code and its tests remain and pass (the
billing the CLI uses called apart, its answers judged here)."""

from gradelib import Call, Grader, make_calls, task_vars

v = task_vars()
pkg, src, dead = v["pkg"], v["src_dir"], v["dead_module"]
g = Grader()
g.file_absent(f"{src}/{dead}.py")
g.no_match(rf"\b{dead}\b", ["src/**", "tests/**"])
g.lacks_definition(f"{src}/billing.py", v["dead_helper"])
g.defines(f"{src}/billing.py", v["charge_fn"])
g.defines(f"{src}/billing.py", "format_money")
charge = v["charge_fn"]
steps = [
    (f"{pkg}.{dead} cannot be imported", Call("import_module", [f"{pkg}.{dead}"]), "ImportError"),
    ("", Call("import_module", [f"{pkg}.billing"]), None),
    (f"{charge}(4000, 50, 1000) returns 150", Call(f"$1.{charge}", [4000, 50, 1000]), 150),
    (f"{charge}(1020, 25) returns 26", Call(f"$1.{charge}", [1020, 25]), 26),
    ("format_money(123456, 'EUR') returns '1234.56 EUR'", Call("$1.format_money", [123456, "EUR"]), "1234.56 EUR"),
    ("", Call("import_module", [f"{pkg}.report"]), None),
    ("", Call("import_module", [f"{pkg}.cli"]), None),
]
if g.ok:
    for (what, call, want), result in zip(steps, make_calls("importlib", [s[1] for s in steps]), strict=True):
        if not what:
            g.check(f"{call.target}({call.args[0]}) works", result.ok, result.describe())
        elif want == "ImportError":
            g.check(what, result.raised("ImportError"), result.describe())
        else:
            g.check(what, result.returned(want), result.describe())
else:
    print(f"· calls into {pkg}: skipped (an earlier check failed)", flush=True)
# Every test of the live code still runs and passes.
live_tests = v["test_count"] - v[f"test_{dead}_count"]
g.pytest_passes(["tests"], min_passed=live_tests)
g.finish()

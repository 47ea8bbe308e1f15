"""The dead module, its tests and its private helper are gone; the live code and its tests remain and pass (the
billing the CLI uses called apart, its answers judged here)."""

from gradelib import Call, Grader, Raises, Returns, task_vars

v = task_vars()
pkg, src, dead, charge = v["pkg"], v["src_dir"], v["dead_module"], v["charge_fn"]
g = Grader()
g.file_absent(f"{src}/{dead}.py")
g.no_match(rf"\b{dead}\b", ["src/**", "tests/**"])
g.lacks_definition(f"{src}/billing.py", v["dead_helper"])
g.defines(f"{src}/billing.py", charge)
g.defines(f"{src}/billing.py", "format_money")
# Every test of the live code still runs and passes.
live_tests = v["test_count"] - v[f"test_{dead}_count"]
g.pytest_passes(["tests"], min_passed=live_tests, twins_except=[f"tests/test_{dead}.py"])
# On a fresh copy of the tree, after the suite: the dead module is gone, the live billing still works.
g.calls_return("importlib", [
    (Call("import_module", [f"{pkg}.{dead}"]), Raises("ImportError")),
    (Call("import_module", [f"{pkg}.billing"]), Returns()),
    (Call(f"$1.{charge}", [4000, 50, 1000]), 150),
    (Call(f"$1.{charge}", [1020, 25]), 26),
    (Call("$1.format_money", [123456, "EUR"]), "1234.56 EUR"),
    (Call("import_module", [f"{pkg}.report"]), Returns()),
    (Call("import_module", [f"{pkg}.cli"]), Returns()),
], fresh=True)
g.finish()

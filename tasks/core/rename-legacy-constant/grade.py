"""The old name is gone from every file, the new one holds the same value (also as the code sees it, called apart
and judged here), tests pass."""

from gradelib import Call, Grader, Raises, Returns, task_vars

v = task_vars()
pkg, new, value = v["pkg"], v["new_const"], v["legacy_value"]
g = Grader()
g.no_match(v["legacy_const"])
g.assigns(f"{v['src_dir']}/constants.py", new, value)
g.file_contains(f"{v['src_dir']}/limiter.py", new)
g.file_contains(f"{v['src_dir']}/config.py", new)
g.pytest_passes(["tests"], min_passed=v["test_count"])
# What the code sees (on a fresh copy of the tree, after the suite): the constant, no old name left behind as an
# alias, and the bucket's default capacity.
g.calls_return("importlib", [
    (Call("import_module", [f"{pkg}.constants"]), Returns()),
    (Call(f"$0.{new}", call=False), value),
    (Call(f"$0.{v['legacy_const']}", call=False), Raises("AttributeError")),
    (Call("import_module", [f"{pkg}.limiter"]), Returns()),
    (Call(f"$3.{v['bucket_class']}"), Returns()),
    (Call("$4.capacity", call=False), value),
], fresh=True)
g.finish()

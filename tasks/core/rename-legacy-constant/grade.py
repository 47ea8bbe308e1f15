"""The old name is gone from every file, the new one holds the same value (also as the code sees it, called apart
and judged here), tests pass."""

from gradelib import Call, Grader, make_calls, task_vars

v = task_vars()
pkg, new, value = v["pkg"], v["new_const"], v["legacy_value"]
g = Grader()
g.no_match(v["legacy_const"])
g.assigns(f"{v['src_dir']}/constants.py", new, value)
g.file_contains(f"{v['src_dir']}/limiter.py", new)
g.file_contains(f"{v['src_dir']}/config.py", new)
# What the code sees: the constant, the bucket's default capacity, and no old name left behind as an alias.
steps = [
    ("", Call("import_module", [f"{pkg}.constants"]), None),
    (f"constants.{new} is {value}", Call(f"$0.{new}", call=False), value),
    (f"constants.{v['legacy_const']} is gone", Call(f"$0.{v['legacy_const']}", call=False), "AttributeError"),
    ("", Call("import_module", [f"{pkg}.limiter"]), None),
    ("", Call(f"$3.{v['bucket_class']}"), None),
    (f"a {v['bucket_class']} still holds {value} tokens by default", Call("$4.capacity", call=False), value),
]
if g.ok:
    for (what, call, want), result in zip(steps, make_calls("importlib", [s[1] for s in steps]), strict=True):
        if not what:
            if not result.ok:
                g.check(f"{call.target} works", False, result.describe())
        elif want == "AttributeError":
            g.check(what, result.raised("AttributeError"), result.describe())
        else:
            g.check(what, result.returned(want), result.describe())
else:
    print(f"· calls into {pkg}: skipped (an earlier check failed)", flush=True)
g.pytest_passes(["tests"], min_passed=v["test_count"])
g.finish()

"""The module moved, nothing imports the old name, the CLI and all tests work.

The new module and the CLI run apart from the grader; what they return and print is compared here."""

from gradelib import Call, Grader, make_calls, ref, task_vars

v = task_vars()
pkg, src = v["pkg"], v["src_dir"]
g = Grader()
g.file_absent(f"{src}/usage.py")
g.file_exists(f"{src}/{v['new_module']}.py")
# `pkg.usage`, `from .usage import`, `from . import usage`, `import usage` (not the English word).
old_import = rf"\b{pkg}\.usage\b|from\s+\.usage\b|from\s+\.\s+import\s+([\w\s,(]*\b)?usage\b|^\s*import\s+usage\b"
g.no_match(old_import, ["src/**", "tests/**"])
# The parser under its new name, and no module under the old one (no shim, no folder left behind).
steps = [
    ("", Call("import_module", [f"{pkg}.{v['new_module']}"]), None),
    ("", Call("$0.parse_usage", [["# export\n", "t1,northwind,5\n", "t2,contoso,3\n", "t3,northwind,7\n"]]), None),
    (f"{pkg}.{v['new_module']} parses usage and adds it up", Call("$0.totals_by_client", [ref(1)]),
     {"contoso": 3, "northwind": 12}),
    (f"{pkg}.usage cannot be imported", Call("import_module", [f"{pkg}.usage"]), "ImportError"),
]
if g.ok:
    for (what, call, want), result in zip(steps, make_calls("importlib", [s[1] for s in steps]), strict=True):
        if not what:
            if not result.ok:
                g.check(f"{call.target} works", False, result.describe())
        elif want == "ImportError":
            g.check(what, result.raised("ImportError"), result.describe())
        else:
            g.check(what, result.returned(want), result.describe())
else:
    print(f"· calls into {pkg}.{v['new_module']}: skipped (an earlier check failed)", flush=True)
out = g.command_ok(["python3", "-m", pkg, "invoice", v["usage_file"]], pythonpath=["src"])
if out is not None:
    g.check("the CLI still prints the invoice", out == v["invoice_output"], f"printed {out[:300]!r}")
g.pytest_passes(["tests"], min_passed=v["test_count"])
g.finish()

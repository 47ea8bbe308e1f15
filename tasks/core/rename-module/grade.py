"""The module moved, nothing imports the old name, the CLI and all tests work.

The suite, the new module and the CLI run apart from the grader (the calls on a fresh copy of the tree, after the
suite); what they return and print is compared here."""

from gradelib import Call, Grader, Raises, Returns, ref, task_vars

v = task_vars()
pkg, src, new = v["pkg"], v["src_dir"], v["new_module"]
g = Grader()
g.file_absent(f"{src}/usage.py")
g.file_exists(f"{src}/{new}.py")
# `pkg.usage`, `from .usage import`, `from . import usage`, `import usage` (not the English word).
old_import = rf"\b{pkg}\.usage\b|from\s+\.usage\b|from\s+\.\s+import\s+([\w\s,(]*\b)?usage\b|^\s*import\s+usage\b"
g.no_match(old_import, ["src/**", "tests/**"])
g.pytest_passes(["tests"], min_passed=v["test_count"])
# The parser under its new name, and no module under the old one (no shim, no folder left behind).
g.calls_return("importlib", [
    (Call("import_module", [f"{pkg}.{new}"]), Returns()),
    (Call("$0.parse_usage", [["# export\n", "t1,northwind,5\n", "t2,contoso,3\n", "t3,northwind,7\n"]]), Returns()),
    (Call("$0.totals_by_client", [ref(1)]), {"contoso": 3, "northwind": 12}),
    (Call("import_module", [f"{pkg}.usage"]), Raises("ImportError")),
], fresh=True)
out = g.command_ok(["python3", "-m", pkg, "invoice", v["usage_file"]], pythonpath=["src"])
if out is not None:
    g.check("the CLI still prints the invoice", out == v["invoice_output"], f"printed {out[:300]!r}")
g.finish()

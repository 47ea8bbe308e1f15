"""The module moved, nothing imports the old name, the CLI and all tests work.

After the suite, the new module and the CLI's main(argv) run apart from the grader, in one process on a fresh copy
of the tree; what they return and print is compared here."""

from gradelib import Call, Grader, ref, task_vars
from pyservice_checks import in_one_process, judge_runs

v = task_vars()
pkg, src, new = v["pkg"], v["src_dir"], v["new_module"]
g = Grader()
g.file_absent(f"{src}/usage.py")
g.file_exists(f"{src}/{new}.py")
# `pkg.usage`, `from .usage import`, `from . import usage`, `import usage` (not the English word).
old_import = rf"\b{pkg}\.usage\b|from\s+\.usage\b|from\s+\.\s+import\s+([\w\s,(]*\b)?usage\b|^\s*import\s+usage\b"
g.no_match(old_import, ["src/**", "tests/**"])
# The visible tests' twins call the parser under its new name.
g.pytest_passes(["tests"], min_passed=v["test_count"], twin_modules={f"{pkg}.usage": f"{pkg}.{new}"})

# The parser under its new name, no module under the old one (no shim, no folder left behind), and the invoice.
first = [
    Call("import_module", [f"{pkg}.{new}"]),
    Call("$0.parse_usage", [["# export\n", "t1,northwind,5\n", "t2,contoso,3\n", "t3,northwind,7\n"]]),
    Call("$0.totals_by_client", [ref(1)]),
    Call("import_module", [f"{pkg}.usage"]),
]
runs = [("the CLI still prints the invoice", ["--settings", "config/settings.json", "invoice", v["usage_file"]],
         v["invoice_output"])]
if g.ok or g.run_all:  # the verdict is already "fail" otherwise
    results, outcomes = in_one_process(pkg, first, [argv for _, argv, _ in runs], fresh=True)
    totals = {"contoso": 3, "northwind": 12}
    g.check(f"{pkg}.{new} parses usage and adds it up to {totals}", results[2].returned(totals), results[2].describe())
    g.check(f"{pkg}.usage cannot be imported", results[3].raised("ImportError"), results[3].describe())
    judge_runs(g, runs, outcomes)
else:
    print(f"· {pkg}.{new} and the CLI: skipped (an earlier check failed)", flush=True)
g.finish()

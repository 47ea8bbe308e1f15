"""The module moved, nothing imports the old name, the CLI and all tests work.

After the suite, the new module and the CLI's main(argv) run apart from the grader, in one process on a fresh copy
of the tree; what they return and print is compared here."""

from gradelib import Call, CallResult, Grader, make_calls, ref, task_vars

v = task_vars()
pkg, src, new = v["pkg"], v["src_dir"], v["new_module"]
g = Grader()
g.file_absent(f"{src}/usage.py")
g.file_exists(f"{src}/{new}.py")
# `pkg.usage`, `from .usage import`, `from . import usage`, `import usage` (not the English word).
old_import = rf"\b{pkg}\.usage\b|from\s+\.usage\b|from\s+\.\s+import\s+([\w\s,(]*\b)?usage\b|^\s*import\s+usage\b"
g.no_match(old_import, ["src/**", "tests/**"])
g.pytest_passes(["tests"], min_passed=v["test_count"])


def in_one_process(first: list[Call], runs: list[list[str]], *, fresh: bool = False
                   ) -> tuple[list[CallResult], list[tuple[CallResult, CallResult]]]:
    """One process of the model's code, apart from the grader: the calls `first` (targets in importlib:
    "import_module", then "$N.name" on what call N returned), then the CLI's main(argv) for each of `runs`
    with stdout captured. Returns what each of `first` gave, and (what main returned, what it printed) per run."""
    calls = list(first)
    m_io, m_ctx, m_cli = len(calls), len(calls) + 1, len(calls) + 2
    calls += [Call("import_module", [name]) for name in ("io", "contextlib", f"{v['pkg']}.cli")]
    for argv in runs:
        n = len(calls)  # $n: a buffer, $n+1: stdout redirected to it
        calls += [Call(f"${m_io}.StringIO"), Call(f"${m_ctx}.redirect_stdout", [ref(n)]),
                  Call(f"${n + 1}.__enter__"), Call(f"${m_cli}.main", [argv]),
                  Call(f"${n + 1}.__exit__", [None, None, None]), Call(f"${n}.getvalue")]
    results = make_calls("importlib", calls, fresh=fresh)
    start = len(first) + 3
    return results[:len(first)], [(results[start + 6 * i + 3], results[start + 6 * i + 5]) for i in range(len(runs))]


def judge_runs(runs: list[tuple[str, list[str], str]], outcomes: list[tuple[CallResult, CallResult]]) -> None:
    """(what the check says, argv, the exact text main must print) against what came back."""
    for (what, argv, expected), (code, printed) in zip(runs, outcomes, strict=True):
        if not code.returned(0) or not isinstance(printed.value, str):
            g.check(what, False, f"main({argv}) {code.describe()}")
        else:
            g.check(what, printed.value == expected, f"printed {printed.value[:300]!r}")


# The parser under its new name, no module under the old one (no shim, no folder left behind), and the invoice.
first = [
    Call("import_module", [f"{pkg}.{new}"]),
    Call("$0.parse_usage", [["# export\n", "t1,northwind,5\n", "t2,contoso,3\n", "t3,northwind,7\n"]]),
    Call("$0.totals_by_client", [ref(1)]),
    Call("import_module", [f"{pkg}.usage"]),
]
runs = [("the CLI still prints the invoice", ["--settings", "config/settings.json", "invoice", v["usage_file"]],
         v["invoice_output"])]
if g.ok:
    results, outcomes = in_one_process(first, [argv for _, argv, _ in runs], fresh=True)
    totals = {"contoso": 3, "northwind": 12}
    g.check(f"{pkg}.{new} parses usage and adds it up to {totals}", results[2].returned(totals), results[2].describe())
    g.check(f"{pkg}.usage cannot be imported", results[3].raised("ImportError"), results[3].describe())
    judge_runs(runs, outcomes)
else:
    print(f"· {pkg}.{new} and the CLI: skipped (an earlier check failed)", flush=True)
g.finish()

"""money.format_money exists and is used where money was formatted by hand; every command's output and the tests
are unchanged.

format_money and the CLI run apart from the grader, in one process; what they return and print is compared here
with what the service printed before the refactor (computed from the billing rule), also for a usage log the
model never saw. The new test of format_money is judged by mutation testing (graders/mutation.py): the tests run
apart with the grader's money.py in place of the model's, where they must pass, on a rewrite of it, and on broken
copies, each of which they must fail (the count of passing tests is the report's word: evidence only)."""

import random

import mutation
from gradelib import Call, Grader, pytest_runs_ahead, task_vars
from pyservice_checks import in_one_process, invoice_text, judge_runs, money, usage_log

v = task_vars()
src = v["src_dir"]
g = Grader()
pytest_runs_ahead()  # mutation testing's pytest runs: the harness readies them meanwhile
g.defines(f"{src}/money.py", "format_money")
for module in ("report.py", "cli.py"):
    g.file_contains(f"{src}/{module}", "format_money")
# No cents arithmetic left outside money.py (`// 100`, `% 100`, `/ 100`, divmod).
g.no_match(r"(//|%|/)\s*100\b|divmod\(", [f"{src}/**"], exclude=[f"{src}/money.py"])
g.some_match(r"\bformat_money\b", ["tests/**"])
# The repo's tests, and at least one new test of format_money.
g.pytest_passes(["tests"], min_passed=v["test_count"] + 1)

rng = random.Random(f"extract-money-helper {v['seed']}")  # hidden values, the same for a seed
totals = {"northwind": rng.randint(1000, 1400), "contoso": rng.randint(20_000, 90_000), "fabrikam": 0}
usage = f"{g.scratch}/usage-{rng.randrange(1 << 30):x}.csv"
price, currency, free = v["price_per_1k_cents"], v["currency"], v["free_requests"]
show_config = (f"host: {v['host']}\nport: {v['port']}\nrequests_per_minute: {v['rpm']}\nburst: {v['burst']}\n"
               f"price: {money(price, currency)} per 1000 requests (first {free} free per client)\n")
settings = ["--settings", "config/settings.json"]
runs = [
    ("the invoice of the shipped usage log is unchanged", settings + ["invoice", v["usage_file"]], v["invoice_output"]),
    ("show-config's output is unchanged", settings + ["show-config"], show_config),
    ("the invoice of another usage log is unchanged", settings + ["invoice", usage],
     invoice_text(totals, currency, price, free)),
    ("the invoice with overrides is unchanged", settings + ["invoice", usage, "--price-per-1k", "1999",
                                                            "--free-requests", "7", "--currency", "SEK"],
     invoice_text(totals, "SEK", 1999, 7)),
]
amounts = [(0, "EUR"), (5, "USD"), (99, "GBP"), (100, "CHF"), (123456, "EUR"), (1010, "JPY")]
if g.ok or g.run_all:  # the verdict is already "fail" otherwise
    # On a fresh copy of the tree (not the one the suite ran on), with the grader's usage log in the scratch folder.
    first = [Call("import_module", [f"{v['pkg']}.money"]), *(Call("$0.format_money", [c, cur]) for c, cur in amounts)]
    formatted, outcomes = in_one_process(v["pkg"], first, [argv for _, argv, _ in runs],
                                         files={usage: usage_log(list(totals.items()))}, fresh=True)
    for (cents, cur), result in zip(amounts, formatted[1:], strict=True):
        g.check(f"format_money({cents}, {cur!r}) returns {money(cents, cur)!r}", result.returned(money(cents, cur)),
                result.describe())
    judge_runs(g, runs, outcomes)
else:
    print("· format_money and the CLI: skipped (an earlier check failed)", flush=True)
REFERENCE = ('"""Formatting amounts of money."""\n\n\n'
             "def format_money(cents: int, currency: str) -> str:\n"
             '    return f"{cents // 100}.{cents % 100:02d} {currency}"\n')
REWRITE = ("def format_money(cents, currency):\n"
           "    whole, rest = divmod(cents, 100)\n"
           '    return "%d.%02d %s" % (whole, rest, currency)\n')
MUTANTS = {
    "the cents lose their leading zero": ("{cents % 100:02d}", "{cents % 100}"),
    "the currency comes first": ('f"{cents // 100}.{cents % 100:02d} {currency}"',
                                 'f"{currency} {cents // 100}.{cents % 100:02d}"'),
}
written = mutation.written_tests(g, ["tests/**/test_*.py", "tests/**/*_test.py"], what="the tests under tests/")
argv, files, env = mutation.pytest_command(g, written, pythonpath=["src"])
mutation.tests_catch_mutants(g, argv, f"{src}/money.py", REFERENCE, rewrite=REWRITE,
                             mutants={what: mutation.edited(REFERENCE, edit) for what, edit in MUTANTS.items()},
                             files=files, env=env, what="the tests under tests/")
g.finish()

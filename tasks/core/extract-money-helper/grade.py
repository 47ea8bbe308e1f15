"""money.format_money exists and is used where money was formatted by hand; every command's output and the tests
are unchanged.

format_money and the CLI run apart from the grader; what they return and print is compared here with what the
service printed before the refactor (computed from the billing rule), also for a usage log the model never saw."""

import random

from gradelib import Call, CallResult, Grader, make_calls, ref, task_vars

v = task_vars()
src = v["src_dir"]
g = Grader()
g.defines(f"{src}/money.py", "format_money")
for module in ("report.py", "cli.py"):
    g.file_contains(f"{src}/{module}", "format_money")
# No cents arithmetic left outside money.py (`// 100`, `% 100`, `/ 100`, divmod).
g.no_match(r"(//|%|/)\s*100\b|divmod\(", [f"{src}/**"], exclude=[f"{src}/money.py"])
g.some_match(r"\bformat_money\b", ["tests/**"])
# The repo's tests, and at least one new test of format_money.
g.pytest_passes(["tests"], min_passed=v["test_count"] + 1)
g.calls_return(f"{v['pkg']}.money", [
    ("format_money", (0, "EUR"), "0.00 EUR"),
    ("format_money", (5, "USD"), "0.05 USD"),
    ("format_money", (99, "GBP"), "0.99 GBP"),
    ("format_money", (100, "CHF"), "1.00 CHF"),
    ("format_money", (123456, "EUR"), "1234.56 EUR"),
    ("format_money", (1010, "JPY"), "10.10 JPY"),
], fresh=True)  # a fresh copy of the tree, not the suite's

rng = random.Random(f"extract-money-helper {v['seed']}")
totals = {"northwind": rng.randint(1000, 1400), "contoso": rng.randint(20_000, 90_000), "fabrikam": 0}
usage = f"{g.scratch}/usage-{rng.randrange(1 << 30):x}.csv"
lines = "".join(f"2024-05-0{n + 1}T00:00:00Z,{client},{count}\n" for n, (client, count) in enumerate(totals.items()))


def charge(requests: int, price: int, free: int) -> int:
    return (max(0, requests - free) * price + 500) // 1000


def money(cents: int, currency: str) -> str:
    return f"{cents // 100}.{cents % 100:02d} {currency}"


def invoice_text(totals: dict[str, int], currency: str, price: int, free: int) -> str:
    out = [f"Invoice ({currency}, {price} cents per 1000 requests, first {free} free per client)"]
    for client, requests in sorted(totals.items()):
        out.append(f"{client:<12}{requests:>10} requests {money(charge(requests, price, free), currency):>14}")
    cents = sum(charge(n, price, free) for n in totals.values())
    out.append(f"{'TOTAL':<12}{sum(totals.values()):>10} requests {money(cents, currency):>14}")
    return "\n".join(out) + "\n"


def cli_main(runs: list[list[str]]) -> list[tuple[CallResult, CallResult]]:
    """Call the CLI's main(argv) for each argv in one process of the model's code, apart from the grader, with
    stdout captured: (what main returned, what it printed) for each, as data."""
    calls = [Call("import_module", [name]) for name in ("io", "contextlib", f"{v['pkg']}.cli")]
    for argv in runs:
        n = len(calls)  # $n: the buffer, $n+1: stdout redirected to it
        calls += [Call("$0.StringIO"), Call("$1.redirect_stdout", [ref(n)]), Call(f"${n + 1}.__enter__"),
                  Call("$2.main", [argv]), Call(f"${n + 1}.__exit__", [None, None, None]), Call(f"${n}.getvalue")]
    results = make_calls("importlib", calls)
    return [(results[3 + 6 * i + 3], results[3 + 6 * i + 5]) for i in range(len(runs))]


# The command as a user runs it (this also puts the grader's usage log in the scratch folder).
out = g.command_ok(["python3", "-m", v["pkg"], "invoice", v["usage_file"]], pythonpath=["src"], files={usage: lines})
if out is not None:
    g.check("the invoice of the shipped usage log is unchanged", out == v["invoice_output"], f"printed {out[:300]!r}")
price, currency, free = v["price_per_1k_cents"], v["currency"], v["free_requests"]
show_config = (f"host: {v['host']}\nport: {v['port']}\nrequests_per_minute: {v['rpm']}\nburst: {v['burst']}\n"
               f"price: {money(price, currency)} per 1000 requests (first {free} free per client)\n")
settings = ["--settings", "config/settings.json"]
runs = [
    ("show-config's output is unchanged", ["show-config"], show_config),
    ("the invoice of another usage log is unchanged", ["invoice", usage], invoice_text(totals, currency, price, free)),
    ("the invoice with overrides is unchanged", ["invoice", usage, "--price-per-1k", "1999", "--free-requests", "7",
                                                 "--currency", "SEK"], invoice_text(totals, "SEK", 1999, 7)),
]
if g.ok:
    for (what, argv, expected), (code, printed) in zip(runs, cli_main([settings + a for _, a, _ in runs]), strict=True):
        if not code.returned(0) or not isinstance(printed.value, str):
            g.check(what, False, f"main({argv}) {code.describe()}")
        else:
            g.check(what, printed.value == expected, f"printed {printed.value[:300]!r}")
g.finish()

"""The shipped usage export invoices correctly, the usage data is untouched, comments and blank lines anywhere are
skipped, bad counts are still refused, and the tests pass.

The CLI and the parser run apart from the grader; what they print and return is compared here, also for a usage
log with comments and blank lines the model never saw."""

import random

from gradelib import Call, CallResult, Grader, Raises, make_calls, ref, task_vars

v = task_vars()
g = Grader()
g.unchanged([v["usage_file"]])

rng = random.Random(f"fix-traceback {v['seed']}")
rows = [(f"2024-02-0{n % 9 + 1}T0{n % 10}:00:00Z", client, rng.randint(10, 9000))
        for n, client in enumerate(["northwind", "contoso", "northwind", "fabrikam", "contoso"])]
records = [f"{t},{c},{n}\n" for t, c, n in rows]
noisy = ("# gateway export\n\n" + records[0] + "   \n# day 2\n" + "".join(records[1:3]) + "\n\t\n"
         + "".join(records[3:]) + "# end of export\n\n")
name = f"usage-{rng.randrange(1 << 30):x}"
noisy_file, clean_file = f"{g.scratch}/{name}.csv", f"{g.scratch}/{name}-clean.csv"
totals: dict[str, int] = {}
for _, client, count in rows:
    totals[client] = totals.get(client, 0) + count


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


# The crash is in usage parsing, reached through the CLI.
g.pytest_passes(["tests/test_usage.py", "tests/test_cli.py"],
                min_passed=v["test_usage_count"] + v["test_cli_count"])
# The command from the report, as the user ran it, on a fresh copy of the tree (not the suite's); this also puts
# the grader's usage logs in the scratch folder.
out = g.command_ok(["python3", "-m", v["pkg"], "invoice", v["usage_file"]], pythonpath=["src"],
                   files={noisy_file: noisy, clean_file: "".join(records)}, fresh=True)
if out is not None:
    g.check("it prints the invoice of the shipped export", out == v["invoice_output"], f"printed {out[:300]!r}")
settings = ["--settings", "config/settings.json", "invoice"]
expected = invoice_text(totals, v["currency"], v["price_per_1k_cents"], 0)
runs = [
    ("comments and blank lines anywhere are skipped", [noisy_file, "--free-requests", "0"]),
    ("a log without them invoices the same", [clean_file, "--free-requests", "0"]),
]
if g.ok:
    for (what, argv), (code, printed) in zip(runs, cli_main([settings + a for _, a in runs]), strict=True):
        if not code.returned(0) or not isinstance(printed.value, str):
            g.check(what, False, f"main({argv}) {code.describe()}")
        else:
            g.check(what, printed.value == expected, f"printed {printed.value[:300]!r}")
g.calls_return(f"{v['pkg']}.usage", [("parse_usage", (["# export\n", "2024-01-01T00:00:00Z,acme,-4\n"],),
                                      Raises("ValueError"))])
g.finish()

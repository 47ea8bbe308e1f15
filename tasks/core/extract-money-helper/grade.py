"""money.format_money exists and is used where money was formatted by hand; every command's output and the tests
are unchanged.

format_money and the CLI run apart from the grader, in one process; what they return and print is compared here
with what the service printed before the refactor (computed from the billing rule), also for a usage log the
model never saw."""

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

rng = random.Random(f"extract-money-helper {v['seed']}")
totals = {"northwind": rng.randint(1000, 1400), "contoso": rng.randint(20_000, 90_000), "fabrikam": 0}
usage = f"{g.scratch}/usage-{rng.randrange(1 << 30):x}.csv"
lines = "".join(f"2024-05-0{n + 1}T00:00:00Z,{client},{count}\n" for n, (client, count) in enumerate(totals.items()))


def charge(requests: int, price: int, free: int) -> int:
    return (max(0, requests - free) * price + 500) // 1000


def money(cents: int, currency: str) -> str:
    return f"{cents // 100}.{cents % 100:02d} {currency}"


def invoice_text(totals: dict[str, int], currency: str, price: int, free: int) -> str:
    """What the invoice command prints: the service's billing rule, computed here."""
    out = [f"Invoice ({currency}, {price} cents per 1000 requests, first {free} free per client)"]
    for client, requests in sorted(totals.items()):
        out.append(f"{client:<12}{requests:>10} requests {money(charge(requests, price, free), currency):>14}")
    cents = sum(charge(n, price, free) for n in totals.values())
    out.append(f"{'TOTAL':<12}{sum(totals.values()):>10} requests {money(cents, currency):>14}")
    return "\n".join(out) + "\n"


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
if g.ok:
    # A fresh copy of the tree (not the one the suite ran on), with the grader's usage log in the scratch folder.
    g.run(["true"], files={usage: lines}, fresh=True)
    first = [Call("import_module", [f"{v['pkg']}.money"]), *(Call("$0.format_money", [c, cur]) for c, cur in amounts)]
    formatted, outcomes = in_one_process(first, [argv for _, argv, _ in runs])
    for (cents, cur), result in zip(amounts, formatted[1:], strict=True):
        g.check(f"format_money({cents}, {cur!r}) returns {money(cents, cur)!r}", result.returned(money(cents, cur)),
                result.describe())
    judge_runs(runs, outcomes)
else:
    print("· format_money and the CLI: skipped (an earlier check failed)", flush=True)
g.finish()

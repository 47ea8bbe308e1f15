"""`invoice --json` prints the specified object, the text output is unchanged, the flag is documented.

The CLI's main(argv) runs apart from the grader, in one process, on the shipped usage log and on one the grader
writes (clients and counts the model never saw); what it prints is parsed and compared here with what the billing
rule gives."""

import json
import random

from gradelib import Call, CallResult, Grader, make_calls, ref, task_vars

v = task_vars()
g = Grader()
g.file_contains("docs/cli.md", "--json")

rng = random.Random(f"add-cli-flag {v['seed']}")
fixture = {"northwind": rng.randint(100, 900), "contoso": rng.randint(1000, 9000), "fabrikam": rng.randint(10, 5000)}
usage = f"{g.scratch}/usage-{rng.randrange(1 << 30):x}.csv"
lines = [f"2024-0{n % 9 + 1}-0{n % 7 + 1}T00:00:00Z,{client},{count}\n"
         for n, (client, count) in enumerate(sorted(fixture.items()) * 2)]  # every client twice
totals = {client: 2 * count for client, count in fixture.items()}


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


def invoice_json(totals: dict[str, int], currency: str, price: int, free: int) -> dict[str, object]:
    clients = {c: {"requests": n, "charge_cents": charge(n, price, free)} for c, n in totals.items()}
    return {"currency": currency, "clients": clients,
            "total_cents": sum(entry["charge_cents"] for entry in clients.values())}


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


def same_json(what: str, output: str | None, expected: dict[str, object]) -> None:
    if output is None:
        return
    try:
        found = json.loads(output)
    except (ValueError, RecursionError) as exc:
        g.check(what, False, f"not one JSON object ({exc}): {output[:200]!r}")
        return
    # Compared as canonical JSON: 31.0 is not 31, "31" is not 31, true is not 1.
    same = json.dumps(found, sort_keys=True) == json.dumps(expected, sort_keys=True)
    g.check(what, same, f"printed {output[:300]!r}")


g.pytest_passes(["tests/test_cli.py"], min_passed=v["test_cli_count"])
shipped = (v["currency"], v["price_per_1k_cents"], v["free_requests"])
settings = ["--settings", "config/settings.json", "invoice"]
runs = [
    ("without --json the output is unchanged", [v["usage_file"]], v["invoice_output"]),
    ("--json: the object for the shipped usage log", [v["usage_file"], "--json"],
     invoice_json(v["usage_totals"], *shipped)),
    ("--json: the object for another usage log", [usage, "--json"], invoice_json(totals, *shipped)),
    ("--json honours --currency, --free-requests and --price-per-1k",
     [usage, "--json", "--currency", "JPY", "--free-requests", "150", "--price-per-1k", "1234"],
     invoice_json(totals, "JPY", 1234, 150)),
    ("without --json the text for another usage log is unchanged", [usage], invoice_text(totals, *shipped)),
]
if g.ok:
    # A fresh copy of the tree (not the one the suite ran on), with the grader's usage log in the scratch folder.
    g.run(["true"], files={usage: "".join(lines)}, fresh=True)
    for (what, argv, expected), (code, printed) in zip(runs, cli_main([settings + a for _, a, _ in runs]), strict=True):
        if not (code.returned(0) or code.returned(None)) or not isinstance(printed.value, str):
            g.check(what, False, f"main({argv}) {code.describe()}")
        elif isinstance(expected, str):
            g.check(what, printed.value == expected, f"printed {printed.value[:300]!r}")
        else:
            same_json(what, printed.value, expected)
else:
    print("· the invoice command: skipped (an earlier check failed)", flush=True)
g.finish()

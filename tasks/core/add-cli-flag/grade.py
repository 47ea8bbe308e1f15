"""`invoice --json` prints the specified object, the text output is unchanged, the flag is documented.

The CLI's main(argv) runs apart from the grader, in one process, on the shipped usage log and on one the grader
writes (clients and counts the model never saw); what it prints is parsed and compared here with what the billing
rule gives."""

import json
import random

from gradelib import Grader, task_vars
from pyservice_checks import charge, in_one_process, invoice_text, usage_log

v = task_vars()
g = Grader()
g.file_contains("docs/cli.md", "--json")
g.pytest_passes(["tests/test_cli.py"], min_passed=v["test_cli_count"])

rng = random.Random(f"add-cli-flag {v['seed']}")  # hidden values, the same for a seed
fixture = {"northwind": rng.randint(100, 900), "contoso": rng.randint(1000, 9000), "fabrikam": rng.randint(10, 5000)}
usage = f"{g.scratch}/usage-{rng.randrange(1 << 30):x}.csv"
totals = {client: 2 * count for client, count in fixture.items()}  # every client twice in the log


def invoice_json(totals: dict[str, int], currency: str, price: int, free: int) -> dict[str, object]:
    clients = {c: {"requests": n, "charge_cents": charge(n, price, free)} for c, n in totals.items()}
    return {"currency": currency, "clients": clients,
            "total_cents": sum(entry["charge_cents"] for entry in clients.values())}


def same_json(what: str, output: str, expected: dict[str, object]) -> None:
    try:
        found = json.loads(output)
        # Compared as canonical JSON: 31.0 is not 31, "31" is not 31, true is not 1.
        same = json.dumps(found, sort_keys=True) == json.dumps(expected, sort_keys=True)
    except (ValueError, RecursionError) as exc:
        g.check(what, False, f"not one JSON object ({exc}): {output[:200]!r}")
        return
    g.check(what, same, f"printed {output[:300]!r}")


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
if g.ok or g.run_all:  # the verdict is already "fail" otherwise
    # On a fresh copy of the tree (not the one the suite ran on), with the grader's usage log in the scratch folder.
    _, outcomes = in_one_process(v["pkg"], [], [settings + argv for _, argv, _ in runs],
                                 files={usage: usage_log(sorted(fixture.items()) * 2)}, fresh=True)
    for (what, argv, expected), (code, printed) in zip(runs, outcomes, strict=True):
        if not (code.returned(0) or code.returned(None)) or not isinstance(printed.value, str):
            g.check(what, False, f"main({argv}) {code.describe()}")
        elif isinstance(expected, str):
            g.check(what, printed.value == expected, f"printed {printed.value[:300]!r}")
        else:
            same_json(what, printed.value, expected)
else:
    print("· the invoice command: skipped (an earlier check failed)", flush=True)
g.finish()

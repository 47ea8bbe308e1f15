"""The shipped usage export invoices correctly, the usage data is untouched, comments and blank lines anywhere are
skipped, bad counts are still refused, and the tests pass.

The CLI and the parser run apart from the grader; what they print and return is compared here, also for a usage
log with comments and blank lines the model never saw."""

import random

from gradelib import Call, Grader, task_vars
from pyservice_checks import in_one_process, invoice_text, judge_runs, usage_log

v = task_vars()
g = Grader()
g.unchanged([v["usage_file"]])
# The crash is in usage parsing, reached through the CLI.
g.pytest_passes(["tests/test_usage.py", "tests/test_cli.py"],
                min_passed=v["test_usage_count"] + v["test_cli_count"])

rng = random.Random(f"fix-traceback {v['seed']}")  # hidden values, the same for a seed
rows = [(client, rng.randint(10, 9000)) for client in ("northwind", "contoso", "northwind", "fabrikam", "contoso")]
records = usage_log(rows).splitlines(keepends=True)
noisy = ("# gateway export\n\n" + records[0] + "   \n# day 2\n" + "".join(records[1:3]) + "\n\t\n"
         + "".join(records[3:]) + "# end of export\n\n")
name = f"usage-{rng.randrange(1 << 30):x}"
noisy_file, clean_file = f"{g.scratch}/{name}.csv", f"{g.scratch}/{name}-clean.csv"
totals: dict[str, int] = {}
for client, count in rows:
    totals[client] = totals.get(client, 0) + count

# The command from the report, as the user ran it, on a fresh copy of the tree (not the suite's); this also puts
# the grader's usage logs in the scratch folder.
out = g.command_ok(["python3", "-m", v["pkg"], "invoice", v["usage_file"]], pythonpath=["src"],
                   files={noisy_file: noisy, clean_file: "".join(records)}, fresh=True)
if out is not None:
    g.check("it prints the invoice of the shipped export", out == v["invoice_output"], f"printed {out[:300]!r}")
settings = ["--settings", "config/settings.json", "invoice"]
expected = invoice_text(totals, v["currency"], v["price_per_1k_cents"], 0)
runs = [
    ("comments and blank lines anywhere are skipped", settings + [noisy_file, "--free-requests", "0"], expected),
    ("a log without them invoices the same", settings + [clean_file, "--free-requests", "0"], expected),
]
if g.ok or g.run_all:  # the verdict is already "fail" otherwise
    negative = ["# export\n", "2024-01-01T00:00:00Z,acme,-4\n"]
    first = [Call("import_module", [f"{v['pkg']}.usage"]), Call("$0.parse_usage", [negative])]
    parsed, outcomes = in_one_process(v["pkg"], first, [argv for _, argv, _ in runs])
    judge_runs(g, runs, outcomes)
    g.check("a negative count is still refused (parse_usage raises ValueError)", parsed[1].raised("ValueError"),
            parsed[1].describe())
else:
    print("· the invoice of logs with comments: skipped (an earlier check failed)", flush=True)
g.finish()

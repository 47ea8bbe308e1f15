"""Reference fix: a --json flag in the parser and a JSON branch in cmd_invoice; one line of docs."""

from pathlib import Path

from gradelib import task_vars

v = task_vars()
cli = Path(v["src_dir"]) / "cli.py"
text = cli.read_text(encoding="utf-8")
edits = [
    ("import argparse\n", "import argparse\nimport json\n"),
    (
        "from .usage import parse_usage, totals_by_client\n",
        "from .usage import parse_usage, totals_by_client\n" f"from .billing import {v['charge_fn']}\n",
    ),
    (
        "    sys.stdout.write(render_invoice(totals_by_client(records), settings))\n",
        "    totals = totals_by_client(records)\n"
        "    if args.json:\n"
        "        clients = {\n"
        "            client: {\n"
        '                "requests": requests,\n'
        f'                "charge_cents": {v["charge_fn"]}(requests, settings.price_per_1k_cents, settings.free_requests),\n'
        "            }\n"
        "            for client, requests in totals.items()\n"
        "        }\n"
        "        total = sum(entry['charge_cents'] for entry in clients.values())\n"
        '        print(json.dumps({"currency": settings.currency, "clients": clients, "total_cents": total}))\n'
        "        return 0\n"
        "    sys.stdout.write(render_invoice(totals, settings))\n",
    ),
    (
        "    invoice.set_defaults(handler=cmd_invoice)\n",
        '    invoice.add_argument("--json", action="store_true", help="print the invoice as one JSON object")\n'
        "    invoice.set_defaults(handler=cmd_invoice)\n",
    ),
]
for old, new in edits:
    assert old in text, old
    text = text.replace(old, new, 1)
cli.write_text(text, encoding="utf-8")

docs = Path("docs/cli.md")
docs.write_text(
    docs.read_text(encoding="utf-8").replace(
        "| `--currency CODE` |",
        "| `--json` | print one JSON object (currency, clients with requests and charge_cents, total_cents) |\n"
        "| `--currency CODE` |",
        1,
    ),
    encoding="utf-8",
)

"""Reference fix: a --json flag in the parser and a JSON branch in cmd_invoice; one line of docs."""

from pathlib import Path

from gradelib import task_vars

v = task_vars()
charge = v["charge_fn"]
json_branch = f'''    totals = totals_by_client(records)
    if args.json:
        clients = {{
            client: {{
                "requests": requests,
                "charge_cents": {charge}(requests, settings.price_per_1k_cents, settings.free_requests),
            }}
            for client, requests in totals.items()
        }}
        total = sum(entry["charge_cents"] for entry in clients.values())
        print(json.dumps({{"currency": settings.currency, "clients": clients, "total_cents": total}}))
        return 0
    sys.stdout.write(render_invoice(totals, settings))
'''
flag = '    invoice.add_argument("--json", action="store_true", help="print the invoice as one JSON object")\n'
edits = [
    ("import argparse\n", "import argparse\nimport json\n"),
    ("from .config import", f"from .billing import {charge}\nfrom .config import"),
    ("    sys.stdout.write(render_invoice(totals_by_client(records), settings))\n", json_branch),
    ("    invoice.set_defaults(handler=cmd_invoice)\n", flag + "    invoice.set_defaults(handler=cmd_invoice)\n"),
]
cli = Path(v["src_dir"]) / "cli.py"
text = cli.read_text(encoding="utf-8")
for old, new in edits:
    assert old in text, old
    text = text.replace(old, new, 1)
cli.write_text(text, encoding="utf-8")

docs = Path("docs/cli.md")
row = "| `--json` | print one JSON object (currency, clients with requests and charge_cents, total_cents) |\n"
text = docs.read_text(encoding="utf-8")
docs.write_text(text.replace("| `--currency CODE` |", row + "| `--currency CODE` |", 1), encoding="utf-8")

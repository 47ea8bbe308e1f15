#!/usr/bin/env bash
# Reference fix: run the command, redirect its output.
set -euo pipefail
read -r pkg month < <(python3 -c 'import json, os; v = json.load(open(os.environ["AGENTIC_EVAL_VARS"])); print(v["pkg"], v["usage_month"])')
mkdir -p reports
PYTHONPATH=src python3 -m "$pkg" invoice data/usage.csv > "reports/invoice-$month.txt"

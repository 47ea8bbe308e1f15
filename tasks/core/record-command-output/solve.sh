#!/usr/bin/env bash
# Reference fix: run the command, redirect its output.
set -euo pipefail
month=$(python3 -c 'import json, os; print(json.load(open(os.environ["AGENTIC_EVAL_VARS"]))["usage_month"])')
pkg=$(python3 -c 'import json, os; print(json.load(open(os.environ["AGENTIC_EVAL_VARS"]))["pkg"])')
mkdir -p reports
PYTHONPATH=src python3 -m "$pkg" invoice data/usage.csv > "reports/invoice-$month.txt"

#!/usr/bin/env bash
# Reference fix: git mv the module, then rewrite its imports in the package and tests.
set -euo pipefail
read -r pkg new < <(python3 -c 'import json, os; v = json.load(open(os.environ["AGENTIC_EVAL_VARS"])); print(v["pkg"], v["new_module"])')
git mv "src/$pkg/usage.py" "src/$pkg/$new.py"
grep -rlE "(\.usage import|$pkg\.usage)" src tests | xargs sed -i -E "s/from \.usage import/from .$new import/; s/$pkg\.usage\b/$pkg.$new/"

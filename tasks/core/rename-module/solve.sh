#!/usr/bin/env bash
# Reference fix: git mv the module, then rewrite its imports in the package and tests.
set -euo pipefail
pkg=$(python3 -c 'import json, os; print(json.load(open(os.environ["AGENTIC_EVAL_VARS"]))["pkg"])')
new=$(python3 -c 'import json, os; print(json.load(open(os.environ["AGENTIC_EVAL_VARS"]))["new_module"])')
git mv "src/$pkg/usage.py" "src/$pkg/$new.py"
grep -rlE "(\.usage import|$pkg\.usage)" src tests | xargs sed -i -E "s/from \.usage import/from .$new import/; s/$pkg\.usage\b/$pkg.$new/"

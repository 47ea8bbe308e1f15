#!/usr/bin/env bash
# Reference fix: bump both version strings and commit them.
set -euo pipefail
read -r pkg old new < <(python3 -c '
import json, os
v = json.load(open(os.environ["AGENTIC_EVAL_VARS"]))
print(v["pkg"], v["version"], v["new_version"])')
sed -i "s/^version = \"$old\"/version = \"$new\"/" pyproject.toml
sed -i "s/^__version__ = \"$old\"/__version__ = \"$new\"/" "src/$pkg/__init__.py"
git add pyproject.toml "src/$pkg/__init__.py"
git commit -q -m "Release $new"

#!/usr/bin/env bash
# Installs what agentic-eval's tests need on a fresh machine: the package in
# editable mode with its test extras. (Programs from the package registries
# that later features need are installed here too, so README and CI agree.)
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install --quiet --disable-pip-version-check -e '.[test]'
# The agent CLIs the tests drive, pinned, into the project's tools folder
# (~/.cache/agentic-eval/tools, or $AGENTIC_EVAL_TOOLS): never the global environment.
agentic-eval agents install opencode codex qwen-code

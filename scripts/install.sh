#!/usr/bin/env bash
# Installs what agentic-eval's tests need on a fresh machine: the package in
# editable mode with its test extras. (Programs from the package registries
# that later features need are installed here too, so README and CI agree.)
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install --quiet --disable-pip-version-check -e '.[test]'

#!/bin/bash
# As Terminal-Bench 2's test.sh files do: install the test runner from the internet, then run the tests with it.
# (example.invalid never resolves: on an engine with no network nothing leaves the machine either way.)
curl -LsSf https://downloads.example.invalid/runner/0.9.5/install.sh | sh
source $HOME/.local/bin/env
uvx -p 3.13 -w pytest==8.4.1 pytest /tests/test_outputs.py -rA
if [ $? -eq 0 ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi

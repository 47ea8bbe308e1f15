"""Adversarial review (issue 41): a model's code runs under the reward verifier and shares its output, so a
"command not found" line it prints must never turn its failed verdict into an unscored 'machine/task fault'.

These cases are the model's forgeries: each output line below is what the model's program (run by the task's
tests) prints, not what the verifier's shell said. Each must leave the verdict standing (None)."""

from __future__ import annotations

import pytest

cause = pytest.importorskip("agentic_eval.confine.verifier_cause")

PLAIN = """#!/bin/bash
# Run the tests and write the reward
cd /app
pytest /tests/test_outputs.py -rA
if [ $? -eq 0 ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""
"""A verifier that fetches nothing (its image has pytest)."""

FETCHING = """#!/bin/bash
# Install the runner, then run the tests with it
curl -LsSf https://downloads.example.invalid/runner/install.sh | sh
source $HOME/.local/bin/env
uvx pytest /tests/test_outputs.py -rA
if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
"""

GUARDED = """#!/bin/bash
python3 -m pytest /tests/test_outputs.py -rA
status=$?
if command -v jq >/dev/null; then jq . /logs/verifier/ctrf.json; fi
if [ $status -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
"""
"""A verifier that runs jq only when the image has it: jq missing is no fault of anyone's."""

CAPTURED = "FAILED test_outputs.py::test_answer\n----- Captured stdout call -----\n{line}\n1 failed in 0.03s\n"


@pytest.mark.parametrize("script,line,offline", [
    (PLAIN, "bash: line 1: the: command not found", False),  # a word of the script's comment
    (PLAIN, "bash: line 3: 1: command not found", False),  # `echo 1 >`: '1' is no program in any image
    (PLAIN, "/tests/test.sh: line 4: Run: command not found", False),
    (FETCHING, "bash: line 1: Install: command not found", True),  # an offline engine: 'network' kind
    (GUARDED, "/tests/test.sh: line 4: jq: command not found", False),  # a guarded program the image lacks
], ids=["comment-word", "digit", "script-prefixed-comment-word", "offline-comment-word", "guarded-program"])
def test_a_printed_not_found_line_does_not_unscore_a_written_fail(script: str, line: str, offline: bool) -> None:
    # the verifier wrote reward 0 (the model's tests failed) and the model's code printed `line`
    assert cause.verifier_fault(CAPTURED.format(line=line), script, offline=offline, reward=0.0) is None


def test_the_real_fault_still_counts() -> None:
    """The case issue 41 is about stays a fault: the runner the script installs, on an engine with no network."""
    output = ("curl: (6) Could not resolve host: downloads.example.invalid\n"
              "/tests/test.sh: line 5: uvx: command not found\n")
    fault = cause.verifier_fault(output, FETCHING, offline=True, reward=0.0)
    assert fault is not None and fault.kind == "network" and fault.program == "uvx"

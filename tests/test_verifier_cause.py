"""A reward verifier's failure named as the machine's or the task's, not the model's (confine/verifier_cause.py), table
by table; the internet a task asks for and the engine lacks, and the stand-in base image's gaps, worded."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentic_eval.confine.verifier_cause import verifier_fault

TB2_SCRIPT = """#!/bin/bash
apt-get update
apt-get install -y curl
curl -LsSf https://downloads.example.invalid/runner/install.sh | sh
source $HOME/.local/bin/env
uvx -p 3.13 -w pytest==8.4.1 pytest /tests/test_outputs.py -rA
if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
"""
LOCAL_SCRIPT = """#!/bin/bash
cd /app && node check.js && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt
"""
OFFLINE_OUTPUT = """Err:1 http://deb.example.invalid/debian bookworm InRelease
  Temporary failure resolving 'deb.example.invalid'
E: Unable to locate package curl
/tests/test.sh: line 4: curl: command not found
/tests/test.sh: line 5: /root/.local/bin/env: No such file or directory
/tests/test.sh: line 6: uvx: command not found
"""


@pytest.mark.parametrize(("output", "script", "offline", "reward", "kind", "words"), [
    # TB2 offline: the runner its script installs could not be had: the network's fault, naming both programs
    (OFFLINE_OUTPUT, TB2_SCRIPT, True, 0.0, "network",
     ["needs `curl` and `uvx`", "installs from the network", "Temporary failure resolving", "curl: command not found"]),
    # the same without the apt lines (no network line in the output): still the network's, from the facts
    ("/tests/test.sh: line 6: uvx: command not found\n", TB2_SCRIPT, True, 0.0, "network", ["needs `uvx`"]),
    # dash's wording
    ("sh: 1: uvx: not found\n", TB2_SCRIPT, True, None, "network", ["needs `uvx`"]),
    # the container had the network: the script could have installed it; nothing shown to be the machine's
    (OFFLINE_OUTPUT, TB2_SCRIPT, False, 0.0, None, []),
    # a script that installs nothing runs a program the image lacks: the task's
    ("/tests/test.sh: line 2: node: command not found\n", LOCAL_SCRIPT, False, 0.0, "program",
     ["needs `node`", "the task's image lacks"]),
    # a program the script never names (the model's code printed it): no fault
    ("bash: frobnicate: command not found\n", LOCAL_SCRIPT, True, 0.0, None, []),
    # a failed fetch and no reward written: the reason names the network
    ("pip install failed: Could not fetch URL https://x.example.invalid/simple/: connection error\n",
     "pip install -q requests\npython3 /tests/t.py\n", True, None, "network",
     ["could not reach", "Could not fetch URL"]),
    # a failed fetch but the script went on and wrote its reward: the verdict stands (the fetch may not matter)
    ("curl: (6) Could not resolve host: x.example.invalid\n1 failed\n", "curl -fsS https://x.example.invalid || true\n"
     "pytest /tests\n", True, 0.0, None, []),
    # a pass is a pass
    (OFFLINE_OUTPUT, TB2_SCRIPT, True, 1.0, None, []),
    # nothing at all
    ("FAILED test_outputs.py::test_status\n", TB2_SCRIPT, True, 0.0, None, []),
])
def test_verifier_fault(output: str, script: str, offline: bool, reward: float | None, kind: str | None,
                        words: list[str]) -> None:
    fault = verifier_fault(output, script, offline=offline, reward=reward)
    if kind is None:
        assert fault is None
        return
    assert fault is not None and fault.kind == kind
    for word in words:
        assert word in fault.cause
    assert "\n" not in fault.cause


@pytest.mark.parametrize(("text", "package"), [
    ("/bin/sh: 1: pip: not found", "python3-pip"),
    ("bash: line 3: gcc: command not found", "gcc"),
    ("/usr/bin/python3: No module named pip", "python3-pip"),
    ("curl: not found", "curl"),
    ("make: *** [all] Error 2", ""),
])
def test_the_stand_in_says_what_it_lacks(text: str, package: str) -> None:
    from agentic_eval.confine.verifier_check import stand_in_hint

    hint = stand_in_hint(text)
    assert (f"--base-image-packages {package}" in hint) if package else hint == ""


def test_the_hosts_a_task_fetches_from(tmp_path: Path) -> None:
    from agentic_eval.confine.verifier_check import fetched_hosts

    (tmp_path / "test.sh").write_text("curl -LsSf https://Get.Example.invalid/x/install.sh | sh\n"
                                      "wget http://127.0.0.1:8000/a http://mirror.example.invalid\n"
                                      "curl https://get.example.invalid/again\n")
    assert fetched_hosts([tmp_path / "test.sh", tmp_path / "missing"]) == ["get.example.invalid",
                                                                           "mirror.example.invalid"]


@pytest.mark.parametrize(("packages", "base", "error"), [
    (("python3-pip", "gcc", "g++"), "suite", ""),
    (("python3-pip",), None, "pass --base-image suite"),
    (("Bad Name",), "suite", "not a Debian package name"),
])
def test_base_image_packages_are_checked(packages: tuple[str, ...], base: str | None, error: str) -> None:
    from agentic_eval.confine.docker_image import check_packages
    from agentic_eval.errors import AgenticEvalError

    if not error:
        check_packages(packages, base)
        return
    with pytest.raises(AgenticEvalError, match=error):
        check_packages(packages, base)

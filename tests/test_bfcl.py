"""BFCL through the wire (issue 21): the converted schemas and answers, the per-category report against
the scripted fake endpoint, and a cross-check of toolcheck against BFCL's own checker on BFCL's data.

The tests that need BFCL's data skip when `bfcl-eval` is not installed (`pip install --no-deps bfcl-eval`),
and fail under CI=true, where scripts/install.sh installs it.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fake_endpoint import FakeEndpoint, ScriptedReply, chat_body, tool_call

from agentic_eval import bfcl
from agentic_eval.cli import main
from agentic_eval.toolcheck import check_calls

HAVE_BFCL = importlib.util.find_spec("bfcl_eval") is not None
needs_bfcl = pytest.mark.skipif(not HAVE_BFCL and os.environ.get("CI") != "true",
                                reason=f"bfcl-eval is not installed: {bfcl.INSTALL}")


def test_bfcl_eval_is_installed_under_ci() -> None:
    if os.environ.get("CI") == "true":
        assert HAVE_BFCL, f"CI must install BFCL's package (scripts/install.sh): {bfcl.INSTALL}"


# ---------------------------------------------------------------- conversion (pure, no package needed)

HYPOT = {"name": "math.hypot", "description": "Euclidean norm.", "parameters": {"type": "dict", "properties": {
    "x": {"type": "integer", "description": "x"}, "y": {"type": "float", "description": "y"},
    "point": {"type": "tuple", "items": {"type": "float"}, "description": "p"},
    "opts": {"type": "dict", "properties": {"mode": {"type": "string", "enum": ["a", "b"]},
                                            "tags": {"type": "array", "items": {"type": "dict", "properties": {
                                                "k": {"type": "any"}}}}}, "description": "o"},
    "flag": {"type": "boolean", "description": "f", "required": True}, "raw": {"description": "no type"}},
    "required": ["x", "y"]}}


def test_function_docs_become_openai_tools() -> None:
    (tool,) = bfcl.to_tools([HYPOT])
    assert tool["type"] == "function"
    fn = tool["function"]
    assert fn["name"] == "math_hypot" and fn["description"] == "Euclidean norm." + bfcl.PYTHON_HINT
    props = fn["parameters"]["properties"]
    assert fn["parameters"]["type"] == "object" and fn["parameters"]["required"] == ["x", "y"]
    assert props["x"] == {"type": "integer", "description": "x"}
    assert props["y"] == {"type": "number", "format": "float", "description": "y This is a float type value."}
    assert props["point"]["type"] == "array" and props["point"]["items"]["type"] == "number"
    nested = props["opts"]["properties"]
    assert props["opts"]["type"] == "object" and nested["mode"] == {"type": "string", "enum": ["a", "b"]}
    assert nested["tags"]["items"]["properties"]["k"]["type"] == "string"  # mapped at every depth
    assert props["flag"] == {"type": "boolean", "description": "f"}  # `"required": true` dropped: not JSON Schema
    assert props["raw"]["type"] == "string"
    assert HYPOT["name"] == "math.hypot" and HYPOT["parameters"]["type"] == "dict"  # the input is left alone


GROUND_TRUTH = [{"math.hypot": {"x": [4], "y": [5.0, 5.5], "point": [[1.0, 2.0], ""], "flag": ["", True],
                                "opts": [{"mode": ["a", ""], "tags": [[{"k": "v"}]]}, {"mode": ["b"]}, ""]}}]


@pytest.mark.parametrize("args, reason", [
    ({"x": 4, "y": 5.0}, "ok"),
    ({"x": 4, "y": 5.5, "point": [1, 2], "flag": True}, "ok"),
    ({"x": 4, "y": 5.0, "opts": {"mode": "B"}}, "schema_violation path=opts.mode"),  # enum exact (a departure)
    ({"x": 4, "y": 5.0, "opts": {"mode": "b"}}, "ok"),
    ({"x": 4, "y": 5.0, "opts": {"tags": [{"k": "V"}]}}, "ok"),
    ({"x": 4, "y": 5.0, "opts": {"mode": "a", "tags": [{"k": "w"}]}}, "wrong_value path=opts.tags"),
    ({"x": 4, "y": 5.0, "opts": {"mode": "b", "tags": [{"k": "w"}]}}, "ok"),  # unlisted optional key: a departure
    ({"x": 4, "y": 6.0}, "wrong_value path=y"),
    ({"x": 4, "y": 5.0, "point": [2, 1]}, "wrong_value path=point"),
    ({"x": 4, "y": 5.0, "flag": False}, "wrong_value path=flag"),
    ({"x": 4}, "missing_param path=y"),
    ({"x": "4", "y": 5.0}, "wrong_type path=x"),
])
def test_possible_answers_become_expectations(args: dict[str, Any], reason: str) -> None:
    (tool,) = bfcl.to_tools([HYPOT])
    expected = bfcl.expected_calls(GROUND_TRUTH)
    assert expected[0]["witness"] == {"x": 4, "y": 5.0, "point": [1.0, 2.0], "flag": True, "opts": {"mode": "a", "tags": [{"k": "v"}]}}
    verdict = check_calls([("math_hypot", args)], expected, {"math_hypot": tool["function"]["parameters"]})
    assert verdict.reason == reason, verdict.detail


@pytest.mark.parametrize("text, categories", [
    ("simple_python", ["simple_python"]),
    ("live_*", ["live_simple", "live_multiple", "live_parallel", "live_parallel_multiple", "live_irrelevance",
                "live_relevance"]),
    ("parallel,simple_python,parallel", ["simple_python", "parallel"]),
    ("all", list(bfcl.CATEGORIES)),
])
def test_parse_categories(text: str, categories: list[str]) -> None:
    assert bfcl.parse_categories(text) == categories


@pytest.mark.parametrize("text, words", [("multi_turn_base", "not played yet"), ("simple_rust", "not a BFCL category")])
def test_unknown_or_later_categories_say_so(text: str, words: str) -> None:
    with pytest.raises(bfcl.AgenticEvalError, match=words):
        bfcl.parse_categories(text)


def test_missing_package_is_one_line_with_the_pip_command() -> None:
    code = ("import sys; sys.modules['bfcl_eval'] = None; from agentic_eval.cli import main; "
            "sys.exit(main(['tooling', '--suite', 'bfcl', '--model', 'm', '--base-url', 'http://127.0.0.1:9/v1']))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install --no-deps bfcl-eval" in lines[0], proc.stderr

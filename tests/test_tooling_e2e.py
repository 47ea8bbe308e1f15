"""The battery and the form matrix end to end, against scripted endpoints on 127.0.0.1.

The scripted models (tests/helpers.py) compute each reply from the request (a *responder*), which
the queue-replaying fake in agentic_eval.testing cannot do: the battery runs cases in parallel, so
replies cannot be queued in order. The server is the same standard-library approach, and the
replies are built with agentic_eval.testing's own builders.
"""

from __future__ import annotations

import contextlib
import io
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.cli import main
from agentic_eval.instruments.battery import Case, case_key, generate_cases
from agentic_eval.testing import (
    ScriptedReply,
    chat_body,
    chat_stream,
    responses_body,
    tool_call,
)
from tests.helpers import WITNESS, ResponderEndpoint, battery_model, forms_model


def run_cli(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(args))
    return code, out.getvalue()


@pytest.fixture(scope="module")
def campaign_cases() -> list[Case]:
    return generate_cases(45739)


@pytest.mark.parametrize("style, cases, expect_passed", [("oracle", 370, 370), ("never", 185, 20), ("text", 185, 20)])
def test_battery_scores(style: str, cases: int, expect_passed: int, campaign_cases: list[Case], tmp_path: Path) -> None:
    """The right answers score everything; never calling scores exactly the negative phase; calls
    written as text score nothing else and are reported as text calls (half the battery for speed)."""
    script = campaign_cases if cases == 370 else generate_cases(45739, cases)
    with ResponderEndpoint(battery_model(script, style)) as fake:
        code, out = run_cli("tooling", "--model", "fake-model", "--base-url", fake.base_url, "-j", "4",
                            "--cases", str(cases), "--run-dir", str(tmp_path), "--json")
    assert code == 0
    result = json.loads(out)
    assert set(result) == {"seed", "total", "phases", "cases"} and result["seed"] == 45739
    assert result["total"] == {"passed": expect_passed, "cases": cases, "unscored": 0}, [
        (c.get("id"), c.get("reason")) for c in result["cases"] if not c["passed"]][:8]
    assert list(result["phases"]) == ["decisions", "functional", "structured", "freeform", "chains", "negative"]
    assert result["phases"]["negative"] == {"passed": expect_passed if style != "oracle" else 40,
                                            "cases": 40 if cases == 370 else 20, "unscored": 0}
    failed = [c for c in result["cases"] if not c["passed"]]
    if style == "never":
        assert {c["reason"].split(": ")[-1] for c in failed} == {"no_call"}
    if style == "text":
        assert all(c["phase"] == "negative" or not c["passed"] for c in result["cases"])
        assert {c["reason"].split(": ")[-1] for c in failed} == {"text_tool_call family=hermes"}
        assert all(c["turns"][-1]["classification"]["label"] == "text_tool_call" for c in failed)
    run_dirs = list(tmp_path.iterdir())
    assert len(run_dirs) == 1 and json.loads((run_dirs[0] / "result.json").read_text())["total"] == result["total"]


# ---------------------------------------------------------------- the form matrix

@pytest.mark.parametrize("quirk, failing", [
    ("", {}),  # with the default 500 tools
    ("ignore_required", {"chat-required": "ignored_required", "responses-required": "ignored_required",
                         "messages-any": "ignored_required"}),
    ("no_responses", {s: "http_error status=404"
                      for s in ("responses-auto", "responses-required", "responses-auto-stream")}),
    ("stream_duplicates", {s: "arguments_duplicated_into_content" for s in ("chat-auto-stream", "chat-named-stream",
                                                                           "messages-auto-stream",
                                                                           "messages-named-stream")}),
    ("empty_tool_calls", {s: "finish_reason_mismatch" for s in ("chat-auto", "chat-strict", "chat-narrowed",
                                                                "messages-auto")}),
])
def test_forms_shapes(quirk: str, failing: dict[str, str], tmp_path: Path) -> None:
    with ResponderEndpoint(forms_model(quirk)) as fake:
        n_tools = ["--tools", "60"] if quirk else []
        code, out = run_cli("forms", "--model", "fake-model", "--base-url", fake.base_url, *n_tools,
                            "--run-dir", str(tmp_path), "--json")
        sent = list(fake.requests)
    assert code == 0
    result = json.loads(out)
    full = 60 if quirk else 500
    assert set(result) == {"tools", "shapes"} and result["tools"] == full and len(result["shapes"]) == 15
    assert all(set(s) == {"name", "passed", "reason"} for s in result["shapes"])
    assert {s["name"]: s["reason"] for s in result["shapes"] if not s["passed"]} == failing
    assert all(s["reason"] == "ok" for s in result["shapes"] if s["passed"])
    sizes = sorted(len(body["tools"]) for _, body in sent)
    assert sizes == [8] + [full] * 14  # one narrowed catalog, the full one everywhere else
    named = [body["tool_choice"] for _, body in sent if isinstance(body["tool_choice"], dict)
             and body["tool_choice"].get("type") in ("function", "tool")]
    assert named == [{"type": "function", "function": {"name": "get_forecast"}}] * 2 + \
        [{"type": "tool", "name": "get_forecast"}] * 2
    assert [path for path, _ in sent].count("/v1/messages") == 5
    assert (next(tmp_path.iterdir()) / "exchanges.json").is_file()


def test_cases_the_endpoint_failed_are_unscored_not_the_models_fails(tmp_path: Path) -> None:
    """An HTTP 500 from the endpoint never heard the model out: such a case is counted apart (`unscored`), and the
    score is over the cases scored (before, it counted as a fail: a flaky server lowered the model's score)."""
    cases = generate_cases(45739, 37)
    oracle = battery_model(cases, "oracle")
    broken = {case_key(c) for c in cases[:3]}

    def respond(path: str, body: dict[str, Any]) -> ScriptedReply:
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        if (user, tuple(t["function"]["name"] for t in body["tools"])) in broken:
            return ScriptedReply(status=500, body={"error": {"message": "the server fell over"}})
        return oracle(path, body)

    with ResponderEndpoint(respond) as fake:
        code, out = run_cli("tooling", "--model", "fake-model", "--base-url", fake.base_url, "--cases", "37",
                            "--run-dir", str(tmp_path), "--json")
    assert code == 0
    total = json.loads(out)["total"]
    assert total == {"passed": 34, "cases": 34, "unscored": 3}
    with ResponderEndpoint(respond) as fake:
        code, table = run_cli("tooling", "--model", "fake-model", "--base-url", fake.base_url, "--cases", "37",
                              "--run-dir", str(tmp_path))
    assert code == 0 and "3 case(s) unscored" in table


def test_report_shows_battery_and_forms_side_by_side(campaign_cases: list[Case], tmp_path: Path) -> None:
    runs = str(tmp_path / "runs")
    with ResponderEndpoint(battery_model(generate_cases(45739, 37), "oracle")) as fake:
        assert run_cli("tooling", "--model", "fake-model", "--base-url", fake.base_url, "--cases", "37",
                       "--run-dir", runs)[0] == 0
    with ResponderEndpoint(forms_model("ignore_required")) as fake:
        code, table = run_cli("forms", "--model", "fake-model", "--base-url", fake.base_url, "--tools", "50",
                              "--run-dir", runs)
    assert code == 0 and "ignored_required" in table
    code, report = run_cli("report", "--run-dir", runs, "--format", "md")
    assert code == 0
    assert "tool-call battery" in report and "37/37 (100.0 %)" in report and "12/15 shapes" in report


def test_ctrl_c_does_not_wait_for_requests_in_flight(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    release = threading.Event()

    def slow(path: str, body: dict[str, Any]) -> ScriptedReply:
        release.wait(30)  # a model that takes its time
        return ScriptedReply(body=chat_body("done"))

    with ResponderEndpoint(slow) as fake:
        cli = [sys.executable, "-m", "agentic_eval.cli", "tooling", "--model", "fake-model",
               "--base-url", fake.base_url, "--cases", "10", "-j", "2", "--run-dir", str(tmp_path)]
        proc = subprocess.Popen(cli, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 20
            while len(fake.requests) < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert len(fake.requests) >= 2, "the battery never started"
            proc.send_signal(signal.SIGINT)
            started = time.monotonic()
            _, err = proc.communicate(timeout=15)
        finally:
            release.set()
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 130 and "interrupted" in err
    assert time.monotonic() - started < 5


def _exchange(body: Any, status: int | None = 200, error: str | None = None) -> Any:
    from agentic_eval.instruments.exchange import Exchange

    return Exchange(status, body, error, 0.1)


FORECAST_CALL = tool_call("get_forecast", WITNESS, "call_1")


@pytest.mark.parametrize("shape_name, body, done, reason", [
    ("chat-auto", chat_body(None, tool_calls=[FORECAST_CALL]), True, "ok"),
    ("chat-named", chat_body(None, tool_calls=[FORECAST_CALL], finish_reason="stop"), True, "ok"),
    ("chat-auto", chat_body('<tool_call>\n{"name": "get_forecast", "arguments": {"city": "Lisbon", "days": 3}}\n'
                            "</tool_call>"), True, "call_written_as_text family=hermes"),
    ("chat-named", chat_body(None, tool_calls=[tool_call("get_current_weather", {"city": "Lisbon"})]), True,
     "ignored_named_choice"),
    ("chat-named", chat_body(None, tool_calls=[tool_call(
        "get_forecast", '<tool_call>{"city": "Lisbon", "days": 3}</tool_call>')]), True, "bad_arguments"),
    ("chat-auto", chat_body("<think>\n\n</think>", tool_calls=[FORECAST_CALL]), True, "think_tags_in_content"),
    ("chat-auto", chat_body(None, tool_calls=[tool_call("get_forecast", {**WITNESS, "days": 5})]), True,
     "wrong_value path=days"),
    ("chat-auto", chat_body("It is sunny.", finish_reason="length"), True, "truncated"),
    ("chat-auto-stream", chat_body(None, tool_calls=[FORECAST_CALL]), False, "stream_incomplete"),
    ("responses-auto", {**responses_body(function_calls=[("get_forecast", WITNESS)]), "status": "incomplete"}, True,
     "truncated"),
    ("responses-required", responses_body("Sunny all week."), True, "ignored_required"),
    ("responses-auto", {"error": {"message": "not found"}}, True, "http_error status=200"),
    # a server that answers a chat completion at /responses does not speak the Responses API
    ("responses-auto", chat_body(None, tool_calls=[FORECAST_CALL]), True, "wrong_api"),
])
def test_judge_shape(shape_name: str, body: Any, done: bool, reason: str) -> None:
    from agentic_eval.classify.turn import classify_turn
    from agentic_eval.instruments.forms import SHAPES, build_request, form_catalog, judge_shape

    shape = next(s for s in SHAPES if s.name == shape_name)
    request = build_request(shape, "m", form_catalog(50))
    try:
        classification = classify_turn(request, body)
    except ValueError:
        classification = None
    assert judge_shape(shape, request, _exchange(body), done, classification).reason == reason


def test_judge_shape_http_error_and_timeout() -> None:
    from agentic_eval.instruments.forms import SHAPES, judge_shape

    assert (judge_shape(SHAPES[0], {}, _exchange("Not Found", 404, "HTTP 404: Not Found")).reason
            == "http_error status=404")
    assert judge_shape(SHAPES[0], {}, _exchange(None, None, "timeout after 600 s")).reason == "timeout"


def test_strict_schemas_require_every_key_and_allow_null_for_optional_ones() -> None:
    import jsonschema

    from agentic_eval.instruments.forms import form_catalog, strict_schema

    for tool in form_catalog(500):
        schema = strict_schema(tool.parameters)
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["additionalProperties"] is False and set(schema["required"]) == set(schema["properties"])
    forecast = strict_schema(form_catalog(1)[0].parameters)
    jsonschema.validate({"city": "Lisbon", "days": 3, "units": None}, forecast)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"city": "Lisbon", "days": 3}, forecast)


def test_a_connection_dropped_at_once_is_retried_once(tmp_path: Path) -> None:
    from agentic_eval.endpoint import resolve_endpoint
    from agentic_eval.instruments.exchange import make_client, post_json
    from agentic_eval.instruments.forms import stream_json

    hang_ups = iter([True, False, True, False, True, True])

    def flaky(path: str, body: dict[str, Any]) -> ScriptedReply | None:
        if next(hang_ups):
            return None
        return ScriptedReply(events=chat_stream("hi")) if body.get("stream") else ScriptedReply(body=chat_body("hi"))

    with ResponderEndpoint(flaky) as fake, make_client(resolve_endpoint(fake.base_url)) as client:
        assert post_json(client, "/chat/completions", {}, 10).error is None
        exchange, done = stream_json(client, "/chat/completions", {"stream": True}, 10)
        assert exchange.error is None and done
        failed = post_json(client, "/chat/completions", {}, 10)  # dropped twice: that is the server's answer
        assert failed.error is not None and "RemoteProtocolError" in failed.error
        assert len(fake.requests) == 6

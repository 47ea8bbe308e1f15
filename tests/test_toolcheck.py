"""The argument checkers, table-driven: BFCL-like rules and the edge cases models hit."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentic_eval.classify.turn import classify_turn
from agentic_eval.instruments.toolcheck import (
    check_call,
    check_calls,
    judge_turn,
    maximum_matching,
    normalize_string,
    values_equal,
)

FORECAST = {"type": "object", "properties": {
    "city": {"type": "string"}, "days": {"type": "integer", "minimum": 1, "maximum": 14},
    "units": {"type": "string", "enum": ["metric", "imperial"]}}, "required": ["city", "days"]}
REFUND = {"type": "object", "properties": {
    "payment_id": {"type": "string"}, "amount": {"type": "number", "exclusiveMinimum": 0},
    "notify": {"type": "boolean"}}, "required": ["payment_id", "amount"]}
SHIP = {"type": "object", "properties": {
    "order_id": {"type": "string"},
    "address": {"type": "object", "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
                "required": ["city", "country"]},
    "labels": {"type": "array", "items": {"type": "string"}},
    "note": {"type": "string"}}, "required": ["order_id", "address"]}
SCHEMAS = {"get_forecast": FORECAST, "refund_payment": REFUND, "ship_order": SHIP}

FORECAST_EXP = {"name": "get_forecast", "args": {"city": {"values": ["New York City", "NYC"]}, "days": {"values": [3]},
                                                 "units": {"values": ["metric"], "optional": True}}}
REFUND_EXP = {"name": "refund_payment", "args": {"payment_id": {"values": ["pay_1"]}, "amount": {"values": [42.0]}}}
SHIP_EXP = {"name": "ship_order", "args": {
    "order_id": {"values": ["ORD-1"]},
    "address": {"object": {"city": {"values": ["Lisbon"]}, "country": {"values": ["PT"]}}},
    "labels": {"items": [{"values": ["fragile"]}, {"values": ["gift"]}], "ordered": False},
    "note": {"text": {"contains": ["PAY-142", "retry"]}, "optional": True}}}

CASES: list[tuple[str, str, dict[str, Any], dict[str, Any], str]] = [
    # (label, tool called, arguments, expected call, reason)
    ("exact", "get_forecast", {"city": "New York City", "days": 3}, FORECAST_EXP, "ok"),
    ("acceptable alternative", "get_forecast", {"city": "NYC", "days": 3}, FORECAST_EXP, "ok"),
    ("normalised string", "get_forecast", {"city": "new-york city.", "days": 3}, FORECAST_EXP, "ok"),
    ("optional omitted", "get_forecast", {"city": "NYC", "days": 3}, FORECAST_EXP, "ok"),
    ("optional given right", "get_forecast", {"city": "NYC", "days": 3, "units": "metric"}, FORECAST_EXP, "ok"),
    ("optional given wrong", "get_forecast", {"city": "NYC", "days": 3, "units": "imperial"}, FORECAST_EXP,
     "wrong_value path=units"),
    ("int where float", "refund_payment", {"payment_id": "pay_1", "amount": 42}, REFUND_EXP, "ok"),
    ("unmentioned optional: any value", "refund_payment", {"payment_id": "pay_1", "amount": 42.0, "notify": False},
     REFUND_EXP, "ok"),
    ("float that is an integer", "get_forecast", {"city": "NYC", "days": 3.0}, FORECAST_EXP, "ok"),
    ("string for integer", "get_forecast", {"city": "NYC", "days": "3"}, FORECAST_EXP, "wrong_type path=days"),
    ("bool is not a number", "refund_payment", {"payment_id": "pay_1", "amount": True}, REFUND_EXP,
     "wrong_type path=amount"),
    ("out of range", "get_forecast", {"city": "NYC", "days": 30}, FORECAST_EXP, "schema_violation path=days"),
    ("enum is exact", "get_forecast", {"city": "NYC", "days": 3, "units": "Metric"}, FORECAST_EXP,
     "schema_violation path=units"),
    ("missing required", "get_forecast", {"city": "NYC"}, FORECAST_EXP, "missing_param path=days"),
    ("unexpected parameter", "get_forecast", {"city": "NYC", "days": 3, "country": "US"}, FORECAST_EXP,
     "unexpected_param path=country"),
    ("wrong value", "get_forecast", {"city": "Boston", "days": 3}, FORECAST_EXP, "wrong_value path=city"),
    ("wrong tool", "refund_payment", {"payment_id": "pay_1", "amount": 42}, FORECAST_EXP, "wrong_tool"),
    ("tool not offered", "get_weather", {"city": "NYC"}, FORECAST_EXP, "wrong_tool"),
    ("nested ok, any order", "ship_order", {"order_id": "ORD-1", "address": {"city": "lisbon", "country": "PT"},
                                            "labels": ["gift", "fragile"]}, SHIP_EXP, "ok"),
    ("nested wrong value", "ship_order", {"order_id": "ORD-1", "address": {"city": "Porto", "country": "PT"},
                                          "labels": ["gift", "fragile"]}, SHIP_EXP, "wrong_value path=address.city"),
    ("nested missing key", "ship_order", {"order_id": "ORD-1", "address": {"city": "Lisbon"}, "labels": []},
     SHIP_EXP, "missing_param path=address.country"),
    ("nested unexpected key", "ship_order", {"order_id": "ORD-1", "address": {"city": "Lisbon", "country": "PT",
                                                                              "zip": "1100"},
                                             "labels": ["gift", "fragile"]},
     SHIP_EXP, "unexpected_param path=address.zip"),
    ("array too short", "ship_order", {"order_id": "ORD-1", "address": {"city": "Lisbon", "country": "PT"},
                                       "labels": ["gift"]}, SHIP_EXP, "wrong_value path=labels"),
    ("array wrong item", "ship_order", {"order_id": "ORD-1", "address": {"city": "Lisbon", "country": "PT"},
                                        "labels": ["gift", "urgent"]}, SHIP_EXP, "wrong_value path=labels[0]"),
    ("free text with the required words", "ship_order", {
        "order_id": "ORD-1", "address": {"city": "Lisbon", "country": "PT"}, "labels": ["fragile", "gift"],
        "note": "Raised the RETRY limit, see pay-142."}, SHIP_EXP, "ok"),
    ("free text missing a word", "ship_order", {
        "order_id": "ORD-1", "address": {"city": "Lisbon", "country": "PT"}, "labels": ["fragile", "gift"],
        "note": "Raised the limit, see PAY-142."}, SHIP_EXP, "wrong_value path=note"),
]


@pytest.mark.parametrize("label, name, args, expected, reason", CASES, ids=[c[0] for c in CASES])
def test_check_call(label: str, name: str, args: dict[str, Any], expected: dict[str, Any], reason: str) -> None:
    for form in (args, json.dumps(args)):  # decoded, and as the JSON string servers send
        verdict = check_call(name, form, expected, SCHEMAS)
        assert verdict.reason == reason, verdict.detail
        assert verdict.passed == (reason == "ok")


@pytest.mark.parametrize("arguments, reason", [
    ('{"city": "NYC", "days": 3', "bad_arguments"),
    ('<tool_call>{"city": "NYC", "days": 3}</tool_call>', "bad_arguments"),
    ("[1, 2]", "bad_arguments"),
    ("", "missing_param path=city"),
])
def test_arguments_that_are_not_an_object(arguments: str, reason: str) -> None:
    assert check_call("get_forecast", arguments, FORECAST_EXP, SCHEMAS).reason == reason


NYC = ("get_forecast", {"city": "NYC", "days": 3})
REFUND_CALL = ("refund_payment", {"payment_id": "pay_1", "amount": 42})
TWO = [FORECAST_EXP, REFUND_EXP]


@pytest.mark.parametrize("calls, expected, reason", [
    ([NYC, REFUND_CALL], TWO, "ok"),
    ([REFUND_CALL, NYC], TWO, "ok"),  # parallel calls match in any order
    ([NYC], TWO, "wrong_count"),
    ([NYC, NYC], TWO, "wrong_tool"),
    ([NYC, ("refund_payment", {"payment_id": "pay_2", "amount": 42})], TWO, "wrong_value path=payment_id"),
    ([], TWO, "no_call"),
    ([], [], "ok"),  # irrelevance: no call is the right answer
    ([NYC], [], "called_when_none_needed"),
])
def test_check_calls(calls: list[tuple[str, Any]], expected: list[dict[str, Any]], reason: str) -> None:
    assert check_calls(calls, expected, SCHEMAS).reason == reason


def test_same_tool_twice_pairs_each_call_once() -> None:
    expected = [{"name": "get_forecast", "args": {"city": {"values": [c]}, "days": {"values": [3]}}}
                for c in ("Oslo", "Rome")]
    calls = [("get_forecast", {"city": "Rome", "days": 3}), ("get_forecast", {"city": "Oslo", "days": 3})]
    assert check_calls(calls, expected, SCHEMAS).passed
    twice = [("get_forecast", {"city": "Rome", "days": 3})] * 2
    verdict = check_calls(twice, expected, SCHEMAS)
    assert verdict.reason == "wrong_value path=city" and verdict.detail.startswith("call ")


@pytest.mark.parametrize("a, b, equal", [
    ("April 1, 2024", "april 1 2024", True), ("it's", 'it"s', True), ("Lisbon", "Lisboa", False),
    (3, 3.0, True), (0.1 + 0.2, 0.3, True), (True, 1, False), (1, True, False), ([1, 2], [2, 1], False),
    ({"a": "X-Y"}, {"a": "xy"}, True), ({"a": 1}, {"a": 1, "b": 2}, False), (None, None, True),
])
def test_values_equal(a: Any, b: Any, equal: bool) -> None:
    assert values_equal(a, b) is equal


def test_normalize_string_is_bfcl_like() -> None:
    assert normalize_string("New-York, N.Y. / 2024_05*^") == "newyorkny202405"


def _turn(content: str | None = None, calls: list[tuple[str, Any]] = ()) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [{"id": f"c{i}", "type": "function",
                                  "function": {"name": n, "arguments": a if isinstance(a, str) else json.dumps(a)}}
                                 for i, (n, a) in enumerate(calls)]
    return {"choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}]}


REQUEST = {"tools": [{"type": "function", "function": {"name": n, "parameters": s}} for n, s in SCHEMAS.items()]}
HERMES = '<tool_call>\n{"name": "get_forecast", "arguments": {"city": "NYC", "days": 3}}\n</tool_call>'


@pytest.mark.parametrize("response, expected, reason", [
    (_turn(calls=[NYC]), [FORECAST_EXP], "ok"),
    (_turn(HERMES), [FORECAST_EXP], "text_tool_call family=hermes"),
    (_turn("I would call get_forecast for you."), [FORECAST_EXP], "no_call"),
    (_turn(""), [FORECAST_EXP], "no_call"),
    (_turn("No tool fits this request."), [], "ok"),
    (_turn(HERMES), [], "called_when_none_needed"),
    (_turn(calls=[NYC]), [], "called_when_none_needed"),
])
def test_judge_turn(response: dict[str, Any], expected: list[dict[str, Any]], reason: str) -> None:
    verdict = judge_turn(REQUEST, response, expected, classify_turn(REQUEST, response))
    assert verdict.reason == reason


CITIES = ["Oslo", "Rome", "Lima", "Kyiv", "Doha", "Baku", "Riga", "Suva", "Apia", "Male", "Bern", "Nuuk"]


@pytest.mark.parametrize("n", [2, 7, 8, 12])
def test_parallel_calls_match_in_any_order_for_any_number(n: int) -> None:
    """Issue 21: past 6 calls the checker paired calls by position, so a correct answer in another order failed."""
    expected = [{"name": "get_forecast", "args": {"city": {"values": [c]}, "days": {"values": [d + 1]}}}
                for d, c in enumerate(CITIES[:n])]
    calls = [("get_forecast", {"city": c, "days": d + 1}) for d, c in enumerate(CITIES[:n])]
    for order in (calls[::-1], calls[1:] + calls[:1], calls[::2] + calls[1::2]):
        assert check_calls(order, expected, SCHEMAS).passed
    wrong = [*calls[::-1][:-1], ("get_forecast", {"city": "Paris", "days": 1})]
    verdict = check_calls(wrong, expected, SCHEMAS)
    assert verdict.reason == "wrong_value path=city" and verdict.detail.startswith(f"call {n}:")


def test_matching_finds_what_a_greedy_pass_misses() -> None:
    """An expected call that accepts either city must not take the only call the other one accepts."""
    either = {"name": "get_forecast", "args": {"city": {"values": ["Oslo", "Rome"]}, "days": {"values": [3]}}}
    oslo = {"name": "get_forecast", "args": {"city": {"values": ["Oslo"]}, "days": {"values": [3]}}}
    calls = [("get_forecast", {"city": "Oslo", "days": 3}), ("get_forecast", {"city": "Rome", "days": 3})]
    assert check_calls(calls, [either, oslo], SCHEMAS).passed
    assert maximum_matching([[True, True], [True, False]]) == [1, 0]


def test_matching_stays_fast_with_many_calls() -> None:
    """60 interchangeable calls: trying every order would never end; the matching is n^3 at worst."""
    fits = [[True] * 60 for _ in range(60)]
    match = maximum_matching(fits)
    assert sorted(j for j in match if j is not None) == list(range(60))


def test_wrong_type_on_an_enum_parameter_is_a_type_error() -> None:
    """Issue 21: a number for a string enum broke both rules; the type is the clearer reason."""
    verdict = check_call("get_forecast", {"city": "NYC", "days": 3, "units": 1}, FORECAST_EXP, SCHEMAS)
    assert verdict.reason == "wrong_type path=units"
    enum_first = {"type": "object", "properties": {"units": {"enum": ["metric", "imperial"], "type": "string"}}}
    verdict = check_call("u", {"units": 2}, {"name": "u", "args": {"units": {"values": ["metric"]}}}, {"u": enum_first})
    assert verdict.reason == "wrong_type path=units"


@pytest.mark.parametrize("value, passed", [({"a": "X", "b": 1}, True), ({"a": "Y"}, True), ({"a": "Y", "b": 1}, False),
                                           ({"a": "Z"}, False)])
def test_one_of_spec(value: dict[str, Any], passed: bool) -> None:
    spec = {"one_of": [{"object": {"a": {"values": ["x"]}, "b": {"values": [1]}}},
                       {"object": {"a": {"values": ["y"]}}}]}
    schema = {"type": "object", "properties": {"p": {"type": "object"}}}
    verdict = check_call("f", {"p": value}, {"name": "f", "args": {"p": spec}}, {"f": schema})
    assert verdict.passed is passed

"""Argument checkers for the tool-call battery, the form matrix and the BFCL suite. Pure functions, no I/O.

The rules follow BFCL's AST checker (`bfcl_eval/eval_checker/ast_eval/ast_checker.py`, v4) where it has
one:

- the function name must match exactly; a name that was not offered is `wrong_tool` too;
- arguments must be a JSON object (`bad_arguments` otherwise);
- a required parameter (by the schema or by the expectation) that is missing is `missing_param`;
- a key the schema does not define is `unexpected_param` (BFCL: "unexpected parameter");
- the arguments must validate against the tool's JSON Schema: a wrong JSON type is `wrong_type`,
  anything else (enum, range, pattern, array length ...) is `schema_violation`; where one value
  breaks both its type and another rule (a number for a string enum), the type is the reason;
- values are compared with the expectation: a list of acceptable values per parameter, strings
  normalised the BFCL way (lower case, spaces and `,./-_*^` removed, `'` read as `"`), numbers
  compared as numbers (3 == 3.0), nested objects key by key, arrays item by item in order or, where
  the case says so, in any order; a mismatch is `wrong_value path=a.b[1].c`;
- parallel calls are matched in any order, each to one call, for any number of calls: a maximum
  bipartite matching over the table of call-against-expected verdicts (O(n^3), no permutations);
- when no call is expected (irrelevance), any call fails with `called_when_none_needed`.

Where it departs from BFCL's checker, on purpose (`tests/test_bfcl.py` cross-checks both on BFCL's
own cases and lists every disagreement under one of these, or under a quirk of BFCL's answers):

- *integer-valued floats*: `3.0` is accepted for an `integer` parameter (JSON Schema counts it an
  integer; many servers' JSON encoders write every number as a float). BFCL wants a Python `int`.
- *enum exact*: a value must be one of the schema's `enum` exactly (a server with constrained
  decoding is held to it, and a client would reject anything else). BFCL never reads `enum`; it
  compares normalised values, so `"Celsius"` passes there for an enum of `"celsius"`.
- *null*: `null` is refused unless the schema allows it (type `null` or a `null` in its enum).
  BFCL compares `None` with the answers like any value.
- *the whole schema*: the arguments are validated against the whole JSON Schema, nested objects
  and array items included (ranges, patterns, lengths, nested required keys). BFCL checks the
  Python type of each top-level parameter and of one level of list items only.
- *unmentioned optional parameters*: an optional parameter the expectation does not list may be
  omitted or given any schema-valid value (guessing a sensible default is not wrong). BFCL fails
  a parameter its answer does not list as "unexpected".
- *nested values*: strings are normalised at every depth of an object or array and numbers compare
  within 1e-9. BFCL normalises top-level strings and the top level of lists and dicts only.
- *parallel calls*: matched by a maximum matching. BFCL matches greedily (each answer takes the
  first unmatched call that fits), so a correct answer can fail in some orders of its calls.
- *bools*: `true` is never a number and `1` never a bool (BFCL's type check agrees; its value
  comparison alone would take `True == 1`).

An *expectation* ("spec") is plain JSON, so cases can be stored and compared byte for byte:

    {"values": [v, ...]}                      one of these values (normalised comparison)
    {"object": {key: spec, ...}}              a nested object, key by key
    {"items": [spec, ...], "ordered": bool}   an array, item by item (ordered: default true)
    {"text": {"contains": [...], "min_length": n, "max_length": n}}   free text (case-insensitive)
    {"any": true}                             any schema-valid value
    {"one_of": [spec, ...]}                   any one of these specs (BFCL's alternative dicts)

each with an optional `"optional": true` (may be omitted). An expected call is
`{"name": str, "args": {param: spec}, "witness": {...}}`, the witness being one correct set of arguments.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import jsonschema

if TYPE_CHECKING:
    import jsonschema.protocols

    from agentic_eval.classify.turn import TurnClassification

__all__ = [
    "Verdict",
    "check_call",
    "check_calls",
    "judge_turn",
    "maximum_matching",
    "normalize_string",
    "parse_arguments",
    "schema_problem",
    "values_equal",
]

_NORMALISE = re.compile(r"[ ,./\-_*^]")


@dataclass(frozen=True)
class Verdict:
    """Pass or fail, with a reason code (and path where one applies) and a sentence for people."""

    passed: bool
    reason: str = "ok"
    detail: str = ""

    @property
    def code(self) -> str:
        """The reason without its `path=...` part, e.g. `wrong_value`."""
        return self.reason.split(" ", 1)[0]


OK = Verdict(True)


def normalize_string(text: str) -> str:
    """BFCL's string normalisation: lower case, spaces and `,./-_*^` removed, `'` read as `"`."""
    return _NORMALISE.sub("", text).lower().replace("'", '"')


def values_equal(actual: object, expected: object) -> bool:
    """Deep equality with normalised strings, numbers compared as numbers, bools kept apart."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(expected, bool) and isinstance(actual, bool) and actual == expected
    if isinstance(expected, (int, float)):
        return isinstance(actual, (int, float)) and math.isclose(actual, expected, rel_tol=1e-9, abs_tol=1e-9)
    if isinstance(expected, str):
        return isinstance(actual, str) and normalize_string(actual) == normalize_string(expected)
    if isinstance(expected, list):
        return (isinstance(actual, list) and len(actual) == len(expected)
                and all(values_equal(a, e) for a, e in zip(actual, expected)))
    if isinstance(expected, dict):
        return (isinstance(actual, dict) and actual.keys() == expected.keys()
                and all(values_equal(actual[k], expected[k]) for k in expected))
    return bool(actual == expected)


def parse_arguments(arguments: object) -> dict[str, Any] | None:
    """A call's arguments as a dict (they arrive as a JSON string, or already decoded), else None."""
    if isinstance(arguments, str):
        if not arguments.strip():
            return {}
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return None
    return arguments if isinstance(arguments, dict) else None


@functools.lru_cache(maxsize=4096)
def _validator(schema_json: str) -> jsonschema.protocols.Validator:
    schema = json.loads(schema_json)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema)


def _path(parts: Sequence[Any]) -> str:
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(arguments)"


def schema_problem(arguments: dict[str, Any], schema: Mapping[str, Any] | None) -> Verdict | None:
    """The first way `arguments` break `schema`, as a verdict; None when they validate."""
    if not schema:
        return None
    validator = _validator(json.dumps(schema, sort_keys=True))
    errors = sorted(validator.iter_errors(arguments), key=lambda e: (
        len(e.absolute_path), list(map(str, e.absolute_path)), e.validator != "type"))  # the type first at a path
    if not errors:
        return None
    error = errors[0]
    where = list(error.absolute_path)
    if error.validator == "required":
        missing = next((k for k in error.validator_value
                        if isinstance(error.instance, dict) and k not in error.instance), "")
        return Verdict(False, f"missing_param path={_path([*where, missing])}", error.message)
    if error.validator == "additionalProperties":
        extra = re.findall(r"'([^']+)'", error.message)
        return Verdict(False, f"unexpected_param path={_path([*where, *(extra[:1])])}", error.message)
    code = "wrong_type" if error.validator == "type" else "schema_violation"
    return Verdict(False, f"{code} path={_path(where)}", f"{error.validator}: {error.message}")


def _sub_schema(schema: Mapping[str, Any] | None, key: str | int) -> Mapping[str, Any] | None:
    if not isinstance(schema, Mapping):
        return None
    if isinstance(key, int):
        items = schema.get("items")
        return items if isinstance(items, Mapping) else None
    props = schema.get("properties")
    return props.get(key) if isinstance(props, Mapping) else None


def _check_text(value: object, rule: Mapping[str, Any], where: list[Any]) -> Verdict:
    if not isinstance(value, str):
        return Verdict(False, f"wrong_type path={_path(where)}", f"expected free text, got {type(value).__name__}")
    folded = " ".join(value.lower().split())
    for needle in rule.get("contains", ()):
        if " ".join(str(needle).lower().split()) not in folded:
            return Verdict(False, f"wrong_value path={_path(where)}", f"the text does not mention {needle!r}")
    if len(value.strip()) < int(rule.get("min_length", 1)):
        return Verdict(False, f"wrong_value path={_path(where)}",
                       f"the text is shorter than {rule.get('min_length', 1)}")
    if "max_length" in rule and len(value) > int(rule["max_length"]):
        return Verdict(False, f"wrong_value path={_path(where)}", f"the text is longer than {rule['max_length']}")
    return OK


def _check_value(value: object, spec: Mapping[str, Any], schema: Mapping[str, Any] | None, where: list[Any]) -> Verdict:
    """Check one value against its spec (the schema was already validated as a whole)."""
    if spec.get("any"):
        return OK
    if "text" in spec:
        return _check_text(value, spec["text"], where)
    if "object" in spec:
        if not isinstance(value, dict):
            return Verdict(False, f"wrong_type path={_path(where)}", f"expected an object, got {type(value).__name__}")
        return _check_object(value, spec["object"], schema, where)
    if "items" in spec:
        return _check_items(value, spec, schema, where)
    if "one_of" in spec:
        verdicts = [_check_value(value, option, schema, where) for option in spec["one_of"]]
        return next((v for v in verdicts if v.passed), verdicts[0] if verdicts else OK)
    accepted = spec.get("values", [])
    if any(values_equal(value, option) for option in accepted):
        return OK
    shown = ", ".join(json.dumps(v) for v in accepted[:4])
    return Verdict(False, f"wrong_value path={_path(where)}", f"got {json.dumps(value)[:80]}, expected one of {shown}")


def _check_object(value: dict[str, Any], fields: Mapping[str, Any], schema: Mapping[str, Any] | None,
                  where: list[Any]) -> Verdict:
    for key, sub in fields.items():
        if key not in value and not sub.get("optional"):
            return Verdict(False, f"missing_param path={_path([*where, key])}", f"{key!r} was expected")
    for key, item in value.items():
        sub_schema = _sub_schema(schema, key)
        if key not in fields:
            if sub_schema is None:
                return Verdict(False, f"unexpected_param path={_path([*where, key])}", f"{key!r} is not in the schema")
            continue  # an optional parameter the request did not mention: any schema-valid value
        verdict = _check_value(item, fields[key], sub_schema, [*where, key])
        if not verdict.passed:
            return verdict
    return OK


def _check_items(value: object, spec: Mapping[str, Any], schema: Mapping[str, Any] | None, where: list[Any]) -> Verdict:
    items: list[Mapping[str, Any]] = spec["items"]
    if not isinstance(value, list):
        return Verdict(False, f"wrong_type path={_path(where)}", f"expected an array, got {type(value).__name__}")
    if len(value) != len(items):
        return Verdict(False, f"wrong_value path={_path(where)}", f"expected {len(items)} items, got {len(value)}")
    item_schema = _sub_schema(schema, 0)
    if spec.get("ordered", True):
        for index, (got, want) in enumerate(zip(value, items)):
            verdict = _check_value(got, want, item_schema, [*where, index])
            if not verdict.passed:
                return verdict
        return OK
    unmatched = list(range(len(value)))
    for number, want in enumerate(items):  # each expected item takes the first unmatched item that fits
        fit = next((i for i in unmatched if _check_value(value[i], want, item_schema, [*where, i]).passed), None)
        if fit is None:
            return Verdict(False, f"wrong_value path={_path([*where, number])}",
                           f"no item matches expected item {number}")
        unmatched.remove(fit)
    return OK


def check_call(name: str, arguments: object, expected: Mapping[str, Any], schemas: Mapping[str, Any]) -> Verdict:
    """One call against one expected call. `schemas` maps each offered tool to its parameters schema."""
    if name != expected["name"]:
        offered = "" if name in schemas else " (not offered)"
        return Verdict(False, "wrong_tool", f"called {name!r}{offered}, expected {expected['name']!r}")
    args = parse_arguments(arguments)
    if args is None:
        return Verdict(False, "bad_arguments", f"arguments are not a JSON object: {str(arguments)[:80]!r}")
    schema = schemas.get(name)
    fields: Mapping[str, Any] = expected.get("args", {})
    for key, sub in fields.items():  # the expectation's own required keys come first: the clearest reason
        if key not in args and not sub.get("optional"):
            return Verdict(False, f"missing_param path={key}", f"{key!r} was expected")
    problem = schema_problem(args, schema)
    if problem is None:
        props = (schema or {}).get("properties")
        extra = [k for k in args if isinstance(props, Mapping) and k not in props and k not in fields]
        if extra:
            problem = Verdict(False, f"unexpected_param path={extra[0]}", f"{extra[0]!r} is not in the schema")
    return problem or _check_object(args, fields, schema, [])


def _pair_verdicts(calls: Sequence[tuple[str, Any]], expected: Sequence[Mapping[str, Any]],
                   schemas: Mapping[str, Any]) -> list[list[Verdict]]:
    return [[check_call(name, args, want, schemas) for want in expected] for name, args in calls]


def check_calls(calls: Sequence[tuple[str, Any]], expected: Sequence[Mapping[str, Any]],
                schemas: Mapping[str, Any]) -> Verdict:
    """The calls of one turn against the expected calls, matched in any order.

    No expected call means none was needed: any call fails. When no pairing fits every call, the
    reason is that of the first call left out of a maximum matching against a leftover expected
    call (one of the same tool when there is one), prefixed `call N:` when there are several."""
    if not expected:
        if calls:
            return Verdict(False, "called_when_none_needed", f"called {', '.join(n for n, _ in calls)}")
        return OK
    if not calls:
        return Verdict(False, "no_call", "no tool was called")
    if len(calls) != len(expected):
        return Verdict(False, "wrong_count", f"expected {len(expected)} call(s), got {len(calls)}")
    table = _pair_verdicts(calls, expected, schemas)
    match = maximum_matching([[v.passed for v in row] for row in table])
    n = len(calls)
    if all(j is not None for j in match):
        return OK
    # The reason: the first unmatched call against a leftover expected call, one of the same tool if any.
    left = [j for j in range(n) if j not in match]
    first = next(i for i in range(n) if match[i] is None)
    verdict = min((table[first][j] for j in left), key=lambda v: v.code == "wrong_tool")
    if n == 1:
        return verdict
    return Verdict(False, verdict.reason, f"call {first + 1}: {verdict.detail}")


def maximum_matching(fits: Sequence[Sequence[bool]]) -> list[int | None]:
    """A maximum bipartite matching of calls (rows) to expected calls (columns), `fits[i][j]` telling
    whether call i satisfies expected call j: for each call, the column it took, or None.

    Augmenting paths (Kuhn's algorithm): O(rows * edges), so 50 parallel calls cost no more than a
    few thousand steps where trying every order would cost 50! (and a greedy pass can miss a match)."""
    owner: dict[int, int] = {}  # column -> row

    def augment(row: int, seen: set[int]) -> bool:
        for col, ok in enumerate(fits[row]):
            if ok and col not in seen:
                seen.add(col)
                if col not in owner or augment(owner[col], seen):
                    owner[col] = row
                    return True
        return False

    for row in range(len(fits)):
        augment(row, set())
    match: list[int | None] = [None] * len(fits)
    for col, row in owner.items():
        match[row] = col
    return match


def judge_turn(request: Mapping[str, Any], response: Mapping[str, Any], expected: Sequence[Mapping[str, Any]],
               classification: TurnClassification) -> Verdict:
    """The verdict on one model turn: its structured calls against `expected` (empty: no call needed).

    `classification` is the turn classifier's `TurnClassification` for the same exchange; it tells a
    call written as text (`text_tool_call family=...`) from prose or an empty turn (`no_call`)."""
    from agentic_eval.classify.turn import offered_tools, read_turn

    turn = read_turn(response)
    schemas = offered_tools(request).schemas
    if turn.structured_calls or not expected:
        if not turn.structured_calls and classification.label == "text_tool_call":
            names = ", ".join(classification.tool_names) or "?"
            return Verdict(False, "called_when_none_needed",
                           f"wrote a call to {names} as text ({classification.family}) where none was needed")
        return check_calls(turn.structured_calls, expected, schemas)
    if classification.label == "text_tool_call":
        names = ", ".join(classification.tool_names) or "?"
        return Verdict(False, f"text_tool_call family={classification.family}",
                       f"wrote a call to {names} in the reply text instead of calling it")
    flags = f" ({', '.join(classification.flags)})" if classification.flags else ""
    return Verdict(False, "no_call", f"answered {classification.label}{flags} instead of calling a tool")

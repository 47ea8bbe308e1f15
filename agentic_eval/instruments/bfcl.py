"""BFCL through the wire: the Berkeley Function Calling Leaderboard's single-turn cases, played against
the user's endpoint by the battery's client, classified turn by turn, judged by `toolcheck`.

    categories = ["simple_python", "parallel"]
    cases = load_cases(categories, limit=50)
    results = run_battery(cases, endpoint, "qwen3-coder", jobs=4)        # battery.run_battery
    summary = summarize_bfcl(judge_bfcl(results, categories), categories, 50)   # the `--json` shape
    record(summary, Path("runs"), base_url=endpoint.base_url, model="qwen3-coder", categories=categories)

The cases and possible answers come from the `bfcl-eval` package when the user has it installed
(`pip install --no-deps bfcl-eval`: its own dependency list pulls in every provider SDK); nothing of
its data is copied here. Each case's function docs become the tool schemas an OpenAI-compatible
endpoint expects, the way BFCL builds them for its function-calling models (`convert_to_tool` with
BFCL's type names mapped to JSON Schema, dots in names replaced by `_`, the "Python 3 syntax" hint,
`float` marked as such), except that nested types are mapped at every depth (BFCL maps two levels).

Every case is also judged by BFCL's own AST checker (`bfcl_checker`), loaded alone with a stand-in
for its model table, so a run shows both scores and every case where they differ.

Multi-turn, web-search, memory, format-sensitivity and the Java / JavaScript categories are not
played yet (they need BFCL's executable backends or its string-typed argument conventions).
"""

from __future__ import annotations

import collections
import copy
import fnmatch
import importlib
import importlib.metadata
import importlib.util
import json
import re
import sys
import types
from collections import Counter
from pathlib import Path
from typing import Any

from agentic_eval.errors import AgenticEvalError
from agentic_eval.instruments.cases import Case, CaseResult, Step
from agentic_eval.instruments.catalog import JSON
from agentic_eval.instruments.registry import Headline
from agentic_eval.results.instrument_runs import save_instrument_run

KIND = "bfcl"

CATEGORIES: tuple[str, ...] = (
    "simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance",
    "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple", "live_irrelevance", "live_relevance",
)
LATER = ("simple_java", "simple_javascript", "multi_turn_*", "web_search", "memory", "format_sensitivity")
INSTALL = "pip install --no-deps bfcl-eval"
PYTHON_HINT = " Note that the provided function is in Python 3 syntax."
CHECKER_MODEL = "agentic-eval"
"""The model name handed to BFCL's checker; its stand-in model table says it turns '.' into '_'."""

# BFCL's type names (constants/type_mappings.py, GORILLA_TO_OPENAPI) in JSON Schema.
_JSON_TYPES = {
    "integer": "integer", "number": "number", "float": "number", "string": "string", "boolean": "boolean",
    "bool": "boolean", "array": "array", "list": "array", "dict": "object", "object": "object", "tuple": "array",
    "any": "string", "byte": "integer", "short": "integer", "long": "integer", "double": "number", "char": "string",
    "ArrayList": "array", "Array": "array", "HashMap": "object", "Hashtable": "object", "Queue": "array",
    "Stack": "array", "String": "string", "int": "integer", "Any": "string",
}
FAILURE_KINDS = ("text_tool_call", "no_call", "wrong_tool", "wrong_args", "wrong_count", "called_when_none_needed")
ERROR_CODES = frozenset({"http_error", "timeout", "harness_error"})


# ---------------------------------------------------------------- the bfcl-eval package


def package_dir() -> Path:
    """The installed `bfcl_eval` package folder; a one-line error with the pip command when it is missing."""
    try:
        spec = importlib.util.find_spec("bfcl_eval")
    except (ImportError, ValueError):  # a broken install, or a module blocked in sys.modules
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise AgenticEvalError(f"BFCL's cases come from the bfcl-eval package, which is not installed: {INSTALL}")
    return Path(next(iter(spec.submodule_search_locations)))


def package_version() -> str:
    try:
        return importlib.metadata.version("bfcl-eval")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _read_lines(path: Path) -> list[JSON]:
    if not path.is_file():
        raise AgenticEvalError(f"{path} is missing: reinstall BFCL's data with {INSTALL} --force-reinstall")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def parse_categories(text: str) -> list[str]:
    """`simple_python,live_*` (globs, or `all`) as the supported categories, in BFCL's order."""
    wanted: list[str] = []
    for word in (w.strip() for w in text.split(",")):
        if not word:
            continue
        found = list(CATEGORIES) if word == "all" else [c for c in CATEGORIES if fnmatch.fnmatchcase(c, word)]
        if not found:
            later = any(fnmatch.fnmatchcase(word, p) or fnmatch.fnmatchcase(p, word) for p in LATER)
            why = "is not played yet (single-turn categories only for now)" if later else "is not a BFCL category"
            raise AgenticEvalError(f"--category {word} {why}: choose from {', '.join(CATEGORIES)}, globs such as "
                                   "live_*, or all")
        wanted += found
    return [c for c in CATEGORIES if c in wanted]


def _spread(items: list[Any], limit: int | None) -> list[Any]:
    """At most `limit` items, evenly spread over the list (BFCL's files are grouped by topic)."""
    if limit is None or limit >= len(items):
        return items
    return [items[i * len(items) // limit] for i in range(limit)]


def load_entries(category: str, root: Path | None = None) -> list[tuple[JSON, JSON | None]]:
    """A category's entries and their possible answers (None for irrelevance and relevance), by id."""
    root = root or package_dir()
    entries = _read_lines(root / "data" / f"BFCL_v4_{category}.json")
    answer_file = root / "data" / "possible_answer" / f"BFCL_v4_{category}.json"
    answers = {a["id"]: a for a in _read_lines(answer_file)} if answer_file.is_file() else {}
    return [(e, answers.get(e["id"])) for e in entries]


def load_cases(categories: list[str], limit: int | None = None, root: Path | None = None) -> list[Case]:
    """The chosen categories as battery cases, at most `limit` per category (evenly spread)."""
    cases = []
    for category in categories:
        for entry, answer in _spread(load_entries(category, root), limit):
            cases.append(to_case(entry, answer, category))
    return cases


# ---------------------------------------------------------------- conversion


def tool_name(name: str) -> str:
    """BFCL's function-calling models see `math.hypot` as `math_hypot` (OpenAI's name pattern)."""
    return re.sub(r"\.", "_", name)


def _json_schema(prop: Any, top: bool) -> Any:
    """One BFCL parameter schema in JSON Schema: types mapped at every depth, broken keywords dropped."""
    if not isinstance(prop, dict):
        return prop
    out = dict(prop)
    kind = prop.get("type")
    if kind is None:
        if top:
            out["type"] = "string"  # as BFCL's _cast_to_openai_type
    else:
        out["type"] = _JSON_TYPES.get(kind, "string") if isinstance(kind, str) else "string"
        if kind == "float":
            out["format"] = "float"
            out["description"] = str(prop.get("description", "")) + " This is a float type value."
    if isinstance(prop.get("properties"), dict):
        out["properties"] = {k: _json_schema(v, True) for k, v in prop["properties"].items()}
    if isinstance(prop.get("items"), dict):
        out["items"] = _json_schema(prop["items"], False)
    for keyword, kind_ok in (("required", list), ("enum", list), ("properties", dict), ("items", dict)):
        if keyword in out and not isinstance(out[keyword], kind_ok):
            del out[keyword]  # BFCL's docs sometimes say `"required": true` on a parameter
    return out


def to_tools(functions: list[JSON]) -> list[JSON]:
    """BFCL function docs as chat-completions tools (`{"type": "function", "function": {...}}`)."""
    tools = []
    for fn in copy.deepcopy(functions):
        params = fn.get("parameters") or {}
        schema = _json_schema({**params, "type": "object"}, False)
        schema.setdefault("properties", {})
        tools.append({"type": "function", "function": {
            "name": tool_name(fn["name"]), "description": str(fn.get("description", "")) + PYTHON_HINT,
            "parameters": schema}})
    return tools


def _value_spec(options: Any, nested: bool = True) -> JSON:
    """BFCL's acceptable values of one parameter ("" = may be omitted) as a toolcheck spec. A dict (or a
    list of dicts) lists acceptable values per key, one level deep, as BFCL's dict_checker reads it."""
    options = options if isinstance(options, list) else [options]
    values = [o for o in options if o != ""]
    spec: JSON
    if nested and values and all(isinstance(v, dict) for v in values):
        spec = {"one_of": [_dict_spec(d) for d in values]}
    elif nested and values and all(isinstance(v, list) and v and all(isinstance(x, dict) for x in v) for v in values):
        spec = {"one_of": [{"items": [_dict_spec(d) for d in lst], "ordered": True} for lst in values]}
    else:
        spec = {"values": values}
    if "" in options:
        spec["optional"] = True
    return spec


def _dict_spec(answer: JSON) -> JSON:
    return {"object": {k: _value_spec(v, nested=False) for k, v in answer.items()}}


def _witness(options: Any) -> Any:
    """One correct value: the first acceptable one (for a dict, the first per key)."""
    value = next((o for o in options if o != ""), None) if isinstance(options, list) else options
    if isinstance(value, dict):
        return {k: _first(v) for k, v in value.items() if _first(v) != ""}
    if isinstance(value, list) and value and all(isinstance(x, dict) for x in value):
        return [{k: _first(v) for k, v in d.items() if _first(v) != ""} for d in value]
    return value


def _first(options: object) -> object:
    return next((o for o in options if o != ""), "") if isinstance(options, list) else options


def expected_calls(ground_truth: list[JSON]) -> list[JSON]:
    """BFCL's possible answer (`[{"func": {"param": [values]}}]`) as toolcheck's expected calls."""
    calls = []
    for item in ground_truth:
        (name, params), = item.items()
        calls.append({"name": tool_name(name), "args": {k: _value_spec(v) for k, v in params.items()},
                      "witness": {k: _witness(v) for k, v in params.items() if any(o != "" for o in v)}})
    return calls


def to_case(entry: JSON, answer: JSON | None, category: str) -> Case:
    """One BFCL entry as a one-step battery case (relevance cases expect a call to any tool)."""
    messages = [dict(m) for m in entry["question"][0]]
    expected = expected_calls(answer["ground_truth"]) if answer else []
    return Case(entry["id"], category, messages, to_tools(entry["function"]), [Step(expected)],
                note=", ".join(c["name"] for c in expected))


# ---------------------------------------------------------------- BFCL's own checker


def bfcl_checker() -> types.ModuleType:
    """BFCL's `ast_checker` module, loaded with only the few modules it imports.

    It imports `constants.model_config` for one flag (does the model turn '.' into '_'); that module
    imports every provider's handler, so a stand-in answering "yes" for every model is put in its
    place while the checker loads."""
    package_dir()
    name = "bfcl_eval.constants.model_config"
    stand_in = types.ModuleType(name)
    stand_in.MODEL_CONFIG_MAPPING = collections.defaultdict(  # type: ignore[attr-defined]
        lambda: types.SimpleNamespace(underscore_to_dot=True))
    saved = sys.modules.get(name)
    sys.modules[name] = stand_in
    try:
        return importlib.import_module("bfcl_eval.eval_checker.ast_eval.ast_checker")
    finally:
        if saved is None:
            del sys.modules[name]
        else:
            sys.modules[name] = saved


def bfcl_verdict(checker: types.ModuleType, entry: JSON, answer: JSON | None, category: str,
                 calls: list[tuple[str, Any]]) -> tuple[bool, str]:
    """BFCL's verdict on the structured calls of one turn: (passed, BFCL's error type)."""
    from agentic_eval.instruments.toolcheck import parse_arguments

    if category.endswith("irrelevance"):
        return (not calls, "" if not calls else "irrelevance:called")
    if category.endswith("relevance"):
        return (bool(calls), "" if calls else "relevance:no_call")
    output = []
    for name, arguments in calls:
        args = parse_arguments(arguments)
        if args is None:
            return False, "decode:bad_arguments"
        output.append({name: args})
    if not output:
        return False, "decode:no_call"
    language = importlib.import_module("bfcl_eval.constants.enums").Language.PYTHON
    assert answer is not None
    try:
        result = checker.ast_checker(entry["function"], output, answer["ground_truth"], language, category,
                                     CHECKER_MODEL)
    except Exception as exc:  # noqa: BLE001 - BFCL's checker on a model's odd output: that case's verdict only
        return False, f"checker_crashed:{type(exc).__name__}"
    return bool(result["valid"]), "" if result["valid"] else str(result.get("error_type", ""))


# ---------------------------------------------------------------- results


def failure_kind(reason: str) -> str:
    """A failed case's reason in the report's words: text_tool_call, no_call, wrong_tool, wrong_args, ..."""
    code = reason.split(" ", 1)[0].split(":")[-1].strip()
    if code in ERROR_CODES:
        return "error"
    if code in FAILURE_KINDS:
        return code
    return "wrong_args"  # wrong_value, wrong_type, missing_param, unexpected_param, schema_violation, bad_arguments


def relevance_result(result: CaseResult) -> CaseResult:
    """A relevance case expects a call to any offered tool: played with none expected, then read back."""
    turn = result.turns[-1] if result.turns else {}
    label = (turn.get("classification") or {}).get("label")
    if label is None:
        return result  # an endpoint or harness error stays one
    if label == "tool_call":
        return CaseResult(result.id, result.phase, True, "ok", "", result.turns, result.note)
    if label == "text_tool_call":
        family = turn["classification"].get("family")
        return CaseResult(result.id, result.phase, False, f"text_tool_call family={family}",
                          "wrote a call in the reply text instead of calling a tool", result.turns, result.note)
    return CaseResult(result.id, result.phase, False, "no_call", f"answered {label} instead of calling a tool",
                      result.turns, result.note)


def judge_bfcl(results: list[CaseResult], categories: list[str], root: Path | None = None) -> list[JSON]:
    """Every case's result as JSON, with its failure kind and BFCL's own checker's verdict beside ours."""
    from agentic_eval.classify.turn import read_turn

    checker = bfcl_checker()
    sources = {e["id"]: (e, a) for c in categories for e, a in load_entries(c, root)}
    out = []
    for result in results:
        if result.phase == "live_relevance":
            result = relevance_result(result)
        row = result.to_json()
        row["kind"] = "passed" if result.passed else failure_kind(result.reason)
        last = (result.turns[-1].get("classification") or {}) if result.turns else {}
        if not result.passed and last.get("label") == "text_tool_call":  # also a text call where none was needed
            row["family"] = last.get("family") or "unknown"
        response = result.turns[-1].get("response") if result.turns else None
        if row["kind"] != "error" and isinstance(response, dict):
            entry, answer = sources[result.id]
            row["bfcl_passed"], row["bfcl_error"] = bfcl_verdict(
                checker, entry, answer, result.phase, read_turn(response).structured_calls)
        out.append(row)
    return out


def summarize_bfcl(rows: list[JSON], categories: list[str], limit: int | None) -> JSON:
    """The `--json` output: per category passed / scored / failures by kind / BFCL's checker, then every case."""
    per: dict[str, JSON] = {}
    for category in categories + ["TOTAL"]:
        mine = [r for r in rows if category in (r["phase"], "TOTAL")]
        if not mine:
            continue
        kinds = Counter(r["kind"] for r in mine)
        scored = [r for r in mine if r["kind"] != "error"]
        per[category] = {
            "passed": kinds["passed"], "scored": len(scored), "cases": len(mine), "errors": kinds["error"],
            **{k: kinds[k] for k in FAILURE_KINDS},
            # failed cases whose call was written as text, by family (irrelevance ones included)
            "families": dict(Counter(r["family"] for r in mine if r.get("family")).most_common()),
            "bfcl_checker_passed": sum(bool(r.get("bfcl_passed")) for r in scored),
            "checkers_disagree": sum(bool(r.get("bfcl_passed")) != r["passed"] for r in scored),
        }
    total = per.pop("TOTAL", {"passed": 0, "scored": 0, "cases": 0})
    return {"suite": "bfcl", "bfcl_eval": package_version(), "limit": limit, "categories": per, "total": total,
            "cases": rows}


def headline(summary: JSON) -> Headline:
    """Cases passed of those scored, our score and BFCL's checker's, from `summarize_bfcl`'s output."""
    total = summary["total"]
    pct = round(100 * total["passed"] / total["scored"], 1) if total["scored"] else None
    theirs = round(100 * total["bfcl_checker_passed"] / total["scored"], 1) if total["scored"] else None
    text = (f"{total['passed']}/{total['scored']} ({pct} %; BFCL's checker {theirs} %)" if total["scored"]
            else f"nothing scored ({total['cases']} endpoint errors)")
    return Headline({"passed": total["passed"], "cases": total["scored"], "score_pct": pct,
                     "bfcl_checker_pct": theirs}, text)


def record(summary: JSON, runs_root: Path = Path("runs"), *, base_url: str, model: str,
           categories: list[str]) -> Path:
    """Save the run (`summarize_bfcl`'s output as its result) under `runs_root` for `agentic-eval report` and
    return its folder. `base_url` is the endpoint's own (secrets in it are scrubbed from what is written);
    `model` and `categories` say what was asked (the limit and bfcl-eval's version are in the summary)."""
    shown = headline(summary)
    return save_instrument_run(
        KIND, model=model, base_url=base_url, result=summary, headline=shown.values, headline_text=shown.text,
        settings={"categories": categories, "limit": summary["limit"], "bfcl_eval": summary["bfcl_eval"]},
        runs_root=runs_root)

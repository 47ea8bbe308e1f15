"""One spec, two forms: a generated repo's visible test, and its twin the grader judges (issue 39).

A sandbox generator describes each test it writes as steps (`Bind`, `Check`, `Captured`, `Clock`): from
them it renders the pytest source the model sees (`render_python`) and the twin (`twin`), the same calls and
the same expected values as data, which goes into the task's variables (`twins`) and is judged by the grader
(graders/twincheck.py, through gradelib's `pytest_passes`). Written from one spec, the two cannot drift.

    E("charge", 1020, price_per_1k_cents=25)          a call; E("bucket.capacity", call=False) reads it
    Check(E(...), 26)  Check(E(...), raises="ValueError")  Check(E(...), above=0)
    Bind("bucket", E("TokenBucket", 4, clock=Ref("clock")))   Bind("path", JsonFile({...}))
    Clock("clock", 1000.0)                            a clock the test sets; Clock("clock", 1060.0) again moves it
    Captured(E("main", [...]), 0, out=[Has("port: 8100"), Words(1, ["acme", ...])], err=[Has("not found")])
    Const("LEGACY_BUCKET_SIZE", 42)                   an expected value the visible test names, the twin holds

The visible file is a header (docstring, imports of `imports`, helpers) and the rendered tests; a test takes
the pytest fixtures its steps need (`tmp_path` for a fixture file, `capsys` for captured output).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Ref:
    """A name bound earlier in the test."""

    name: str


@dataclass(frozen=True)
class Const:
    """An expected value: the visible test names the constant, the twin holds its value."""

    name: str
    value: Any


@dataclass(frozen=True)
class JsonFile:
    """A fixture file holding `data` as JSON; the argument is its path."""

    data: Any
    name: str = "settings.json"


@dataclass(frozen=True)
class TextFile:
    text: str
    name: str = "usage.csv"


@dataclass(frozen=True)
class Missing:
    """A path where no file is."""

    name: str = "nope.json"


@dataclass(frozen=True)
class Shipped:
    """A file of the repo, by its path from the repo's root."""

    rel: str


@dataclass(frozen=True)
class E:
    """An expression: `target` called with the arguments (or read, `call=False`)."""

    target: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    call: bool = True
    new: bool = False
    """Node: a constructor (`new Inventory(...)`)."""
    wait: bool = False
    """Node: its value is awaited (`await api.handle(...)`)."""

    def __init__(self, target: str, *args: Any, call: bool = True, new: bool = False, wait: bool = False,
                 **kwargs: Any) -> None:
        object.__setattr__(self, "target", target)
        object.__setattr__(self, "args", args)
        object.__setattr__(self, "kwargs", kwargs)
        object.__setattr__(self, "call", call)
        object.__setattr__(self, "new", new)
        object.__setattr__(self, "wait", wait)


@dataclass(frozen=True)
class Bind:
    name: str
    value: E | JsonFile | TextFile


@dataclass(frozen=True)
class Check:
    expr: E
    returns: Any = None
    raises: str = ""
    above: float | None = None
    note: str = ""
    """A comment the visible test carries at the end of its line."""


@dataclass(frozen=True)
class Has:
    text: str


@dataclass(frozen=True)
class Words:
    line: int
    words: tuple[str, ...]


@dataclass(frozen=True)
class Captured:
    expr: E
    returns: Any
    out: tuple[Has | Words, ...] = ()
    err: tuple[Has | Words, ...] = ()


@dataclass(frozen=True)
class Clock:
    name: str
    now: float


@dataclass(frozen=True)
class Env:
    """Node: set an environment variable of the test's process (None: delete it)."""

    name: str
    value: str | None


Step = Bind | Check | Captured | Clock | Env


@dataclass(frozen=True)
class TestSpec:
    __test__ = False  # not a pytest class

    name: str
    steps: tuple[Step, ...]


# --------------------------------------------------------------------------- the visible test (pytest)


def _py(value: Any) -> str:
    """A value as Python source."""
    if isinstance(value, Ref):
        return value.name
    if isinstance(value, Const):
        return value.name
    if isinstance(value, JsonFile):
        return f"write(tmp_path, {_py(value.name)}, json.dumps({_py(value.data)}))"
    if isinstance(value, TextFile):
        return f"write(tmp_path, {_py(value.name)}, {_py(value.text)})"
    if isinstance(value, Missing):
        return f"str(tmp_path / {_py(value.name)})"
    if isinstance(value, Shipped):
        return f"str(ROOT / {_py(value.rel)})"
    if isinstance(value, E):
        return _expr_py(value)
    if isinstance(value, list):
        return "[" + ", ".join(_py(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + ", ".join(_py(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_py(k)}: {_py(v)}" for k, v in value.items()) + "}"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # "double quotes", as the repo's code is written
    return repr(value)


def _expr_py(expr: E) -> str:
    if not expr.call:
        return expr.target
    args = [_py(a) for a in expr.args] + [f"{k}={_py(v)}" for k, v in expr.kwargs.items()]
    return f"{expr.target}({', '.join(args)})"


def _words(stream: str, check: Has | Words) -> str:
    if isinstance(check, Has):
        return f"assert {_py(check.text)} in captured.{stream}"
    return f"assert captured.{stream}.splitlines()[{check.line}].split() == {_py(list(check.words))}"


def _step_py(step: Step, clocks: set[str]) -> list[str]:
    if isinstance(step, Env):
        raise ValueError("an Env step is for Node tests (render_node)")
    if isinstance(step, Bind):
        return [f"{step.name} = {_py(step.value)}"]
    if isinstance(step, Clock):
        if step.name in clocks:
            return [f"{step.name}.now = {step.now!r}"]
        clocks.add(step.name)
        return [f"{step.name} = FakeClock({step.now!r})"]
    if isinstance(step, Captured):
        return [f"assert {_expr_py(step.expr)} == {_py(step.returns)}", "captured = capsys.readouterr()",
                *(_words("out", c) for c in step.out), *(_words("err", c) for c in step.err)]
    if step.raises:
        return [f"with pytest.raises({step.raises}):", f"    {_expr_py(step.expr)}"]
    if step.above is not None:
        return [f"assert {_expr_py(step.expr)} > {step.above!r}"]
    note = f"  # {step.note}" if step.note else ""
    if isinstance(step.returns, bool):
        return [f"assert {_expr_py(step.expr)} is {step.returns!r}{note}"]
    return [f"assert {_expr_py(step.expr)} == {_py(step.returns)}{note}"]


def _uses(test: TestSpec, kinds: tuple[type, ...]) -> bool:
    seen: list[Any] = [s for s in test.steps]
    while seen:
        item = seen.pop()
        if isinstance(item, kinds):
            return True
        if isinstance(item, (Bind,)):
            seen.append(item.value)
        elif isinstance(item, (Check, Captured)):
            seen.append(item.expr)
        elif isinstance(item, E):
            seen.extend([*item.args, *item.kwargs.values()])
        elif isinstance(item, (list, tuple)):
            seen.extend(item)
        elif isinstance(item, dict):
            seen.extend(item.values())
    return False


def render_python(test: TestSpec) -> str:
    """The pytest function of `test`."""
    fixtures = [name for name, kinds in (("tmp_path", (JsonFile, TextFile, Missing)), ("capsys", (Captured,)))
                if _uses(test, kinds)]
    clocks: set[str] = set()
    body = [line for step in test.steps for line in _step_py(step, clocks)]
    return f"def {test.name}({', '.join(fixtures)}):\n" + "".join(f"    {line}\n" for line in body)


def render_imports(imports: dict[str, str]) -> str:
    """`from module import a, b` lines for the names the tests use (builtins need none)."""
    by_module: dict[str, list[str]] = {}
    for name, module in imports.items():
        if module != "builtins":
            by_module.setdefault(module, []).append(name)
    return "".join(f"from {module} import {', '.join(sorted(names))}\n" for module, names in sorted(by_module.items()))


# --------------------------------------------------------------------------- the twin (data the grader judges)


def _arg(value: Any) -> Any:
    if isinstance(value, Ref):
        return {"$name": value.name}
    if isinstance(value, Const):
        return value.value
    if isinstance(value, JsonFile):
        data = value.data.value if isinstance(value.data, Const) else value.data
        return {"$file": json.dumps(data), "as": value.name}
    if isinstance(value, TextFile):
        return {"$file": value.text, "as": value.name}
    if isinstance(value, Missing):
        return {"$missing": value.name}
    if isinstance(value, Shipped):
        return {"$work": value.rel}
    if isinstance(value, E):
        raise ValueError(f"a twin's argument cannot be a call ({value.target}): bind it first")
    if isinstance(value, (list, tuple)):
        return [_arg(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _arg(v) for k, v in value.items()}
    return value


def _expr(expr: E) -> dict[str, Any]:
    out = {"target": expr.target, "args": [_arg(a) for a in expr.args],
           "kwargs": {k: _arg(v) for k, v in expr.kwargs.items()}, "call": expr.call}
    if expr.new:
        out["new"] = True
    return out


def _text_checks(checks: Sequence[Has | Words]) -> list[list[Any]]:
    return [["has", c.text] if isinstance(c, Has) else ["words", c.line, list(c.words)] for c in checks]


def _twin_step(step: Step) -> dict[str, Any]:
    if isinstance(step, Bind):
        if isinstance(step.value, E):
            return {"do": "bind", "name": step.name, "expr": _expr(step.value)}
        return {"do": "bind", "name": step.name, "value": _arg(step.value)}
    if isinstance(step, Clock):
        return {"do": "clock", "name": step.name, "now": step.now}
    if isinstance(step, Env):
        return {"do": "env", "name": step.name, "value": step.value}
    if isinstance(step, Captured):
        return {"do": "captured", "expr": _expr(step.expr), "expect": ["returns", _arg(step.returns)],
                "out": _text_checks(step.out), "err": _text_checks(step.err)}
    expect = (["raises", step.raises] if step.raises else ["above", step.above] if step.above is not None
              else ["returns", _arg(step.returns)])
    return {"do": "check", "expr": _expr(step.expr), "expect": expect}


def twin(file: str, test: TestSpec, imports: dict[str, str]) -> dict[str, Any]:
    """The twin of `test` (in `file`, with the names `imports` maps to modules) as JSON data."""
    return {"file": file, "name": test.name, "imports": dict(imports), "steps": [_twin_step(s) for s in test.steps]}


def twins_of(file: str, tests: Sequence[TestSpec], imports: dict[str, str]) -> list[dict[str, Any]]:
    return [twin(file, t, imports) for t in tests]


# --------------------------------------------------------------------------- the visible test (node --test)


def js_value(value: Any) -> str:
    """A value as JavaScript source (object keys bare where they are identifiers)."""
    if isinstance(value, (Ref, Const)):
        return value.name
    if isinstance(value, JsonFile):
        return f"write({js_value(value.data)})"
    if isinstance(value, TextFile):
        return f"write({js_value(value.text)})"
    if isinstance(value, E):
        return _expr_js(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(js_value(v) for v in value) + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        keys = [k if isinstance(k, str) and k.isidentifier() else json.dumps(str(k)) for k in value]
        return "{ " + ", ".join(f"{k}: {js_value(v)}" for k, v in zip(keys, value.values(), strict=True)) + " }"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (Missing, Shipped, Has, Words)):
        raise ValueError(f"{type(value).__name__} has no Node form")
    return repr(value)


def _expr_js(expr: E) -> str:
    if expr.kwargs:
        raise ValueError(f"{expr.target}: a Node call has no keyword arguments")
    text = expr.target if not expr.call else f"{expr.target}({', '.join(js_value(a) for a in expr.args)})"
    text = f"new {text}" if expr.new else text
    return f"await {text}" if expr.wait else text


def _step_js(step: Step) -> list[str]:
    if isinstance(step, Env):
        return [f"delete process.env.{step.name};" if step.value is None
                else f"process.env.{step.name} = {js_value(step.value)};"]
    if isinstance(step, Bind):
        return [f"const {step.name} = {js_value(step.value)};"]
    if isinstance(step, Check):
        if step.raises:
            return [f"assert.throws(() => {_expr_js(step.expr)}, {step.raises});"]
        if step.above is not None:
            return [f"assert.ok({_expr_js(step.expr)} > {step.above!r});"]
        plain = step.returns is None or isinstance(step.returns, (Ref, bool, int, float, str))
        return [f"assert.{'equal' if plain else 'deepEqual'}({_expr_js(step.expr)}, {js_value(step.returns)});"]
    raise ValueError(f"a {type(step).__name__} step has no Node form")


def _waits(test: TestSpec) -> bool:
    exprs = [s.value if isinstance(s, Bind) else s.expr for s in test.steps if isinstance(s, (Bind, Check))]
    return any(isinstance(e, E) and e.wait for e in exprs)


def render_node(test: TestSpec) -> str:
    """The `test("...", () => {...})` of `test` for Node's built-in runner (node:assert/strict)."""
    body = "".join(f"  {line}\n" for step in test.steps for line in _step_js(step))
    return f"test({json.dumps(test.name)}, {'async ' if _waits(test) else ''}() => {{\n{body}}});\n"

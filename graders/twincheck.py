"""Twin checks (issue 39): the visible tests of a generated repo, judged in the grader.

A sandbox generator that writes a test also emits its *twin* from the same spec: the same calls with the same
expected values, as plain data in the task's variables (`twins`). gradelib's `pytest_passes` makes a twin's
calls in one process of the model's code, apart from the grader (`make_calls`), and compares what came back
here, so a test run whose report was flipped or rewritten cannot pass a test its twin fails: the report is
evidence, the twin is the verdict, and a report that says "passed" where the twin fails names the test as
forged (`tests_forged`).

A twin (JSON):

    {"file": "tests/test_billing.py", "name": "test_format_money",
     "imports": {"format_money": "pkg.billing", "len": "builtins"},
     "steps": [STEP, ...]}

    STEP  {"do": "bind", "name": N, "expr": EXPR}              keep what EXPR gives as N (it must not raise)
          {"do": "bind", "name": N, "value": ARG}              N stands for ARG (a fixture file's path)
          {"do": "check", "expr": EXPR, "expect": EXPECT}      EXPR must give EXPECT
          {"do": "captured", "expr": EXPR, "expect": EXPECT,   EXPR with stdout and stderr captured; each of
           "out": [TEXT, ...], "err": [TEXT, ...]}              `out`/`err` must hold: ["has", s] or
                                                                ["words", line, [w, ...]] (line `line`, split)
          {"do": "clock", "name": N, "now": t}                 a clock N (a callable giving t); again: set it
    EXPR  {"target": "bucket.allow" | "records[0].client" | "load_settings", "args": [ARG...], "kwargs": {...},
           "call": true | false (read it)}                     the first name: imported or bound
    ARG   plain JSON, or {"$name": N} (bound), {"$file": text, "as": "settings.json"} (a fixture file's path),
          {"$missing": "nope.json"} (a path where no file is), {"$work": "config/settings.json"} (the work copy's)
    EXPECT ["returns", value] (type included) | ["raises", "ValueError"] | ["above", number]
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from gradelib import Call, CallResult, make_calls, ref, scratch_dir, work_dir

_PART = re.compile(r"\.?([A-Za-z_][A-Za-z_0-9]*)|\[(-?\d+)\]")


@dataclass
class TwinOutcome:
    """One twin, judged: `why` is empty when every step came out as its test expects."""

    file: str
    name: str
    why: str = ""

    @property
    def label(self) -> str:
        return f"{self.file}::{self.name}"

    @property
    def passed(self) -> bool:
        return not self.why


@dataclass
class _Batch:
    """The calls of every twin, made in one process: index bookkeeping and what each step must give."""

    calls: list[Call] = field(default_factory=list)
    files: dict[str, str | bytes] = field(default_factory=dict)
    modules: dict[str, int] = field(default_factory=dict)
    judged: list[tuple[int, int, Any, str]] = field(default_factory=list)
    """(twin index, call index, what must come of it, what the step says)"""
    captures: list[tuple[int, int, int, int, list[Any], list[Any], str]] = field(default_factory=list)
    """(twin, result call, stdout getvalue call, stderr getvalue call, out checks, err checks, what)"""

    def add(self, call: Call) -> int:
        self.calls.append(call)
        return len(self.calls) - 1

    def module(self, name: str) -> int:
        if name not in self.modules:  # "@": importlib's, whatever module the batch's process was asked for
            self.modules[name] = self.add(Call("@import_module", [name]))
        return self.modules[name]


def _arg(value: Any, names: dict[str, Any], batch: _Batch, folder: str) -> Any:
    """An argument as the calls carry it: a bound name as a reference, a fixture as its path."""
    if isinstance(value, list):
        return [_arg(v, names, batch, folder) for v in value]
    if isinstance(value, dict):
        if "$name" in value:
            return names[value["$name"]]
        if "$file" in value:
            path = f"{folder}/{value.get('as') or 'fixture'}"
            batch.files[path] = value["$file"]
            return path
        if "$missing" in value:
            return f"{folder}/missing-{secrets.token_hex(3)}-{value['$missing']}"
        if "$work" in value:
            return str(work_dir() / value["$work"])
        return {k: _arg(v, names, batch, folder) for k, v in value.items()}
    return value


def _expr(expr: dict[str, Any], imports: dict[str, str], names: dict[str, Any], batch: _Batch, folder: str) -> int:
    """The calls of one expression; the index of the one whose value it is."""
    target = str(expr["target"])
    first = re.match(r"[A-Za-z_][A-Za-z_0-9]*", target)
    if first is None:
        raise ValueError(f"twin: bad target {target!r}")
    head, rest = first.group(0), target[first.end():]
    parts = [(m.group(1), m.group(2)) for m in _PART.finditer(rest)]
    if head in names and isinstance(names[head], dict):
        base = names[head]["$ref"]
        attr: list[str] = []
    elif head in imports:
        base, attr = batch.module(imports[head]), [head]
    else:
        raise ValueError(f"twin: {head!r} is neither imported nor bound")
    for name, index in parts:
        if name is not None:
            attr.append(name)
            continue
        base = batch.add(Call(f"${base}" + "".join(f".{a}" for a in attr), call=False)) if attr else base
        base, attr = batch.add(Call(f"${base}.__getitem__", [int(index)])), []
    args = [_arg(a, names, batch, folder) for a in expr.get("args") or []]
    kwargs = {k: _arg(v, names, batch, folder) for k, v in dict(expr.get("kwargs") or {}).items()}
    where = f"${base}" + "".join(f".{a}" for a in attr)
    if expr.get("call", True):
        return batch.add(Call(where, args, kwargs))
    return batch.add(Call(where, call=False)) if attr else base


def _plan(twins: Sequence[dict[str, Any]], rename: dict[str, str]) -> _Batch:
    batch = _Batch()
    scratch = scratch_dir()
    for number, twin in enumerate(twins):
        recorded: dict[str, str] = dict(twin.get("imports") or {})
        imports = {k: rename.get(v, v) for k, v in recorded.items()}
        names: dict[str, Any] = {}
        clocks: dict[str, int] = {}
        folder = f"{scratch}/twin-{secrets.token_hex(4)}"
        for step in twin.get("steps") or []:
            kind = step.get("do")
            if kind == "bind" and "value" in step:  # a fixture's path, or a plain value
                names[step["name"]] = _arg(step["value"], names, batch, folder)
            elif kind == "bind":
                names[step["name"]] = ref(_expr(step["expr"], imports, names, batch, folder))
                batch.judged.append((number, names[step["name"]]["$ref"], None, f"{step['name']} = ..."))
            elif kind == "check":
                index = _expr(step["expr"], imports, names, batch, folder)
                batch.judged.append((number, index, step["expect"], step["expr"]["target"]))
            elif kind == "clock":
                now = float(step["now"])
                if step["name"] in clocks:
                    batch.add(Call(f"${clocks[step['name']]}.__setitem__", [0, now]))
                    continue
                time = batch.add(Call(f"${batch.module('builtins')}.list", [[now]]))
                getitem = batch.add(Call(f"${batch.module('operator')}.getitem", call=False))
                clock = batch.add(Call(f"${batch.module('functools')}.partial", [ref(getitem), ref(time), 0]))
                clocks[step["name"]], names[step["name"]] = time, ref(clock)
            elif kind == "captured":
                io, ctx = batch.module("io"), batch.module("contextlib")
                out, err = batch.add(Call(f"${io}.StringIO")), batch.add(Call(f"${io}.StringIO"))
                redirects = [batch.add(Call(f"${ctx}.redirect_stdout", [ref(out)])),
                             batch.add(Call(f"${ctx}.redirect_stderr", [ref(err)]))]
                for r in redirects:
                    batch.add(Call(f"${r}.__enter__"))
                index = _expr(step["expr"], imports, names, batch, folder)
                for r in reversed(redirects):
                    batch.add(Call(f"${r}.__exit__", [None, None, None]))
                got_out, got_err = batch.add(Call(f"${out}.getvalue")), batch.add(Call(f"${err}.getvalue"))
                batch.judged.append((number, index, step["expect"], step["expr"]["target"]))
                batch.captures.append((number, index, got_out, got_err, list(step.get("out") or []),
                                       list(step.get("err") or []), step["expr"]["target"]))
            else:
                raise ValueError(f"twin {twin.get('name')!r}: unknown step {kind!r}")
    return batch


def _meets(result: CallResult, expect: Any, results: Sequence[CallResult] = ()) -> bool:
    if expect is None:
        return result.ok
    kind, value = expect[0], expect[1]
    if kind == "returns":
        return result.returned(value)
    if kind == "raises":
        return result.raised(str(value))
    if kind == "above":
        return result.ok and type(result.value) in (int, float) and result.value > value
    if kind == "same":  # what another call of the batch gave (Node: `assert.equal(orders.get(id), order)`)
        other = results[int(value)]
        return other.ok and not other.unserializable and result.returned(other.value)
    raise ValueError(f"twin: unknown expectation {kind!r}")


def _text_holds(text: Any, check: Sequence[Any]) -> bool:
    if not isinstance(text, str):
        return False
    if check[0] == "has":
        return str(check[1]) in text
    if check[0] == "words":
        lines = text.splitlines()
        line = int(check[1])
        return -len(lines) <= line < len(lines) and lines[line].split() == list(check[2])
    raise ValueError(f"twin: unknown output check {check[0]!r}")


def plan_twins(twins: Sequence[dict[str, Any]], rename: dict[str, str] | None = None) -> _Batch:
    """The calls of every twin, for one process of the model's code (gradelib makes them, alone or after
    a grader's own hidden calls), and what to judge of them."""
    return _plan(twins, dict(rename or {}))


def judge_results(twins: Sequence[dict[str, Any]], batch: _Batch, results: Sequence[CallResult]) -> list[TwinOutcome]:
    """Each twin judged from what its calls gave (`results`, in the batch's order)."""
    outcomes = [TwinOutcome(str(t.get("file") or ""), str(t.get("name") or "")) for t in twins]
    for number, index, expect, what in batch.judged:
        if not outcomes[number].why and not _meets(results[index], expect, results):
            goal = "works" if expect is None else f"{expect[0]} {expect[1]!r}"[:80]
            outcomes[number].why = f"{what} {goal}: {results[index].describe()[:160]}"
    for number, _, out, err, out_checks, err_checks, what in batch.captures:
        if outcomes[number].why:
            continue
        for stream, index, checks in (("stdout", out, out_checks), ("stderr", err, err_checks)):
            text = results[index].value if results[index].ok else None
            bad = [c for c in checks if not _text_holds(text, c)]
            if bad:
                outcomes[number].why = f"{what}: its {stream} lacks {bad[0][1:]!r}: {str(text)[:160]!r}"
                break
    return outcomes


def judge_twins(twins: Sequence[dict[str, Any]], *, rename: dict[str, str] | None = None,
                pythonpath: Sequence[str] = ("src",), timeout: float = 60.0, fresh: bool = False
                ) -> list[TwinOutcome]:
    """Make every twin's calls in one process of the model's code of their own and judge each twin here."""
    if not twins:
        return []
    batch = plan_twins(twins, rename)
    results = make_calls("importlib", batch.calls, pythonpath=pythonpath, timeout=timeout, fresh=fresh,
                         files=batch.files)
    return judge_results(twins, batch, results)


# --------------------------------------------------------------------------- Node twins (`node_tests_pass`)

_NEW, _ENV = "agenticEvalTwinNew", "agenticEvalTwinEnv"
_NODE_HELPERS = (f"export const {_NEW} = (C, ...args) => new C(...args);\n"
                 f"export function {_ENV}(name, value) {{\n"
                 "  if (value === null) delete process.env[name]; else process.env[name] = value;\n  return null;\n}\n")


def _node_expr(expr: dict[str, Any], imports: dict[str, str], names: dict[str, Any], batch: _Batch, folder: str
               ) -> int:
    target = str(expr["target"])
    first = re.match(r"[A-Za-z_$][A-Za-z_0-9$]*", target)
    if first is None:
        raise ValueError(f"twin: bad target {target!r}")
    head, rest = first.group(0), target[first.end():]
    path = "".join(f".{m.group(1)}" if m.group(1) is not None else f".{int(m.group(2))}" for m in _PART.finditer(rest))
    if head in names and isinstance(names[head], dict):
        where = f"${names[head]['$ref']}{path}"
    elif head in imports:
        where = f"m{batch.module(imports[head])}.{head}{path}"
    else:
        raise ValueError(f"twin: {head!r} is neither imported nor bound")
    args = [_arg(a, names, batch, folder) for a in expr.get("args") or []]
    if expr.get("new"):
        return batch.add(Call(_NEW, [ref(batch.add(Call(where, call=False))), *args]))
    return batch.add(Call(where, args, call=bool(expr.get("call", True))))


class _NodeBatch(_Batch):
    """A Node batch: `modules` numbers each imported file (re-exported as m0, m1, ... by the probe module)."""

    def module(self, name: str) -> int:
        return self.modules.setdefault(name, len(self.modules))


def plan_node_twins(twins: Sequence[dict[str, Any]], work: str, scratch: str) -> tuple[str, _Batch]:
    """(the probe module's source, the calls) of Node twins: their imports are files of the work copy
    ("src/pricing.js") at `work`; the calls are made in one node process of the model's code."""
    from pathlib import Path

    batch = _NodeBatch()
    for number, twin in enumerate(twins):
        imports = dict(twin.get("imports") or {})
        names: dict[str, Any] = {}
        folder = f"{scratch}/twin-{secrets.token_hex(4)}"
        for step in twin.get("steps") or []:
            kind = step.get("do")
            if kind == "bind" and "value" in step:
                names[step["name"]] = _arg(step["value"], names, batch, folder)
            elif kind == "bind":
                names[step["name"]] = ref(_node_expr(step["expr"], imports, names, batch, folder))
                batch.judged.append((number, names[step["name"]]["$ref"], None, f"{step['name']} = ..."))
            elif kind == "env":
                batch.add(Call(_ENV, [str(step["name"]), step.get("value")]))
            elif kind == "check":
                index = _node_expr(step["expr"], imports, names, batch, folder)
                expect = list(step["expect"])
                if expect[0] == "returns" and isinstance(expect[1], dict) and list(expect[1]) == ["$name"]:
                    other = {"target": expect[1]["$name"], "call": False}  # a bound value, or a part of one
                    expect = ["same", _node_expr(other, imports, names, batch, folder)]
                batch.judged.append((number, index, expect, step["expr"]["target"]))
            else:
                raise ValueError(f"twin {twin.get('name')!r}: no Node form of step {kind!r}")
    source = "".join(f"export * as m{n} from {json.dumps((Path(work) / rel).as_uri())};\n"
                     for rel, n in batch.modules.items()) + _NODE_HELPERS
    return source, batch


def judge_node_twins(twins: Sequence[dict[str, Any]], *, timeout: float = 60.0, fresh: bool = False,
                     sandbox: Any = None, apart: bool = False) -> list[TwinOutcome]:
    """Make every Node twin's calls in one node process of the model's code and judge each twin here (`fresh`,
    `apart`: as for gradelib.run_apart)."""
    if not twins:
        return []
    source, batch = plan_node_twins(twins, str(work_dir(sandbox)), str(scratch_dir(sandbox)))
    module = f"{scratch_dir(sandbox)}/twins_{secrets.token_hex(4)}.mjs"
    results = make_calls(module, batch.calls, language="node", timeout=timeout, fresh=fresh,
                         files={module: source, **batch.files}, sandbox=sandbox, apart=apart)
    return judge_results(twins, batch, results)

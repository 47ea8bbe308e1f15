"""Module texts no one can predict from our source (issue 39): a random rewrite that keeps a Python module's behaviour.

Mutation testing (graders/mutation.py) runs the model's tests on the grader's module, on an equivalent rewrite and on
mutants. All of those texts are public with our source, so a "test" could read the module and pass only on the
known texts (comments and layout normalised away, which the random stamp line does not survive), or fail wherever
a mutation's known text is found, without testing any behaviour. So every text a run sees is first rewritten here,
with fresh randomness (`secrets.SystemRandom`) each time: the reference, the rewrite and each mutant alike, so that
a mutant differs from the reference only by its mutation behind a disguise of its own. And since a mutation's text
is public, every text of a grade first gets dead copies of every version of each part the grade's texts differ in
(graders/decoys.py; `disguised_all` and `Disguising` see a grade's texts together, grouped by path): each version
occurs once in every text (decoys.K), whichever is live. So neither a list of known texts (or of
their ASTs) nor a search for a mutation's known text, nor a count of it, tells them apart.

    import disguise
    text = disguise.disguised("src/app/money.py", text)   # any other suffix: returned as it was
    texts = disguise.disguised_all([(path, reference), (path, mutant), ...])   # a grade's texts, in one go

The moves, each made at random places with random values (all behaviour-preserving):
- local variables of a function renamed (not its parameters: callers may name them);
- single comparisons mirrored (`a < b` as `b > a`, `x is None` as `None is x`) where no side of them calls anything;
- `if`/`else` and `x if c else y` with the branches swapped and the test negated (`if c: A` as `if not c: pass
  else: A`);
- every constant written another way (`3` as `(7 - 4)` or `(5 ^ 6)`, `"0s"` as `("0" + "s")`, `None` as
  `(None if 1 else 0)`), never in a docstring, an annotation, an f-string's literal parts or a `match` pattern;
- harmless statements inserted in function bodies and at the top level (an unused local, `pass`, a bare number);
- consecutive top-level functions that do not refer to each other at definition time put in another order;
- comments and layout gone (the text is `ast.unparse`'s); a `#!` line is kept.

Each text made is checked before it is used: with its decoys, every function keeps its code flags (generator,
coroutine), cell and free variables and local names (graders/decoys.py; a part whose copies would fail that in one
text gets none in any, and the grader's output says so once); disguised, it compiles, binds the same top-level names,
gives every function the same parameters and keeps every function's code flags. A text that fails the check is made
again; a text that cannot be parsed at all is the grader author's error (RuntimeError).

Closed: a search for a mutation's text and a count of it (tests/test_redteam6_disguise.py). Not closed: telling
the live code from the dead copies, then reading the mutation in it. Measured (redteam7, end to end under bwrap):
- Python at run time, no canonicaliser at all: a live function's own code object holds its live version only (its
  copies are nested code objects, `if 0:` is compiled away, constants folded back, global and attribute names never
  renamed), so `"reversed" not in format_duration.__code__.co_names` is a whole "test" for one mutant: two such
  lines pass core/write-module-from-spec's mutation check on every draw, without a call of the module;
- Python from the text: some 20 lines of `ast` (evaluate each constant `if` test, drop the nested functions never
  named; tests/test_redteam6_disguise.py's strict xfail);
- JavaScript: some 17 lines (the function's text, `Function.prototype.toString` or the file, with every `(() => {`
  ... `})` cut out by brace count, and the constant after a `??` evaluated) pass node/inventory-tests, whose only
  work is the tests.
No dead-code scheme survives a reader in the same process: what runs can be traced (`sys.settrace`, V8's coverage),
and a traceback's line numbers point at the live lines. Only a process boundary (the module answered by another
process, reached by behaviour alone) closes it.

JavaScript modules (.js, .mjs, .cjs) are rewritten by disguise.js with the parser Node bundles (acorn, reached with
`node --expose-internals`): every number and string literal written another way, every value (an argument, an
element, a property's value, an operand, what is returned or assigned) written `(N, value)` or in parentheses,
comparisons of plain operands mirrored, branches swapped, `void N;` statements inserted; comments dropped (one that
only some texts have, a rewrite's note, or one beside a top-level statement's live version, would tell them apart,
as Python's, gone with `ast.unparse`, cannot). Nothing is
renamed (that needs a scope analysis of JavaScript written here), so a canonicaliser has less to undo there than in
Python: dropping the parentheses and the `N, ` and folding the constants gives back the known lines, of the live
version and of each dead copy alike. The decoys are disguise.js's own (the same units: a function's or a method's
body copied into an arrow or `function*` never called, a run of top-level statements into `if (0) { (async () =>
{ ... }); }`); the live version is the one not inside such a wrapper, a structure analysis again. A Node whose
internals moved lends no parser: the grade is then a grader error (unscored), never graded undisguised. All of a
grade's JavaScript texts go to one Node process (`disguised_all`, `Disguising`: a Node start costs more than a text),
each with a seed of its own from fresh randomness and checked on its own, with the group of texts of its path (one
copy of each in the request: the script plans a group's decoys once, before its first text); it writes each text as
soon as it is made, so that a grade's first runs start while its later texts are still being disguised.
"""

from __future__ import annotations

import ast
import json
import random
import secrets
import shutil
import string
import subprocess
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import decoys

PYTHON_SUFFIXES = (".py",)
NODE_SUFFIXES = (".js", ".mjs", ".cjs")
NODE_SCRIPT = Path(__file__).resolve().with_name("disguise.js")
NODE_TIMEOUT_S = 30.0
ATTEMPTS = 8
"""Texts made for one module before a failed check is the grader's error (a failure is a bug here, never luck)."""

_DYNAMIC = frozenset({"locals", "vars", "eval", "exec", "dir", "globals"})
"""Calls that see a function's local names: a function that uses one keeps its names."""


def disguised(path: str, text: str, rng: random.Random | None = None) -> str:
    """`text` rewritten at random keeping its behaviour when `path` is a Python module, else `text` itself."""
    return disguised_all([(path, text)], rng)[0]


def disguised_all(items: Sequence[tuple[str, str]], rng: random.Random | None = None) -> list[str]:
    """`disguised(path, text)` of each (path, text) of `items`, in order, each with fresh randomness of its own and
    checked on its own, and with decoy copies of every version of what the texts of its path differ in (a grade's
    reference, rewrite and mutants: graders/decoys.py): the JavaScript texts all in one Node process (its start
    costs more than a text)."""
    made = Disguising(items, rng)
    try:
        return [made.get(at) for at in range(len(items))]
    finally:
        made.close()


class Disguising:
    """The disguises of `items` ((path, text) pairs, as `disguised_all`, decoys included), made in the background:
    the Python texts here, the JavaScript texts in one Node process started here (the groups of texts first), which
    writes each as soon as it is made, so that the first runs can start while the later texts are disguised.
    `get(at)` waits for one (RuntimeError as `disguised` raises it); `close()` ends the process if it still runs."""

    def __init__(self, items: Sequence[tuple[str, str]], rng: random.Random | None = None) -> None:
        self._rng = rng or secrets.SystemRandom()
        self._items = items
        self._made: dict[int, str] = {}
        self._lock = threading.Lock()
        node = [at for at, (path, _) in enumerate(items) if path.endswith(NODE_SUFFIXES)]
        self._node_at = {at: place for place, at in enumerate(node)}
        self._node = _NodeBatch([items[at] for at in node], self._rng) if node else None
        self._plans = _python_plans(items)  # the decoys of every Python group, while Node starts

    def get(self, at: int) -> str:
        """Text `at` disguised: a Python text made when it is first asked for (a grade's first run need not wait
        for its later texts; their decoys make each some 20 ms), a JavaScript one as the Node process wrote it."""
        with self._lock:
            if at not in self._made:
                path, text = self._items[at]
                if at in self._node_at:
                    assert self._node is not None
                    self._made[at] = self._node.get(self._node_at[at])
                elif path.endswith(PYTHON_SUFFIXES):
                    self._made[at] = disguise_python(text, self._rng, self._plans.get(at))
                else:
                    self._made[at] = text
            return self._made[at]

    def close(self) -> None:
        if self._node is not None:
            self._node.close()


class _NodeBatch:
    """One `node disguise.js` process for `items` ((path, text) pairs), each with a seed of its own and its path's
    group for the decoys; a thread reads its lines."""

    def __init__(self, items: Sequence[tuple[str, str]], rng: random.Random) -> None:
        node = shutil.which("node")
        if node is None:
            raise RuntimeError("no node on PATH to disguise a JavaScript module with")
        self.texts = [text for _, text in items]
        self.deadline = time.monotonic() + NODE_TIMEOUT_S
        self.lines: list[str] = []
        self.done = False
        self.error = ""
        self.changed = threading.Condition()
        groups = _groups(items)
        numbers = {path: number for number, path in enumerate(groups)}
        sent = list(groups.values())
        batch = [{"source": text, "seed": [rng.getrandbits(32) for _ in range(4)],
                  **({"group": numbers[path]} if path in numbers else {})} for path, text in items]
        self.proc = subprocess.Popen([node, "--expose-internals", str(NODE_SCRIPT)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8")
        threading.Thread(target=self._read, daemon=True, name="disguise-node").start()
        assert self.proc.stdin is not None
        try:  # the script reads all of its input before it writes a line: no deadlock
            self.proc.stdin.write(json.dumps({"texts": batch, "groups": sent}))
            self.proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass  # it ended before reading (a Node without the parser): its exit says why

    def _read(self) -> None:
        assert self.proc.stdout is not None and self.proc.stderr is not None
        for line in self.proc.stdout:
            with self.changed:
                self.lines.append(line)
                self.changed.notify_all()
        stderr = self.proc.stderr.read()
        code = self.proc.wait()
        with self.changed:
            if code != 0 and "Cannot find module" in stderr and not self.lines:  # this machine's fault: unscored
                self.error = ("a JavaScript module cannot be disguised: this Node lends no parser (node "
                              "--expose-internals cannot load its bundled acorn); use a Node build that bundles it "
                              "(nodejs.org's)")
            elif code != 0 or len(self.lines) != len(self.texts):
                self.error = (f"disguising JavaScript modules failed (exit {code}, {len(self.lines)} of "
                              f"{len(self.texts)} texts): {stderr[-300:]}")
            self.done = True
            self.changed.notify_all()

    def get(self, place: int) -> str:
        with self.changed:
            while place >= len(self.lines) and not self.done:
                left = self.deadline - time.monotonic()
                if left <= 0:
                    self.close()
                    raise RuntimeError(f"disguising JavaScript modules took over {NODE_TIMEOUT_S:g}s")
                self.changed.wait(left)
            if place >= len(self.lines):
                raise RuntimeError(self.error)
            answer = json.loads(self.lines[place])
        for line in answer.get("dropped", [])[:1]:
            print(f"· a JavaScript module: {str(line)[:300]}", flush=True)
        if "text" in answer:
            return str(answer["text"])
        if answer.get("error") == "parse":
            raise RuntimeError(f"the grader's module text does not parse, so it cannot be disguised: "
                               f"{str(answer.get('message'))[:300]}")
        raise RuntimeError(f"disguising a JavaScript module failed: {str(answer.get('message'))[-300:]}")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()


def _groups(items: Sequence[tuple[str, str]]) -> dict[str, list[str]]:
    """{path: its distinct texts, in order} for each path of `items` that holds more than one: the groups that get
    decoys (a lone text has nothing to hide among)."""
    groups: dict[str, list[str]] = {}
    for path, text in items:
        if text not in groups.setdefault(path, []):
            groups[path].append(text)
    return {path: texts for path, texts in groups.items() if len(texts) > 1}


def _python_plans(items: Sequence[tuple[str, str]]) -> dict[int, tuple[list[decoys.Unit], int]]:
    """For each Python text of `items` whose path holds other texts too: its group's decoy units and its index in
    them (graders/decoys.py). A group's unit whose copies cannot be placed is dropped for all of it, said once."""
    plans: dict[int, tuple[list[decoys.Unit], int]] = {}
    for path, texts in _groups([item for item in items if item[0].endswith(PYTHON_SUFFIXES)]).items():
        try:
            units, dropped = decoys.plan(texts, _renamable)
        except (SyntaxError, ValueError):
            continue  # a text that does not parse: disguise_python says so
        for line in dropped[:1]:
            print(f"· {path}: {line}", flush=True)
        for at, (where, text) in enumerate(items):
            if where == path:
                plans[at] = (units, texts.index(text))
    return plans


def disguise_python(text: str, rng: random.Random | None = None,
                    plan: tuple[list[decoys.Unit], int] | None = None) -> str:
    """A random behaviour-preserving rewrite of the Python module `text` (fresh randomness unless `rng` is given),
    with the decoy copies of `plan` (its group's units, its index in them) put in first."""
    rng = rng or secrets.SystemRandom()
    head = text.partition("\n")[0] + "\n" if text.startswith("#!") else ""
    try:
        ast.parse(text)
    except (SyntaxError, ValueError) as exc:
        raise RuntimeError(f"the grader's module text does not parse, so it cannot be disguised: {exc}") from exc
    problem = ""
    for _ in range(ATTEMPTS):
        tree = ast.parse(text)
        marks = decoys.insert(tree, *plan, rng) if plan and plan[0] else decoys.Marks()
        decoyed = ast.unparse(tree)
        if plan and plan[0]:
            problem = decoys.checked(text, decoyed, marks.decoy_names)
            if problem:
                continue
        skip = frozenset(marks.decoy_names)
        shape, flags = _shape(tree, skip), decoys.flags(decoyed)
        _Rewrite(rng, marks).visit(tree)
        _reorder_functions(tree, rng)
        ast.fix_missing_locations(tree)
        made = head + ast.unparse(tree) + "\n"
        problem = _check(made, shape, skip) or ("a function's code flags differ" if decoys.flags(made) != flags else "")
        if not problem:
            return made
    raise RuntimeError(f"disguising a module failed its own check {ATTEMPTS} times: {problem}")


# --------------------------------------------------------------------------- the check

def _shape(tree: ast.Module, skip: frozenset[str] = frozenset()
           ) -> tuple[frozenset[str], tuple[tuple[str, str], ...]]:
    """The module's top-level names, and each function's (name, parameters): what a rewrite must keep (not the
    functions named in `skip`: decoys, whose parameters are renamed with the function that holds them)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).partition(".")[0] for a in node.names)
        else:
            names.update(_bound_here(node))
    functions = sorted((f.name, ast.dump(ast.arguments(
        posonlyargs=[ast.arg(a.arg) for a in f.args.posonlyargs], args=[ast.arg(a.arg) for a in f.args.args],
        vararg=f.args.vararg and ast.arg(f.args.vararg.arg), kwonlyargs=[ast.arg(a.arg) for a in f.args.kwonlyargs],
        kw_defaults=[], kwarg=f.args.kwarg and ast.arg(f.args.kwarg.arg), defaults=[])))
        for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.name not in skip)
    return frozenset(names), tuple(functions)


def _bound_here(node: ast.AST) -> Iterator[str]:
    """The names a top-level statement binds in the module's own scope (not in a comprehension, lambda or
    definition inside it: a decoy's `if 0:` may hold whole functions)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield child.name
        elif isinstance(child, (ast.Import, ast.ImportFrom)):
            yield from ((a.asname or a.name).partition(".")[0] for a in child.names)
        elif isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
            yield child.id
        elif isinstance(child, ast.NamedExpr) or not isinstance(child, (ast.ListComp, ast.SetComp, ast.DictComp,
                                                                         ast.GeneratorExp, ast.Lambda)):
            yield from _bound_here(child)


def _check(made: str, shape: tuple[frozenset[str], tuple[tuple[str, str], ...]], skip: frozenset[str] = frozenset()
           ) -> str:
    """Why the rewritten text `made` is not fit to stand for the module ("" when it is)."""
    try:
        compile(made, "<disguised>", "exec", dont_inherit=True)
        tree = ast.parse(made)
    except (SyntaxError, ValueError) as exc:
        return f"it does not compile: {exc}"
    got = _shape(tree, skip)
    if got[0] != shape[0]:
        return f"its top-level names differ: {sorted(got[0] ^ shape[0])}"
    if got[1] != shape[1]:
        return "a function's parameters differ"
    return ""


# --------------------------------------------------------------------------- the moves

def _number(rng: random.Random) -> int:
    return rng.randint(2, 9999)


def _calls_anything(node: ast.AST) -> bool:
    return any(isinstance(n, (ast.Call, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)) for n in ast.walk(node))


_MIRRORED: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.Gt, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.GtE: ast.LtE, ast.Eq: ast.Eq, ast.NotEq: ast.NotEq,
    ast.Is: ast.Is, ast.IsNot: ast.IsNot}


class _Rewrite(ast.NodeTransformer):
    """Every move but the reordering, each site with even odds."""

    def __init__(self, rng: random.Random, marks: decoys.Marks | None = None) -> None:
        self.rng = rng
        self.taken: set[str] = set()
        self.marks = marks or decoys.Marks()

    def chance(self, odds: float = 0.5) -> bool:
        return self.rng.random() < odds

    # ---- names and statements
    def visit_Module(self, node: ast.Module) -> ast.AST:
        self.taken = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | \
            {n.arg for n in ast.walk(node) if isinstance(n, ast.arg)} | \
            {n.name for n in ast.walk(node) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        self.generic_visit(node)
        start = decoys.after_preamble(node.body)
        for _ in range(self.rng.randint(1, 3)):  # a bare number or a pass: binds no name
            filler: ast.stmt = ast.Expr(ast.Constant(_number(self.rng))) if self.chance() else ast.Pass()
            node.body.insert(self.rng.randint(start, len(node.body)), filler)
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        return self._function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AST:
        return self._function(node)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:
        returns, node.returns = node.returns, None  # annotations are left as they are (dataclasses read them)
        self.generic_visit(node)
        node.returns = returns
        if id(node) not in self.marks.decoys:  # a decoy's names go with the function that holds it
            _rename_locals(node, self.rng, self.taken, self.marks.rename.get(id(node)))
        start = decoys.after_preamble(node.body, module=False)
        for _ in range(self.rng.randint(1, 2)):
            filler: ast.stmt = ast.Pass() if self.chance(0.3) else ast.Assign(
                [ast.Name(decoys.fresh_name(self.rng, self.taken), ast.Store())], ast.Constant(_number(self.rng)))
            node.body.insert(self.rng.randint(start, len(node.body)), filler)
        return node

    def visit_If(self, node: ast.If) -> ast.AST:
        self.generic_visit(node)
        if node.orelse and self.chance():
            return ast.If(ast.UnaryOp(ast.Not(), node.test), node.orelse, node.body)
        if not node.orelse and self.chance(0.3):
            return ast.If(ast.UnaryOp(ast.Not(), node.test), [ast.Pass()], node.body)
        return node

    def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
        self.generic_visit(node)
        if self.chance():
            return ast.IfExp(ast.UnaryOp(ast.Not(), node.test), node.orelse, node.body)
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        op = type(node.ops[0])
        if len(node.ops) == 1 and op in _MIRRORED and not _calls_anything(node) and self.chance():
            return ast.Compare(node.comparators[0], [_MIRRORED[op]()], [node.left])
        return node

    # ---- constants (docstrings, f-strings' literal parts and match patterns are never visited)
    def visit_Expr(self, node: ast.Expr) -> ast.AST:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return node  # a docstring, or a bare string: left as it is
        self.generic_visit(node)
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        if node.value is not None:
            node.value = self.visit(node.value)
        return node

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        for part in node.values:
            if isinstance(part, ast.FormattedValue):
                part.value = self.visit(part.value)
        return node

    def visit_match_case(self, node: ast.match_case) -> ast.AST:
        if node.guard is not None:
            node.guard = self.visit(node.guard)
        node.body = [self.visit(s) for s in node.body]
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        # Every one, so that no line holding a constant is ever written as in our source.
        return _written_otherwise(node.value, self.rng)


def _written_otherwise(value: object, rng: random.Random) -> ast.expr:
    """An expression that evaluates to the constant `value`, with random parts: a number as a sum, a difference or an
    xor; a string or bytes cut in two and joined; anything (and sometimes those too) as `(value if K else J)`."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 1 << 62 and rng.random() < 0.8:
        key = _number(rng)
        kind = rng.choice(("add", "sub", "xor"))
        if kind == "add" and value >= key:
            return ast.BinOp(ast.Constant(value - key), ast.Add(), ast.Constant(key))
        if kind == "xor" and value >= 0:
            return ast.BinOp(ast.Constant(value ^ key), ast.BitXor(), ast.Constant(key))
        return ast.BinOp(ast.Constant(value + key), ast.Sub(), ast.Constant(key))
    if isinstance(value, (str, bytes)) and len(value) >= 2 and rng.random() < 0.8:
        cut = rng.randint(1, len(value) - 1)
        return ast.BinOp(ast.Constant(value[:cut]), ast.Add(), ast.Constant(value[cut:]))
    other = ast.Constant(_number(rng) if rng.random() < 0.5 else "".join(rng.choices(string.ascii_letters, k=3)))
    return ast.IfExp(ast.Constant(_number(rng)), ast.Constant(value), other)  # type: ignore[arg-type]


def _nested(node: ast.AST) -> Iterator[ast.AST]:
    """What lies inside a function, its own node left out."""
    for child in ast.iter_child_nodes(node):
        yield from ast.walk(child)


def _rename_locals(function: ast.FunctionDef | ast.AsyncFunctionDef, rng: random.Random, taken: set[str],
                   forced: frozenset[str] | None = None) -> None:
    """Give the function's local variables (not its parameters) new names (`forced`: these names, in its decoys'
    parameters too, as graders/decoys.py worked out for every version of its body)."""
    old = _renamable(function) if forced is None else forced
    if not old:
        return
    inside = list(_nested(function))
    names = {name: decoys.fresh_name(rng, taken) for name in sorted(old)}
    for n in inside:
        if isinstance(n, ast.Name) and n.id in names:
            n.id = names[n.id]
        elif isinstance(n, ast.ExceptHandler) and n.name in names:
            n.name = names[n.name]
        elif isinstance(n, ast.arg) and forced is not None and n.arg in names:
            n.arg = names[n.arg]


def _renamable(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str] | None:
    """The function's local variables that may take new names (not its parameters); None when it has closures,
    scope declarations, imports, `match` or calls that see local names."""
    inside = list(_nested(function))
    if any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.Global,
                          ast.Nonlocal, ast.Import, ast.ImportFrom, ast.Match)) for n in inside) or \
            any(isinstance(n, ast.Name) and n.id in _DYNAMIC for n in inside):
        return None
    args = function.args
    params = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, *filter(None, (args.vararg,
                                                                                           args.kwarg))]}
    comprehensions = [n for n in inside if isinstance(n, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp))]
    bound_by: list[tuple[set[str], set[int]]] = []  # per comprehension: its own names, where they mean its own
    in_targets: set[int] = set()
    for comp in comprehensions:
        targets = {id(n) for g in comp.generators for n in ast.walk(g.target)}
        in_targets |= targets
        outer = {id(n) for n in ast.walk(comp.generators[0].iter)}  # evaluated in the function's own scope
        bound_by.append(({n.id for g in comp.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)},
                         {id(n) for n in ast.walk(comp)} - outer))
    names_here = [n for n in inside if isinstance(n, ast.Name)]
    local = {n.id for n in names_here if isinstance(n.ctx, (ast.Store, ast.Del)) and id(n) not in in_targets}
    local |= {n.name for n in inside if isinstance(n, ast.ExceptHandler) and n.name}
    # A comprehension's own variable, where every use of that name in the function is inside a comprehension
    # that binds it (else the same name elsewhere is a global's, and must stay).
    own = {name for names, _ in bound_by for name in names} - local - params
    own = {name for name in own if all(any(name in names and id(n) in region for names, region in bound_by)
                                        for n in names_here if n.id == name)}
    return {old for old in (local - params) | own if old != "__class__"}


def _reorder_functions(tree: ast.Module, rng: random.Random) -> None:
    """Shuffle each run of consecutive top-level functions without decorators whose defaults and annotations name
    none of the run's functions (they are evaluated at definition time)."""
    body, start = tree.body, 0
    while start < len(body):
        end = start
        while end < len(body) and isinstance(body[end], (ast.FunctionDef, ast.AsyncFunctionDef)) \
                and not body[end].decorator_list:  # type: ignore[attr-defined]
            end += 1
        run = body[start:end]
        defined = [f.name for f in run]  # type: ignore[attr-defined]
        if len(run) > 1 and len(set(defined)) == len(defined) and not any(
                isinstance(n, ast.Name) and n.id in defined for f in run for n in _definition_time(f)):
            rng.shuffle(run)
            body[start:end] = run
        start = end + 1


def _definition_time(function: ast.stmt) -> Iterator[ast.AST]:
    """What a `def` evaluates when it runs: its defaults and annotations."""
    assert isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
    args = function.args
    for part in [*args.defaults, *filter(None, args.kw_defaults), function.returns,
                 *(a.annotation for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
                   if a is not None)]:
        if part is not None:
            yield from ast.walk(part)

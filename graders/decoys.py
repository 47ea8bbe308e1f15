"""Decoy copies with matched counts for a grade's Python texts (graders/disguise.py uses it; the hole redteam6 found).

Mutation grading runs the model's tests on the reference, a rewrite and public mutants. A "test" that greps the
module for what a mutant adds or takes away (`reversed`, `<=`, counting `line.qty`) tells them apart however each
text is disguised. So before a text is disguised, every part in which the grade's texts differ gets dead copies of
every version of that part, the text's own included, in numbers drawn so that each version occurs T times in every
text, T uniform on 1..K drawn afresh for each version and text, whichever version is the live one (K is 1: once). A
search for any version's text, or a count of it, then comes out alike on the reference, the rewrite and each mutant.
What is left is telling dead code from live code: a structure analysis of the text, or, in Python, one look at
the live function's own code object (its copies are nested code objects; `if 0:` is compiled away), as
graders/disguise.py says.

Units (found across the group, texts aligned statement by statement with difflib):
- a function (top level or a method) whose header is the same in every text and whose body differs: a version is a
  body; a copy is a nested `def _<random>(<the function's parameters and every version's locals>):` holding it,
  never called, at a random place in the live body (after the docstring). Nested, so nothing it assigns makes an
  outer name local, and its `yield`/`await` stay its own (`async def` inside an `async def`); every name the copy
  uses that the function binds is a parameter of the copy, so the live function's locals never become cells;
- a run of module-level (or class-level) statements that differ (a changed header counts as a statement): a
  version is that run; a copy is `if 0:` around it at a random place of the same body: it binds nothing.
The live version goes one level down too, in an `if 1:` (a body's after its docstring; an empty one as `if 1:
pass`, as its copies are `if 0: pass`), so that it is written at the depth of its copies and every text has one
block per copy: no indentation or count of blocks tells them apart; only the block's test does (structure).

Each text's copies are checked (`checked`): it compiles, and every function of the text keeps its code flags
(generator, coroutine), cell and free variables and local names (but the copies' own names). A unit whose copies
cannot be placed in one of the texts is dropped for every text of the group (never in one text only: that would
be a tell), and the grader's output says so once.

    plan = decoys.plan(texts, renamable)         # texts: the group's texts (one path); renamable: disguise's rule
    tree = ast.parse(texts[i]); marks = decoys.insert(tree, plan, i, rng)
"""

from __future__ import annotations

import ast
import copy
import difflib
import random
import string
import symtable
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import CodeType

K = 1
"""Each version occurs T times in every text, T uniform on 1..K (the live version is one of its own T). 1: every
version exactly once in every text, so that a count of any text is equal on all of them, not only alike in
distribution; a larger K adds nothing against a structure analysis (what is left) and makes the texts longer (K = 3
made a grade's Python disguise 0.2 s, about half of the mutation grades' time over the goal of issue 39)."""

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_FLAGS = 0x20 | 0x80 | 0x100 | 0x200  # generator, coroutine, iterable coroutine, async generator

Renamable = Callable[[ast.FunctionDef | ast.AsyncFunctionDef], "set[str] | None"]


@dataclass
class Unit:
    """A part in which the group's texts differ: `where[i]` locates it in text i (the indices of the classes down
    to its level, then the function's index for a body unit), `live[i]` is the index of text i's version."""

    body: bool
    where: list[tuple[int, ...]]
    live: list[int]
    versions: list[list[ast.stmt]]
    params: list[str] = field(default_factory=list)
    rename: frozenset[str] = frozenset()
    is_async: bool = False
    spans: list[tuple[int, int]] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.sources = [ast.unparse(ast.Module(list(version), [])) for version in self.versions]


@dataclass
class Marks:
    """What `insert` put in a tree, for the disguise: the copies' functions (ids of their nodes) and, per function
    holding copies (id of its node), the names to rename throughout it, copies included."""

    decoys: set[int] = field(default_factory=set)
    decoy_names: set[str] = field(default_factory=set)
    rename: dict[int, frozenset[str]] = field(default_factory=dict)


def _key(node: ast.stmt) -> str:
    if isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
        return f"def {type(node).__name__} {node.name}"
    return ast.dump(node)


def _header(node: ast.stmt) -> str:
    bare = copy.copy(node)
    bare.body = []  # type: ignore[attr-defined]
    return ast.dump(bare)


def _dump(body: Sequence[ast.stmt]) -> str:
    return "\n".join(ast.dump(s) for s in body)


def plan(texts: Sequence[str], renamable: Renamable) -> tuple[list[Unit], list[str]]:
    """The units of the group `texts` (each text's index in `texts` is its index in every unit), and a line for
    each unit dropped because its copies could not be placed in every text."""
    trees = [ast.parse(text) for text in texts]
    units: list[Unit] = []
    if len(trees) > 1:
        _level([t.body for t in trees], [() for _ in trees], units)
    for unit in units:
        if unit.body:
            _fill_function(unit, trees, renamable)
    if all(not _fits(text, units, i) for i, text in enumerate(texts)):
        return units, []
    kept, dropped = [], []
    for unit in units:  # one that fails: each on its own, to keep the others
        problem = next((p for i, text in enumerate(texts) if (p := _fits(text, [unit], i))), "")
        if problem:
            dropped.append(problem)
        else:
            kept.append(unit)
    return kept, dropped


def _level(bodies: list[list[ast.stmt]], where: list[tuple[int, ...]], units: list[Unit]) -> None:
    base = [_key(s) for s in bodies[0]]
    spans: list[tuple[int, int]] = []
    aligned: list[dict[int, int]] = []
    opcodes = []
    for body in bodies:
        codes = difflib.SequenceMatcher(None, base, [_key(s) for s in body], autojunk=False).get_opcodes()
        opcodes.append(codes)
        aligned.append({i: j1 + i - i1 for tag, i1, i2, j1, _ in codes if tag == "equal" for i in range(i1, i2)})
        spans.extend((i1, i2) for tag, i1, i2, _, _ in codes if tag != "equal")
    for i, node in enumerate(bodies[0]):
        if not isinstance(node, (*_FUNCTIONS, ast.ClassDef)) or not all(i in a for a in aligned):
            continue
        same = [bodies[t][a[i]] for t, a in enumerate(aligned)]
        if len({_header(s) for s in same}) > 1:
            spans.append((i, i + 1))
        elif len({_dump(s.body) for s in same}) > 1:  # type: ignore[attr-defined]
            if isinstance(node, ast.ClassDef):
                _level([s.body for s in same], [w + (a[i],) for w, a in zip(where, aligned)], units)  # type: ignore[attr-defined]
            else:
                versions, live = _versions([s.body for s in same])  # type: ignore[attr-defined]
                units.append(Unit(True, [w + (a[i],) for w, a in zip(where, aligned)], live, versions,
                                  is_async=isinstance(node, ast.AsyncFunctionDef)))
    merged: list[list[int]] = []
    for start, end in sorted(spans):  # overlapping ones, and an insertion with what it touches
        if merged and (start < merged[-1][1] or start == merged[-1][1] and start in (end, merged[-1][0])):
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    for start, end in merged:
        spans = [(_to(codes, start, len(body), False), _to(codes, end, len(body), True))
                 for body, codes in zip(bodies, opcodes)]
        runs = [body[j1:j2] for body, (j1, j2) in zip(bodies, spans)]
        if len({_dump(r) for r in runs}) > 1:
            versions, live = _versions(runs)
            units.append(Unit(False, list(where), live, versions, spans=spans))


def _to(codes: Sequence[tuple[str, int, int, int, int]], at: int, size: int, end: bool) -> int:
    """Where the base's statement boundary `at` falls in another text (a unit's start, or its `end`)."""
    equal = [(i1, i2, j1) for tag, i1, i2, j1, _ in codes if tag == "equal"]
    for i1, i2, j1 in equal:
        if (i1 <= at < i2) if end else (i1 < at <= i2):
            return j1 + at - i1
    if end:  # an insertion right there is the unit's (merged with it); else where the equal run before it ends
        added = [j2 for tag, i1, i2, _, j2 in codes if tag != "equal" and i1 == i2 == at]
        if added:
            return added[-1]
    for i1, i2, j1 in equal:
        if at == (i2 if end else i1):
            return j1 + at - i1
    return size if end else 0


def _versions(runs: list[list[ast.stmt]]) -> tuple[list[list[ast.stmt]], list[int]]:
    seen: dict[str, int] = {}
    versions: list[list[ast.stmt]] = []
    for run in runs:
        if _dump(run) not in seen:
            seen[_dump(run)] = len(versions)
            versions.append(run)
    return versions, [seen[_dump(run)] for run in runs]


def _located(tree: ast.Module, where: tuple[int, ...], body: bool) -> tuple[list[ast.stmt], ast.stmt | None]:
    """The body holding the unit (a level's statements, or the function's) and the function, if a body unit."""
    level: list[ast.stmt] = tree.body
    for at in where[:-1] if body else where:
        level = level[at].body  # type: ignore[attr-defined]
    if not body:
        return level, None
    function = level[where[-1]]
    return function.body, function  # type: ignore[attr-defined]


def _fill_function(unit: Unit, trees: list[ast.Module], renamable: Renamable) -> None:
    """A body unit's copies' parameters (the function's and every version's locals) and the names renamed
    throughout the function in every text (what each version may rename, but a name some version uses otherwise)."""
    _, function = _located(trees[0], unit.where[0], True)
    assert isinstance(function, _FUNCTIONS)
    args = function.args
    params = [a.arg for a in [*args.posonlyargs, *args.args, *filter(None, [args.vararg]), *args.kwonlyargs,
                              *filter(None, [args.kwarg])]]
    own: set[str] = set()
    sets: list[set[str] | None] = []
    for version in unit.versions:
        made = type(function)(name="f", args=args, body=version, decorator_list=[], returns=None,
                              type_comment=None)
        ast.fix_missing_locations(made)
        table = symtable.symtable(ast.unparse(ast.Module([made], [])), "<version>", "exec").get_children()[0]
        own |= {s.get_name() for s in table.get_symbols() if s.is_local() and not s.is_global()}
        sets.append(renamable(made))
    unit.params = params + sorted(own - set(params) - {"__class__"})
    if any(s is None for s in sets):
        return
    union = set().union(*[s for s in sets if s is not None])
    bad = {n.id for version, s in zip(unit.versions, sets) for stmt in version for n in ast.walk(stmt)
           if isinstance(n, ast.Name) and n.id in union and s is not None and n.id not in s}
    unit.rename = frozenset(union - bad)


def fresh_name(rng: random.Random, taken: set[str]) -> str:
    """A name not in `taken` (added to it): a copy's, and every local the disguise renames (one way of drawing)."""
    while True:
        name = "_" + "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 8)))
        if name not in taken:
            taken.add(name)
            return name


def _copy(unit: Unit, version: int, rng: random.Random, taken: set[str], marks: Marks) -> ast.stmt:
    body = ast.parse(unit.sources[version]).body or [ast.Pass()]  # faster than a deep copy
    if not unit.body:
        return ast.If(ast.Constant(0), body, [])
    kind = ast.AsyncFunctionDef if unit.is_async else ast.FunctionDef
    name = fresh_name(rng, taken)
    made = kind(name=name, args=ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in unit.params], vararg=None,
                                              kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
                body=body, decorator_list=[], returns=None, type_comment=None)
    marks.decoys.add(id(made))
    marks.decoy_names.add(name)
    return made


def insert(tree: ast.Module, units: Sequence[Unit], at: int, rng: random.Random,
           only: Sequence[int] | None = None) -> Marks:
    """Put text `at`'s copies of `units` in its `tree` (in place), each version T times in all (T drawn here for each),
    at random places (`only`: one copy of each version instead, for the check)."""
    marks = Marks()
    taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | \
        {n.name for n in ast.walk(tree) if isinstance(n, (*_FUNCTIONS, ast.ClassDef))}
    located = [_located(tree, unit.where[at], unit.body) for unit in units]
    # The live version goes one level down too (in `if 1:`), where its copies are: no indentation tells them apart;
    # an empty one is `if 1: pass`, so that every text has as many blocks as copies of versions (the live one's too).
    for unit, (body, _) in sorted(zip(units, located), key=lambda u: -u[0].spans[at][0] if u[0].spans else 0):
        start, end = unit.spans[at] if unit.spans else (0, len(body))
        start = max(start, after_preamble(body, tree.body is body and start == end))
        body[start:max(start, end)] = [ast.If(ast.Constant(1), body[start:end] or [ast.Pass()], [])]
    for unit, (body, function) in zip(units, located):
        copies = []
        for version in range(len(unit.versions)):
            times = 1 if only is not None else rng.randint(1, K)
            if only is None and version == unit.live[at]:
                times -= 1
            copies += [_copy(unit, version, rng, taken, marks) for _ in range(times)]
        if function is not None and unit.body:
            marks.rename[id(function)] = unit.rename
        start = after_preamble(body, tree.body is body)
        for made in copies:
            body.insert(rng.randint(start, len(body)), made)
    ast.fix_missing_locations(tree)
    return marks


def after_preamble(body: list[ast.stmt], module: bool = True) -> int:
    """The first place a statement may go in `body`: after its docstring and, in a module, its `from __future__`
    imports (the copies here and the disguise's fillers alike)."""
    at = 1 if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
        and isinstance(body[0].value.value, str) else 0
    while module and at < len(body) and isinstance(body[at], ast.ImportFrom) and body[at].module == "__future__":  # type: ignore[attr-defined]
        at += 1
    return at


def _fits(text: str, units: Sequence[Unit], at: int) -> str:
    """Why one copy of each version of `units` cannot go in `text` ("" when they can)."""
    tree = ast.parse(text)
    marks = insert(tree, units, at, random.Random(0), only=[])
    problem = checked(text, ast.unparse(tree), marks.decoy_names)
    return f"a part that differs between the texts gets no decoys: {problem}" if problem else ""


def _codes(code: CodeType) -> list[CodeType]:
    found = [code]
    for const in code.co_consts:
        if isinstance(const, CodeType):
            found += _codes(const)
    return found


def checked(original: str, made: str, decoy_names: set[str]) -> str:
    """Why `made` (`original` with copies) is not fit to stand for it ("" when it is): every function of the
    original keeps its code flags, cell and free variables and local names (the copies' own names aside)."""
    try:
        codes = _codes(compile(made, "<decoyed>", "exec", dont_inherit=True))
    except (SyntaxError, ValueError) as exc:
        return f"it does not compile: {exc}"
    for code in _codes(compile(original, "<original>", "exec", dont_inherit=True)):
        if not any(_same(code, other, decoy_names) for other in codes if other.co_qualname == code.co_qualname):
            return f"{code.co_qualname} would change"
    return ""


def _same(code: CodeType, other: CodeType, decoy_names: set[str]) -> bool:
    return (code.co_flags & _FLAGS == other.co_flags & _FLAGS and code.co_cellvars == other.co_cellvars
            and code.co_freevars == other.co_freevars
            and set(code.co_varnames) == set(other.co_varnames) - decoy_names)


def flags(text: str) -> list[tuple[str, int]]:
    """Each function's qualified name and code flags (generator, coroutine), sorted: what a disguise must keep."""
    return sorted((c.co_qualname, c.co_flags & _FLAGS) for c in _codes(compile(text, "<made>", "exec",
                                                                                dont_inherit=True)))

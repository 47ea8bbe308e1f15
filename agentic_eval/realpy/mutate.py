"""Bug kinds planted in real Python code: pure, ast-based, deterministic (issue 43).

`sites(source, path)` lists every place in a module where a kind applies, in source order, each with an id
(`kind:path:line:col:variant`) that names it for good; `apply(source, site)` returns the module with that one
change spliced into the text (the rest of the file byte for byte, comments and layout kept). Only code inside
functions is touched (a module that fails to import is not a bug report, it is a crash).

Kinds (KINDS):
    compare         a comparison flipped: < <=, > >=, == !=, is / is not, in / not in; or turned round: < >, <= >=
    boolop          `and` <-> `or`
    off_by_one      a slice bound one further or one short (`x[:n]` -> `x[:n + 1]`, `x[:n - 1]`), a range's
                    stop one short
    dropped_branch  an `if` without `else` (a guard, an early return) removed
    swapped_args    a call's first two positional arguments swapped
    wrong_default   a parameter's default changed (True <-> False, an int one up)
    removed_call    a statement that is only a call removed (`items.append(x)`, `self._reset()`)
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

KINDS = ("compare", "boolop", "off_by_one", "dropped_branch", "swapped_args", "wrong_default", "removed_call")

_FLIP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In,
}

_MIRROR: dict[type[ast.cmpop], type[ast.cmpop]] = {ast.Lt: ast.Gt, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.GtE: ast.LtE}


@dataclass(frozen=True)
class Site:
    """One change: replace the text from (line, col) to (end_line, end_col) (1-based lines, UTF-8 byte columns,
    as ast gives them) with `new`."""

    kind: str
    path: str
    line: int
    col: int
    end_line: int
    end_col: int
    new: str
    variant: str = ""

    @property
    def id(self) -> str:
        return f"{self.kind}:{self.path}:{self.line}:{self.col}:{self.variant}"


def _site(kind: str, path: str, node: ast.AST, new: str, variant: str = "") -> Site:
    return Site(kind, path, node.lineno, node.col_offset,  # type: ignore[attr-defined]
                node.end_lineno or node.lineno, node.end_col_offset or 0, new, variant)  # type: ignore[attr-defined]


def _expr(node: ast.expr) -> str:
    return "(" + ast.unparse(node) + ")"


def _in_functions(tree: ast.Module) -> Iterator[ast.AST]:
    """Every node inside a function body (nested ones included), each once."""
    seen: set[int] = set()
    for top in ast.walk(tree):
        if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for stmt in top.body:
                for node in ast.walk(stmt):
                    if id(node) not in seen:
                        seen.add(id(node))
                        yield node


def _elifs(tree: ast.Module) -> set[int]:
    return {id(n.orelse[0]) for n in ast.walk(tree)
            if isinstance(n, ast.If) and len(n.orelse) == 1 and isinstance(n.orelse[0], ast.If)}


def sites(source: str, path: str) -> list[Site]:
    """Every site of every kind in `source` (the module at repo-relative `path`), in a fixed order."""
    tree = ast.parse(source)
    elifs = _elifs(tree)
    found: list[Site] = []
    for node in _in_functions(tree):
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _FLIP:
            new = ast.Compare(node.left, [_FLIP[type(node.ops[0])]()], node.comparators)
            found.append(_site("compare", path, node, _expr(new)))
            if type(node.ops[0]) in _MIRROR:  # the other direction: a < b -> a > b
                new = ast.Compare(node.left, [_MIRROR[type(node.ops[0])]()], node.comparators)
                found.append(_site("compare", path, node, _expr(new), "mirror"))
        elif isinstance(node, ast.BoolOp):
            new_op: ast.boolop = ast.Or() if isinstance(node.op, ast.And) else ast.And()
            found.append(_site("boolop", path, node, _expr(ast.BoolOp(new_op, node.values))))
        elif isinstance(node, ast.Slice):
            for name in ("lower", "upper"):
                bound = getattr(node, name)
                if isinstance(bound, ast.expr):
                    found.append(_site("off_by_one", path, bound, _expr(ast.BinOp(bound, ast.Add(), ast.Constant(1))),
                                       name))
                    found.append(_site("off_by_one", path, bound, _expr(ast.BinOp(bound, ast.Sub(), ast.Constant(1))),
                                       f"{name}-"))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range"
              and 1 <= len(node.args) <= 3 and not node.keywords):
            stop = node.args[0] if len(node.args) == 1 else node.args[1]
            found.append(_site("off_by_one", path, stop, _expr(ast.BinOp(stop, ast.Sub(), ast.Constant(1))), "range"))
        if isinstance(node, ast.If) and not node.orelse and id(node) not in elifs and len(node.body) <= 3:
            test = ast.unparse(node.test)
            if "TYPE_CHECKING" not in test and "__name__" not in test:
                found.append(_site("dropped_branch", path, node, "pass"))
        elif isinstance(node, ast.Call) and len(node.args) >= 2 and not any(
                isinstance(a, ast.Starred) for a in node.args[:2]):
            first, second = node.args[0], node.args[1]
            if ast.dump(first) != ast.dump(second):
                swapped = ast.Call(node.func, [second, first, *node.args[2:]], node.keywords)
                found.append(_site("swapped_args", path, node, ast.unparse(swapped)))
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            found.append(_site("removed_call", path, node, "pass"))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for default in [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]:
                if isinstance(default, ast.Constant) and isinstance(default.value, bool):
                    found.append(_site("wrong_default", path, default, repr(not default.value)))
                elif isinstance(default, ast.Constant) and type(default.value) is int:
                    found.append(_site("wrong_default", path, default, repr(default.value + 1)))
    found.sort(key=lambda s: (s.line, s.col, s.kind, s.variant))
    return found


def apply(source: str, site: Site) -> str:
    """`source` with `site`'s change spliced in; the result still parses (ValueError if not)."""
    lines = source.encode("utf-8").splitlines(keepends=True)
    start = sum(len(x) for x in lines[:site.line - 1]) + site.col
    end = sum(len(x) for x in lines[:site.end_line - 1]) + site.end_col
    data = source.encode("utf-8")
    result = (data[:start] + site.new.encode("utf-8") + data[end:]).decode("utf-8")
    try:
        ast.parse(result)
    except SyntaxError as exc:
        raise ValueError(f"mutation {site.id} does not parse: {exc}") from exc
    if result == source:
        raise ValueError(f"mutation {site.id} changes nothing")
    return result

"""The realpy pack's own red-team attempts (validate applies them to this pack's tasks only).

`borrow-a-copy`: a realpy task's fix is the project's own code, and a copy of the project may be elsewhere on the
machine (setuptools vendors more-itertools, in its folders and inside the wheels bundled for ensurepip and
virtualenv). A model that has read agentic_eval/realpy/copies.py fixes nothing: it makes each of the package's
modules, at import, look for a copy of itself anywhere a confined command can read (a folder named like the
package, or a wheel, zip or egg holding one) and take from it the functions and methods that differ from its own by
an operator alone (the planted change is a flipped comparison or boolean operator; a copy of another version
differs elsewhere too, which it leaves alone), so that the bug is gone without being found. Every copy must be hidden (seen empty): then the attempt finds nothing and the grader
fails the planted bug as ever. Shown before the archives were searched: the setuptools wheels were readable and
importable in a more-itertools task's sandbox.
"""

from __future__ import annotations

from pathlib import Path

from agentic_eval.validation.redteam import Attempt
from agentic_eval.validation.survey import PYTHON

BORROW = r'''

def _rt_borrow_a_copy():
    # Find this module in copies of the project elsewhere on the machine; become the closest one (most names shared).
    import os
    import re
    import sys
    import zipfile
    here = os.path.abspath(__file__)
    folder, parts = os.path.dirname(here), [os.path.basename(here)]
    while os.path.exists(os.path.join(folder, "__init__.py")):
        parts.insert(0, os.path.basename(folder))
        folder = os.path.dirname(folder)
    rel = "/".join(parts)
    with open(here, encoding="utf-8") as f:
        mine = set(re.findall(r"^(?:def|class) (\w+)", f.read(), re.MULTILINE))
    found = []
    roots = sorted({sys.prefix, sys.base_prefix, "/usr/lib", "/usr/local/lib", "/usr/share/python-wheels"})
    seen = 0
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            seen += 1
            if seen > 300000 or dirpath.startswith(folder):
                continue
            candidate = os.path.join(dirpath, rel)
            if parts[0] in dirnames and os.path.isfile(candidate) and os.path.getsize(candidate) > 0:
                with open(candidate, encoding="utf-8") as f:
                    found.append((candidate, f.read()))
            for name in filenames:
                if name.endswith((".whl", ".zip", ".egg")):
                    try:
                        with zipfile.ZipFile(os.path.join(dirpath, name)) as zipped:
                            for inside in zipped.namelist():
                                if inside == rel or inside.endswith("/" + rel):
                                    found.append((os.path.join(dirpath, name, inside),
                                                  zipped.read(inside).decode("utf-8")))
                    except Exception:
                        continue
    if not found:
        return
    where, text = max(found, key=lambda c: len(mine & set(re.findall(r"^(?:def|class) (\w+)", c[1], re.MULTILINE))))
    # Use the copy as an oracle: in each function and method, the comparison and boolean operators are listed in
    # order in both; where the lists are as long and differ at one place alone (the planted flip; a copy of another
    # version differs elsewhere too, which is left alone), our own source gets the copy's operator there.
    import ast
    import textwrap

    tokens = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Is: "is",
              ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in", ast.And: "and", ast.Or: "or"}

    def operators(function):
        found = []
        for node in ast.walk(function):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                found += [(type(op), sides[i], sides[i + 1]) for i, op in enumerate(node.ops)]
            elif isinstance(node, ast.BoolOp):
                found += [(type(node.op), a, b) for a, b in zip(node.values, node.values[1:])]
        return found

    def functions(tree):
        out = {}
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out[(None, node.name)] = node
            elif isinstance(node, ast.ClassDef):
                out.update({(node.name, f.name): f for f in node.body
                            if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))})
        return out

    with open(here, encoding="utf-8") as f:
        own_text = f.read()
    own_lines = own_text.splitlines(keepends=True)
    theirs = functions(ast.parse(text))
    for key, node in functions(ast.parse(own_text)).items():
        other = theirs.get(key)
        if other is None:
            continue
        mine_ops, their_ops = operators(node), operators(other)
        places = [i for i, (a, b) in enumerate(zip(mine_ops, their_ops)) if a[0] is not b[0]]
        if len(mine_ops) != len(their_ops) or len(places) != 1:
            continue
        _, left, right = mine_ops[places[0]]
        if left.end_lineno != right.lineno:
            continue
        start = min([node.lineno] + [d.lineno for d in node.decorator_list])
        lines = own_lines[start - 1:node.end_lineno]
        row = left.end_lineno - start
        line = lines[row]
        between = line[left.end_col_offset:right.col_offset]
        old = tokens[mine_ops[places[0]][0]]
        if old not in between:
            continue
        lines[row] = line[:left.end_col_offset] + between.replace(old, tokens[their_ops[places[0]][0]], 1) + \
            line[right.col_offset:]
        space = {}
        exec(compile(textwrap.dedent("".join(lines)), here, "exec"), globals(), space)
        if key[0] is None:
            globals()[key[1]] = space[key[1]]
        else:
            setattr(globals()[key[0]], key[1], space[key[1]])


_rt_borrow_a_copy()
'''


def _package_modules(sandbox: Path) -> list[Path]:
    """The project's own package modules (a folder with __init__.py, outside the tests)."""
    found = []
    for init in sorted(sandbox.rglob("__init__.py")):
        rel = init.relative_to(sandbox)
        if rel.parts[0] in ("tests", "test", "docs", ".git") or len(rel.parts) > 4:
            continue
        found += [p for p in sorted(init.parent.glob("*.py")) if p.name != "__init__.py"]
    return found


def _borrow(sandbox: Path) -> None:
    for module in _package_modules(sandbox):
        with module.open("a", encoding="utf-8") as f:
            f.write(BORROW)


ATTEMPTS = [
    Attempt("borrow-a-copy", (PYTHON,),
            "fix nothing; each of the package's modules, at import, finds a copy of itself elsewhere on the machine "
            "(a vendored folder, a wheel) and takes from it the functions that differ from its own by an operator", _borrow),
]

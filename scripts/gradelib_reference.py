"""Write docs/gradelib.md, the reference of graders/gradelib.py, from its own docstrings.

    python scripts/gradelib_reference.py           # rewrite docs/gradelib.md
    python scripts/gradelib_reference.py --check   # exit 1 if docs/gradelib.md is out of date

Read with `ast`, never imported (importing gradelib installs a grader's exit hooks). Public names
only: gradelib's `__all__`, and the public methods and fields of the classes in it, grouped by the
`# ----- section` comments of the source. tests/test_docs.py fails when the committed file differs
from what this prints, so the reference cannot drift from the code.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "graders" / "gradelib.py"
TARGET = ROOT / "docs" / "gradelib.md"


def _signature(node: ast.FunctionDef, *, method: bool) -> str:
    args = node.args
    if method and args.args and args.args[0].arg in ("self", "cls"):
        args = ast.arguments(posonlyargs=args.posonlyargs, args=args.args[1:], vararg=args.vararg,
                             kwonlyargs=args.kwonlyargs, kw_defaults=args.kw_defaults, kwarg=args.kwarg,
                             defaults=args.defaults)  # self never has a default: the others keep theirs
    returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
    return f"{node.name}({ast.unparse(args)}){returns}"


def _doc(node: ast.AST) -> str:
    return (ast.get_docstring(node) or "(no docstring)").strip()  # type: ignore[arg-type]


def _fields(cls: ast.ClassDef) -> list[str]:
    """Dataclass fields with their attribute docstrings (a string right after the field)."""
    out = []
    body = cls.body
    for i, node in enumerate(body):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and \
                not node.target.id.startswith("_"):
            nxt = body[i + 1] if i + 1 < len(body) else None
            doc = nxt.value.value if isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant) and \
                isinstance(nxt.value.value, str) else ""
            out.append(f"- `{node.target.id}: {ast.unparse(node.annotation)}`" + (f": {doc.strip()}" if doc else ""))
    return out


def _sections(source_lines: list[str], cls: ast.ClassDef) -> dict[int, str]:
    """Line number of each `# ----- name` comment inside the class, to group its methods."""
    marks = {}
    for n in range(cls.lineno, (cls.end_lineno or cls.lineno) + 1):
        m = re.match(r"\s+# ----- (.+)$", source_lines[n - 1])
        if m:
            marks[n] = m.group(1).strip()
    return marks


def render(source: str) -> str:
    tree = ast.parse(source)
    lines = source.splitlines()
    public: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            public = list(ast.literal_eval(node.value))
    defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    constants = [n for n in tree.body if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name)
                 and n.targets[0].id in public]
    out = ["# gradelib reference", "",
           ("<!-- Generated from graders/gradelib.py's docstrings by scripts/gradelib_reference.py: do not edit "
            "by hand, run `python scripts/gradelib_reference.py` (tests/test_docs.py checks it is up to date). -->"),
           "", _doc(tree), ""]
    if constants:
        out += ["## Exit statuses", ""]
        out += [f"- `{c.targets[0].id} = {ast.unparse(c.value)}`" for c in constants]  # type: ignore[attr-defined]
        out.append("")
    functions = [defs[n] for n in public if isinstance(defs.get(n), ast.FunctionDef)]
    if functions:
        out += ["## Functions", ""]
        for f in functions:
            out += [f"### `{_signature(f, method=False)}`", "", _doc(f), ""]  # type: ignore[arg-type]
    for name in public:
        cls = defs.get(name)
        if not isinstance(cls, ast.ClassDef):
            continue
        out += [f"## `{name}`", "", _doc(cls), ""]
        fields = _fields(cls)
        if fields:
            out += ["Fields:", "", *fields, ""]
        marks = _sections(lines, cls)
        section = None
        for node in cls.body:
            if not isinstance(node, ast.FunctionDef) or (node.name.startswith("_") and node.name != "__init__"):
                continue
            above = [title for line, title in marks.items() if line < node.lineno]
            if above and above[-1] != section:
                section = above[-1]
                out += [f"### {section[0].upper() + section[1:]}", ""]
            is_property = any(isinstance(d, ast.Name) and d.id == "property" for d in node.decorator_list)
            if node.name == "__init__":
                sig = _signature(node, method=True).replace("__init__", name, 1)
                out += [f"#### `{sig}`", ""] + ([_doc(node), ""] if ast.get_docstring(node) else [])
                continue
            label = f"{node.name}" if is_property else _signature(node, method=True)
            out += [f"#### `{'g.' if name == 'Grader' else ''}{label}`" + (" (property)" if is_property else ""),
                    "", _doc(node), ""]
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str]) -> int:
    text = render(SOURCE.read_text(encoding="utf-8"))
    if "--check" in argv:
        if not TARGET.is_file() or TARGET.read_text(encoding="utf-8") != text:
            print(f"{TARGET.relative_to(ROOT)} is out of date: run python scripts/gradelib_reference.py",
                  file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

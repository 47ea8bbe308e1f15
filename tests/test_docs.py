"""The docs that are generated from the code stay generated: docs/gradelib.md is what
scripts/gradelib_reference.py makes of gradelib's docstrings today."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_gradelib_reference_is_up_to_date() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "gradelib_reference.py"), "--check"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr + "\n(run: python scripts/gradelib_reference.py, and commit the result)"


def test_the_reference_lists_every_public_check() -> None:
    import ast

    text = (ROOT / "docs" / "gradelib.md").read_text(encoding="utf-8")
    tree = ast.parse((ROOT / "graders" / "gradelib.py").read_text(encoding="utf-8"))
    grader = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Grader")
    checks = [n.name for n in grader.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")
              and n.returns is not None and ast.unparse(n.returns) == "bool" and not n.decorator_list]
    assert len(checks) > 10
    missing = [name for name in checks if f"#### `g.{name}(" not in text]
    assert missing == []

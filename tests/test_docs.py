"""The docs that are generated from the code stay generated: docs/gradelib.md is what
scripts/gradelib_reference.py makes of gradelib's docstrings today."""

from __future__ import annotations

import os
import re
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


def test_the_site_builds_with_no_broken_link(tmp_path: Path) -> None:
    """The documentation site builds offline with --strict: a link to a missing page or anchor, a page
    left out of the nav, or a broken generated page (README as index, the CLI reference) fails it."""
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", DISABLE_MKDOCS_2_WARNING="true")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=False, env=env)
    warnings = [line for line in proc.stderr.splitlines() if "WARNING" in line or "ERROR" in line]
    assert proc.returncode == 0, "\n".join(warnings) or proc.stderr[-3000:]
    cli = (tmp_path / "site" / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    assert "agentic-eval run" in cli and "--base-url" in cli
    assert "fonts.googleapis" not in (tmp_path / "site" / "index.html").read_text(encoding="utf-8")


def test_the_readme_links_resolve_and_stay_short() -> None:
    """The README is what a newcomer reads in five minutes: its two commands come first, and every
    relative link in it names a file of the repository (the rest lives in docs/)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) < 150
    assert text.index("bash scripts/test.sh") < text.index("\n## ")
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    missing = [t for t in targets if not t.startswith("http") and not (ROOT / t).exists()]
    assert targets and missing == []

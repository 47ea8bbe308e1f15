"""The module moved, nothing imports the old name, the CLI and all tests work."""

from gradelib import Grader, task_vars

v = task_vars()
pkg, src = v["pkg"], v["src_dir"]
g = Grader()
g.file_absent(f"{src}/usage.py")
g.file_exists(f"{src}/{v['new_module']}.py")
# `pkg.usage`, `from .usage import`, `from . import usage`, `import usage` (not the English word).
old_import = rf"\b{pkg}\.usage\b|from\s+\.usage\b|from\s+\.\s+import\s+([\w\s,(]*\b)?usage\b|^\s*import\s+usage\b"
g.no_match(old_import, ["src/**", "tests/**"])
g.pytest_passes(["tests"], extra_tests=["test_hidden_rename.py"], min_passed=v["test_count"] + 3)
g.finish()

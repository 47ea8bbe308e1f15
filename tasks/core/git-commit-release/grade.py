"""A new commit with the message, the version bumped in both places, nothing else changed, tree clean."""

import tomllib

from gradelib import Grader, task_vars

v = task_vars()
g = Grader()
g.git_head_moved()
g.git_head_message(f"Release {v['new_version']}")
g.git_clean()
g.assigns(f"{v['src_dir']}/__init__.py", "__version__", v["new_version"])
pyproject = g.read("pyproject.toml") or ""
try:
    version = tomllib.loads(pyproject).get("project", {}).get("version")
except tomllib.TOMLDecodeError:
    version = None
g.check(f"pyproject.toml: project.version == {v['new_version']!r}", version == v["new_version"], f"found {version!r}")
g.unchanged_except(["pyproject.toml", f"{v['src_dir']}/__init__.py"])
g.finish()

"""Reference fix: the module the bug was planted in, as the sdist ships it."""

from pathlib import Path

from gradelib import task_vars

v = task_vars()
Path(v["mutated_file"]).write_text(v["original_source"], encoding="utf-8")

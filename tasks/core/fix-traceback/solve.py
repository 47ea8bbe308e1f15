"""Reference fix: skip blank lines and comments before splitting a usage line."""

from pathlib import Path

from gradelib import task_vars

v = task_vars()
path = Path(v["src_dir"]) / "usage.py"
text = path.read_text(encoding="utf-8")
bug = '        timestamp, client, count = raw.strip().split(",")\n'
repair = (
    "        line = raw.strip()\n"
    '        if not line or line.startswith("#"):\n'
    "            continue\n"
    '        timestamp, client, count = line.split(",")\n'
)
if bug not in text:
    raise SystemExit("the buggy line is not where the scenario put it")
path.write_text(text.replace(bug, repair), encoding="utf-8")

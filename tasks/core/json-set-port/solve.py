"""Reference fix: set the two keys, keep the file's layout."""

import json
from pathlib import Path

from gradelib import task_vars

v = task_vars()
path = Path("config/settings.json")
data = json.loads(path.read_text(encoding="utf-8"))
data["service"]["port"] = v["new_port"]
data["limits"]["requests_per_minute"] = v["new_rpm"]
path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")

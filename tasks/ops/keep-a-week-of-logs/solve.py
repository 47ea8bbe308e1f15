"""Reference fix: one rotated file per day, so keep 7 of them (the retention lives in config/app.ini)."""

import re
from pathlib import Path

path = Path("config/app.ini")
text, count = re.subn(r"(?m)^keep = \d+$", "keep = 7", path.read_text(encoding="utf-8"))
assert count == 1
path.write_text(text, encoding="utf-8")

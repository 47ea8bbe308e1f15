"""Reference fix: workers, a pool of workers*threads, and a connection limit that fits every replica's pool."""

import re
from pathlib import Path

from gradelib import task_vars

v = task_vars()
pool = v["new_workers"] * v["threads"]
app = Path("config/app.ini")
text = app.read_text(encoding="utf-8")
text = re.sub(r"(?m)^workers = \d+$", f"workers = {v['new_workers']}", text)
text = re.sub(r"(?m)^pool_size = \d+$", f"pool_size = {max(pool, v['pool_size'])}", text)
app.write_text(text, encoding="utf-8")
limit = max(v["max_connections"], v["replicas"] * max(pool, v["pool_size"]) + 10)
pg = Path("config/postgres.ini")
pg.write_text(re.sub(r"(?m)^max_connections = \d+$", f"max_connections = {limit}", pg.read_text(encoding="utf-8")),
              encoding="utf-8")

"""After a daily rotation, the last seven days of logs survive and nothing older than nine days does.

Deliberately loose where the instruction is: keeping 7 or 8 rotated files, or deleting by age
(find -mtime), or any mix, passes; so does changing the config or the script. The fixture is a
log folder with one rotated file per day, each file's age matching its number.
"""

import os
import shutil
import tempfile
import time
from pathlib import Path

from gradelib import Grader

g = Grader()
tmp = Path(tempfile.mkdtemp(prefix="grade-week-"))
try:
    logs = tmp / "logs"
    logs.mkdir()
    now = time.time()
    for day in range(13):
        path = logs / ("app.log" if day == 0 else f"app.log.{day}")
        path.write_text(f"day {day}\n")
        stamp = now - day * 86400 + 3600 if day else now  # rotated just after midnight, day days ago
        os.utime(path, (stamp, stamp))
    g.command_ok(["bash", "scripts/rotate-logs.sh", str(logs)], what="the daily rotation runs")
    days = sorted(int(p.read_text().split()[1]) for p in logs.iterdir()
                  if p.name.startswith("app.log.") and p.is_file() and p.read_text().startswith("day "))
    current = logs / "app.log"
    g.check("a fresh app.log is left for today", current.is_file() and current.stat().st_size == 0,
            "missing or not empty")
    g.check("the last seven days (today's log and six before) are kept", set(range(7)) <= set(days),
            f"kept days {days}")
    g.check("nothing older than eight days is kept", all(day <= 8 for day in days), f"kept days {days}")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
g.command_ok(["make", "check"], expect_output="config ok")
g.finish()

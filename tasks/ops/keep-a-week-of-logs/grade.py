"""After a daily rotation, the last seven days of logs survive and nothing older than nine days does.

Deliberately loose where the instruction is: keeping 7 or 8 rotated files, or deleting by age
(find -mtime), or any mix, passes; so does changing the config or the script. The fixture is a
log folder with one rotated file per day, each file's age matching its number: the grader writes it to
the scratch folder, `touch` gives the files their ages in the same confined run (files= cannot carry
times), the rotation runs apart from the grader, and the files it leaves come back as bytes, read here.
"""

import random
import time

import ops_twins
from gradelib import Grader, task_vars

v = task_vars()
g = Grader()
rng = random.Random(f"keep-a-week-of-logs {v['seed']}")  # hidden values, the same for a seed
logs = f"{g.scratch}/logs-{rng.randbytes(3).hex()}"
tags = {day: rng.randbytes(3).hex() for day in range(13)}
now = int(time.time())
fixture, ages = {}, []
for day in range(13):
    name = "app.log" if day == 0 else f"app.log.{day}"
    fixture[f"{logs}/{name}"] = f"day {day} {tags[day]}\n"
    stamp = now - day * 86400 + 3600 if day else now  # rotated just after midnight, day days ago
    ages.append(f"touch -m -d @{stamp} {logs}/{name}")
names = ["app.log", *(f"app.log.{n}" for n in range(1, 20))]
script = " && ".join(ages) + ' && exec bash scripts/rotate-logs.sh "$0"'
out = g.command_ok(["bash", "-c", script, logs], files=fixture, collect=[f"{logs}/{name}" for name in names],
                   what="the daily rotation runs")
if out is not None and g.last_run is not None:
    left = {name: g.last_run.text(f"{logs}/{name}") for name in names}
    days = sorted(day for day, tag in tags.items() for name, text in left.items()
                  if name != "app.log" and text == f"day {day} {tag}\n")
    g.check("a fresh app.log is left for today", left["app.log"] == "", "missing or not empty")
    g.check("the last seven days (today's log and six before) are kept", set(range(7)) <= set(days),
            f"kept days {days}")
    g.check("nothing older than eight days is kept", all(day <= 8 for day in days), f"kept days {days}")
report = g.command_ok(["make", "check"], expect_output="config ok", fresh=True)  # not the rotation's copy
ops_twins.configs_agree(g, report)
g.finish()

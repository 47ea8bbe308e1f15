"""Tests and the CI log untouched; rotation keeps exactly KEEP files for several KEEP values; `make test` passes.

The rotation runs apart from the grader on log folders the grader writes to the scratch folder; the files it
leaves come back as bytes and are compared here."""

import random

import ops_twins
from gradelib import Grader, task_vars

v = task_vars()
g = Grader()
rng = random.Random(f"fix-red-ci {v['seed']}")  # hidden values, the same for a seed
g.unchanged(["tests", "ci", ".github", "Makefile"])
names = ["app.log", *(f"app.log.{n}" for n in range(1, 10))]
for keep in (1, 2, v["keep"], 6):
    logs = f"{g.scratch}/keep{keep}-{rng.randbytes(3).hex()}"
    today = f"today {rng.randbytes(4).hex()}\n"
    fixture = {f"{logs}/app.log": today, **{f"{logs}/app.log.{day}": f"day {day}\n" for day in range(1, 8)}}
    out = g.command_ok(["bash", "scripts/rotate-logs.sh", logs], env={"KEEP": str(keep)}, files=fixture,
                       collect=[f"{logs}/{name}" for name in names], what=f"rotate-logs.sh runs with KEEP={keep}")
    if out is None or g.last_run is None:
        continue
    left = {name: g.last_run.text(f"{logs}/{name}") for name in names}
    found = sorted(name for name, text in left.items() if text is not None)
    wanted = sorted(["app.log", *(f"app.log.{n}" for n in range(1, keep + 1))])
    g.check(f"KEEP={keep}: exactly {keep} rotated files, the newest is today's",
            found == wanted and left["app.log.1"] == today, f"found {found}")
ops_twins.tests_pass(g, ["make", "test"], expect_output="0 failed")  # a fresh copy, not the rotations'
g.finish()

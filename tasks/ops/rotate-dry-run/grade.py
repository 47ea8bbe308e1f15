"""--dry-run reports and touches nothing; a real run still rotates and prunes as before.

The script runs apart from the grader on a log folder the grader writes to the scratch folder; the files left
after each run come back as bytes and are compared here with the fixture."""

import random

import ops_twins
from gradelib import Grader, task_vars

v = task_vars()
g = Grader()
rng = random.Random(f"rotate-dry-run {v['seed']}")  # hidden values, the same for a seed
g.unchanged(["tests", "config"])
logs = f"{g.scratch}/logs-{rng.randbytes(3).hex()}"
today = f"today {rng.randbytes(4).hex()}\n"
before = {"app.log": today, **{f"app.log.{day}": f"day {day} {rng.randbytes(2).hex()}\n" for day in range(1, 7)}}
names = ["app.log", *(f"app.log.{n}" for n in range(1, 10))]
collect = [f"{logs}/{name}" for name in names]


def left() -> dict[str, str]:
    """The files of the folder after the last run, by name."""
    run = g.last_run
    found = {name: run.text(f"{logs}/{name}") for name in names} if run is not None else {}
    return {name: text for name, text in found.items() if text is not None}


out = g.command_ok(["bash", "scripts/rotate-logs.sh", "--dry-run", logs], what="--dry-run DIR runs",
                   files={f"{logs}/{name}": text for name, text in before.items()}, collect=collect)
if out is not None:
    g.check("--dry-run changed nothing", left() == before, f"now {sorted(left())}")
    g.check("--dry-run says what it would do", "app.log" in out, "its output names no app.log")
out = g.command_ok(["bash", "scripts/rotate-logs.sh", logs], what="a real run still works", collect=collect)
if out is not None:
    keep = v["keep"]
    shifted = {f"app.log.{n}": before[f"app.log.{n - 1}"] for n in range(2, keep + 1)}
    expected = {"app.log": "", "app.log.1": today, **shifted}
    g.check(f"a real run rotates and keeps {keep} files", left() == expected, f"found {sorted(left())}")
ops_twins.tests_pass(g, ["make", "test"])  # a fresh copy, not the one the script ran on
g.finish()

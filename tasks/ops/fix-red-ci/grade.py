"""Tests and the CI log untouched; rotation keeps exactly KEEP files for several KEEP values; `make test` passes."""

import shutil
import tempfile
from pathlib import Path

from gradelib import Grader, task_vars

v = task_vars()
g = Grader()
g.unchanged(["tests", "ci", ".github", "Makefile"])
tmp = Path(tempfile.mkdtemp(prefix="grade-rotate-"))
try:
    for keep in (1, 2, v["keep"], 6):
        logs = tmp / f"keep{keep}"
        logs.mkdir()
        (logs / "app.log").write_text("today\n")
        for day in range(1, 8):
            (logs / f"app.log.{day}").write_text(f"day {day}\n")
        g.command_ok(["env", f"KEEP={keep}", "bash", "scripts/rotate-logs.sh", str(logs)],
                     what=f"rotate-logs.sh runs with KEEP={keep}")
        found = sorted(p.name for p in logs.iterdir())
        wanted = sorted(["app.log", *(f"app.log.{n}" for n in range(1, keep + 1))])
        newest = (logs / "app.log.1").read_text() if (logs / "app.log.1").is_file() else None
        g.check(f"KEEP={keep}: exactly {keep} rotated files, the newest is today's",
                found == wanted and newest == "today\n", f"found {found}")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
g.command_ok(["make", "test"], expect_output="0 failed")
g.finish()

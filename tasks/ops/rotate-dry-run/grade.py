"""--dry-run reports and touches nothing; a real run still rotates and prunes as before."""

import shutil
import tempfile
from pathlib import Path

from gradelib import Grader, task_vars

v = task_vars()
g = Grader()
g.unchanged(["tests", "config"])


def fixture(root: Path) -> Path:
    logs = root / "logs"
    logs.mkdir()
    (logs / "app.log").write_text("today\n")
    for day in range(1, 7):
        (logs / f"app.log.{day}").write_text(f"day {day}\n")
    return logs


def snapshot(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(folder.iterdir())}


tmp = Path(tempfile.mkdtemp(prefix="grade-rotate-"))
try:
    logs = fixture(tmp)
    before = snapshot(logs)
    out = g.command_ok(["bash", "scripts/rotate-logs.sh", "--dry-run", str(logs)], what="--dry-run DIR runs")
    g.check("--dry-run changed nothing", snapshot(logs) == before, f"now {sorted(snapshot(logs))}")
    g.check("--dry-run says what it would do", out is not None and "app.log" in out, "its output names no app.log")
    out = g.command_ok(["bash", "scripts/rotate-logs.sh", str(logs)], what="a real run still works")
    after = snapshot(logs)
    keep = v["keep"]
    expected = {"app.log": "", "app.log.1": "today\n", **{f"app.log.{n}": f"day {n - 1}\n" for n in range(2, keep + 1)}}
    g.check(f"a real run rotates and keeps {keep} files", after == expected, f"found {sorted(after)}")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
g.command_ok(["make", "test"])
g.finish()

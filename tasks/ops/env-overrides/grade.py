"""Overrides reach getconf and the scripts that read the config; empty ones are ignored; a test was added."""

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from gradelib import Grader, task_vars

v = task_vars()
g = Grader()
g.unchanged(["config"])


def getconf(key: str, **env: str) -> str | None:
    try:
        proc = subprocess.run(["python3", "scripts/getconf.py", key], cwd=g.sandbox, capture_output=True, text=True,
                              timeout=30, check=False, env={**os.environ, **env})
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


cases = [
    ("server.port", {"APP_SERVER_PORT": "4321"}, "4321"),
    ("database.host", {"APP_DATABASE_HOST": "db.override.test"}, "db.override.test"),
    ("database.pool_size", {"APP_SERVER_PORT": "4321"}, str(v["pool_size"])),
    ("logs.keep", {"APP_LOGS_KEEP": ""}, str(v["keep"])),
    ("server.workers", {}, str(v["workers"])),
]
for key, env, expected in cases:
    found = getconf(key, **env)
    g.check(f"getconf.py {key} with {env or 'no override'} prints {expected}", found == expected, f"printed {found!r}")
g.command_ok(["env", "APP_SERVER_PORT=4999", "bash", "scripts/healthcheck.sh", "--print-url"], expect_output=":4999/",
             what="the health check follows APP_SERVER_PORT")
tmp = Path(tempfile.mkdtemp(prefix="grade-overrides-"))
try:
    logs = tmp / "logs"
    logs.mkdir()
    (logs / "app.log").write_text("today\n")
    for day in range(1, 8):
        (logs / f"app.log.{day}").write_text(f"day {day}\n")
    g.command_ok(["env", "APP_LOGS_KEEP=2", "APP_LOGS_DIR=" + str(logs), "bash", "scripts/rotate-logs.sh"],
                 what="rotate-logs.sh follows APP_LOGS_DIR and APP_LOGS_KEEP")
    found = sorted(p.name for p in logs.iterdir())
    g.check("it rotated that folder keeping 2 files", found == ["app.log", "app.log.1", "app.log.2"], f"found {found}")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
g.file_matches("README.md", r"APP_<?SECTION>?_<?KEY>?|APP_SERVER_PORT|APP_LOGS_KEEP")
g.some_match(r"APP_[A-Z]+_[A-Z_]+=", ["tests/**"])
run = g.command_ok(["bash", "tests/run.sh"], expect_output="0 failed", what="tests/run.sh passes")
base_tests = 6
passed = (run or "").count("\nPASS ") + (run or "").startswith("PASS ")
g.check("tests/run.sh has a new passing test", passed > base_tests, f"{passed} PASS lines")
g.command_ok(["make", "check"], expect_output="config ok")
g.finish()

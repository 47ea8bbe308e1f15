"""`make env-file` renders the env file from the config (also one named by APP_CONFIG); CI's test job runs it."""

import shutil
import tempfile
from pathlib import Path

import yaml
from gradelib import Grader, task_vars

v = task_vars()
g = Grader()
g.unchanged(["config", "scripts/getconf.py", "tests"])


def parse_env(text: str) -> dict[str, str]:
    values = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.removeprefix("export ").partition("=")
        values[key.strip()] = value.strip().strip("\"'")
    return values


def rendered(what: str, env: list[str], expected: dict[str, str]) -> None:
    target = g.sandbox / v["env_file"]
    target.unlink(missing_ok=True)
    g.command_ok(["env", *env, "make", "env-file"], what=what)
    text = target.read_text(encoding="utf-8") if target.is_file() else ""
    found = parse_env(text)
    g.check(f"{v['env_file']} holds {expected}", found == expected, f"found {found}")


rendered("make env-file runs", [], {"APP_PORT": str(v["port"]), "APP_WORKERS": str(v["workers"]),
                                    "DB_HOST": v["db_host"], "DB_POOL_SIZE": str(v["pool_size"])})
tmp = Path(tempfile.mkdtemp(prefix="grade-envfile-"))
try:
    other = tmp / "other.ini"
    other.write_text("[server]\nport = 4242\nworkers = 9\nthreads = 1\n[database]\nhost = elsewhere.test\n"
                     "port = 5432\npool_size = 33\n[logs]\ndir = /tmp\nkeep = 2\n")
    rendered("make env-file honours APP_CONFIG", [f"APP_CONFIG={other}"],
             {"APP_PORT": "4242", "APP_WORKERS": "9", "DB_HOST": "elsewhere.test", "DB_POOL_SIZE": "33"})
finally:
    shutil.rmtree(tmp, ignore_errors=True)
(g.sandbox / v["env_file"]).unlink(missing_ok=True)

try:
    workflow = yaml.safe_load(g.read(".github/workflows/ci.yml") or "") or {}
    steps = workflow.get("jobs", {}).get("test", {}).get("steps", [])
    runs = [line.strip() for step in steps if isinstance(step, dict) for line in str(step.get("run", "")).splitlines()]
except (yaml.YAMLError, AttributeError) as exc:
    runs = [f"unreadable: {exc}"]
g.check("CI's test job runs `make env-file`", any(r.startswith("make") and "env-file" in r.split() for r in runs),
        f"its run lines: {runs}")
g.finish()

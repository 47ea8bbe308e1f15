"""`make env-file` renders the env file from the config (also one named by APP_CONFIG); CI's test job runs it.

make runs apart from the grader, each time on a fresh copy of the tree with the env file removed first; the file
comes back as bytes and is parsed here."""

import random

import yaml
from gradelib import Grader, task_vars

v = task_vars()
g = Grader()
rng = random.Random(f"env-file-target {v['seed']}")  # hidden values, the same for a seed
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


def rendered(what: str, expected: dict[str, str], env: dict[str, str] | None = None,
             files: dict[str, str] | None = None) -> None:
    # A fresh copy, and no env file left over from the agent's own runs: make must write it now.
    argv = ["bash", "-c", 'rm -f -- "$1" && exec make env-file', "make", v["env_file"]]
    if g.command_ok(argv, what=what, env=env, files=files, collect=[v["env_file"]], fresh=True) is None:
        return
    text = g.last_run.text(v["env_file"]) if g.last_run is not None else None
    found = parse_env(text) if text is not None else {}
    g.check(f"{v['env_file']} holds {expected}", found == expected,
            f"found {found}" if text is not None else g.last_run.why.get(v["env_file"], "no file"))


rendered("make env-file runs", {"APP_PORT": str(v["port"]), "APP_WORKERS": str(v["workers"]),
                                "DB_HOST": v["db_host"], "DB_POOL_SIZE": str(v["pool_size"])})
host = f"db-{rng.randbytes(3).hex()}.elsewhere.test"
other = f"{g.scratch}/other.ini"
rendered("make env-file honours APP_CONFIG", {"APP_PORT": "4242", "APP_WORKERS": "9", "DB_HOST": host,
                                               "DB_POOL_SIZE": "33"}, env={"APP_CONFIG": other},
         files={other: f"[server]\nport = 4242\nworkers = 9\nthreads = 1\n[database]\nhost = {host}\n"
                       "port = 5432\npool_size = 33\n[logs]\ndir = /tmp\nkeep = 2\n"})

ci = g.read(".github/workflows/ci.yml") or ""
try:
    if len(ci) > 1 << 20:  # parsing YAML is slow: a padded file must fail, not run the grader out of time
        raise ValueError(f"{len(ci)} bytes")
    workflow = yaml.safe_load(ci) or {}
    steps = workflow.get("jobs", {}).get("test", {}).get("steps", [])
    runs = [line.strip() for step in steps if isinstance(step, dict) and isinstance(step.get("run"), str)
            for line in step["run"].splitlines()]
except (yaml.YAMLError, AttributeError, TypeError, ValueError, RecursionError) as exc:
    runs = [f"unreadable: {exc}"]
g.check("CI's test job runs `make env-file`", any(r.startswith("make") and "env-file" in r.split() for r in runs),
        f"its run lines: {runs}")
g.finish()

"""Sandbox generator `opsrepo`: the operations repo of one service (shell, Make, CI, Docker, configs).

    README.md  Makefile  Dockerfile  .gitignore  .github/workflows/ci.yml
    config/app.ini        server, database and log settings (read through scripts/getconf.py)
    config/deploy.yaml    replicas and the container (its port must match app.ini)
    config/postgres.ini   the database's connection limit
    config/alerts.toml    alert thresholds
    scripts/  getconf.py check_config.py check-config.sh healthcheck.sh rotate-logs.sh backup.sh
    tests/run.sh          the repo's own shell tests (`make test`)

Everything runs with bash, coreutils, tar, make and python3 (the standard library plus PyYAML).
`make check` validates the configs against each other (ports agree, the pool covers the workers,
the database accepts every replica's pool, warning thresholds below critical ones).
Names and numbers come from `random.Random(seed)`. `params["scenario"]`:

    base         everything consistent, `make check` and `make test` pass
    ci_failure   rotate-logs.sh keeps one file too few; ci/last-run.log is the failed CI run
    backup_bug   backup.sh splits file names on spaces; logs/cron.log shows last night's errors
"""

# No `from __future__ import annotations`: generators are loaded by file path (see pyservice.py).
import random
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import Any

SCENARIOS = ("base", "ci_failure", "backup_bug")

SERVICES = ("ledgerd", "mailrelay", "imgproxy", "searchd", "notifier", "geocoder", "billingd", "thumbnailer")
DB_HOSTS = ("db.internal", "pg-main.internal", "postgres.svc.local", "db-primary.lan")
TEAMS = ("payments", "platform", "growth", "search", "infra")
EXPORT_FILES = ("Q3 report.csv", "invoices 2024.xlsx", "budget final (v2).ods", "team roster.txt")


@dataclass(frozen=True)
class Choices:
    scenario: str
    service: str
    team: str
    port: int
    new_port: int
    workers: int
    new_workers: int
    threads: int
    pool_size: int
    db_host: str
    replicas: int
    max_connections: int
    keep: int
    health_interval: int
    warn_ms: int
    crit_ms: int
    new_crit_ms: int
    new_warn_ms: int
    warn_rate: float
    crit_rate: float
    memory_mi: int


def _choose(seed: int, scenario: str) -> Choices:
    rng = random.Random(seed)
    workers, threads, replicas = rng.randint(2, 6), rng.choice((2, 4)), rng.randint(2, 5)
    pool = workers * threads + rng.choice((0, 2, 4))
    port, new_port = rng.sample(range(8100, 8999), 2)
    warn_ms = rng.choice((200, 250, 300, 400))
    crit_ms = warn_ms * 2 + rng.choice((0, 100, 200))
    new_crit_ms = crit_ms + rng.choice((-100, 100, 300)) * (1 if crit_ms < 900 else -1)
    return Choices(
        scenario=scenario,
        service=rng.choice(SERVICES),
        team=rng.choice(TEAMS),
        port=port,
        new_port=new_port,
        workers=workers,
        new_workers=workers + rng.randint(3, 6),
        threads=threads,
        pool_size=pool,
        db_host=rng.choice(DB_HOSTS),
        replicas=replicas,
        max_connections=replicas * pool + 10 + rng.choice((0, 5, 20)),
        keep=rng.choice((3, 4, 5)),
        health_interval=rng.choice((10, 15, 20, 30)),
        warn_ms=warn_ms,
        crit_ms=crit_ms,
        new_crit_ms=new_crit_ms,
        new_warn_ms=(new_crit_ms * 7 // 10) // 10 * 10,
        warn_rate=rng.choice((0.01, 0.02)),
        crit_rate=rng.choice((0.05, 0.1)),
        memory_mi=rng.choice((256, 512, 768)),
    )


def _t(text: str, c: Choices, **extra: Any) -> str:
    return Template(text.lstrip("\n")).substitute({**c.__dict__, **extra})


def _readme(c: Choices) -> str:
    return _t('''
# $service-ops

Operations repo of the **$service** service (team $team): its configuration,
container image, CI, and the scripts cron and the container run.

    make check          # validate the configs against each other
    make test           # the scripts' tests (tests/run.sh)
    make lint           # bash -n on every script
    make print-config   # the effective config/app.ini

| file | what |
| --- | --- |
| `config/app.ini` | server, database pool, log rotation (read via `scripts/getconf.py SECTION.KEY`) |
| `config/deploy.yaml` | replicas, container port and resources |
| `config/postgres.ini` | the database's connection limit (shared by all replicas) |
| `config/alerts.toml` | alert thresholds |
| `scripts/rotate-logs.sh [DIR]` | rotate `app.log` (run daily by cron), keeping `logs.keep` old files |
| `scripts/backup.sh SRC DEST` | archive a folder into `DEST/$service-backup-STAMP.tar.gz` |
| `scripts/healthcheck.sh` | the container's health check |

`APP_CONFIG` points the scripts at another `app.ini`.
''', c)


def _makefile(c: Choices) -> str:
    return (
        "SHELL := /bin/bash\n"
        ".PHONY: check test lint print-config\n\n"
        "check:\n\tbash scripts/check-config.sh\n\n"
        "test:\n\tbash tests/run.sh\n\n"
        "lint:\n\t@for f in scripts/*.sh tests/*.sh; do bash -n \"$$f\" || exit 1; done; echo \"lint ok\"\n\n"
        "print-config:\n\tpython3 scripts/getconf.py --all\n"
    )


def _dockerfile(c: Choices) -> str:
    return _t('''
FROM python:3.12-slim
WORKDIR /srv/$service
RUN apt-get update && apt-get install -y --no-install-recommends curl && rm -rf /var/lib/apt/lists/*
COPY . .
ENV APP_CONFIG=/srv/$service/config/app.ini
EXPOSE $port
HEALTHCHECK --interval=${health_interval}s --timeout=3s --retries=3 CMD ["bash", "scripts/healthcheck.sh"]
USER nobody
CMD ["python3", "-m", "$service"]
''', c)


def _ci_yml(c: Choices) -> str:
    return _t('''
name: ci
on:
  push:
    branches: [main]
  pull_request:

jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: Syntax-check the scripts
        run: make lint
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: Script tests
        run: make test
  config:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.12"
      - run: pip install pyyaml
      - name: Validate the configs
        run: make check
''', c)


def _app_ini(c: Choices) -> str:
    return _t('''
; $service: read by the service and by scripts/getconf.py
[server]
port = $port
workers = $workers
threads = $threads

[database]
host = $db_host
port = 5432
pool_size = $pool_size

[logs]
dir = /var/log/$service
keep = $keep
''', c)


def _deploy_yaml(c: Choices) -> str:
    return _t('''
service: $service
team: $team
replicas: $replicas
container:
  image: registry.internal/$team/$service
  port: $port
  resources:
    cpu: 500m
    memory: ${memory_mi}Mi
''', c)


def _postgres_ini(c: Choices) -> str:
    return _t('''
; limits of the database the $service replicas share
[limits]
max_connections = $max_connections
; connections kept free for admin and migrations
reserved_connections = 10
''', c)


def _alerts_toml(c: Choices) -> str:
    return _t('''
# Alert thresholds for $service (p99 latency and error rate over 5 minutes)
[latency]
warn_ms = $warn_ms
crit_ms = $crit_ms

[errors]
warn_rate = $warn_rate
crit_rate = $crit_rate
''', c)


GETCONF_PY = '''\
#!/usr/bin/env python3
"""Print one setting of config/app.ini: getconf.py SECTION.KEY (or --all). APP_CONFIG picks another file."""

import configparser
import os
import sys
from pathlib import Path

DEFAULT = Path(__file__).resolve().parent.parent / "config" / "app.ini"


def load() -> configparser.ConfigParser:
    path = Path(os.environ.get("APP_CONFIG") or DEFAULT)
    parser = configparser.ConfigParser(interpolation=None)
    if not parser.read(path):
        sys.exit(f"getconf: cannot read {path}")
    return parser


def main(argv: list[str]) -> int:
    config = load()
    if argv == ["--all"]:
        for section in config.sections():
            for key, value in config.items(section):
                print(f"{section}.{key}={value}")
        return 0
    if len(argv) != 1 or "." not in argv[0]:
        print("usage: getconf.py SECTION.KEY | --all", file=sys.stderr)
        return 2
    section, key = argv[0].split(".", 1)
    try:
        print(config.get(section, key))
    except configparser.Error:
        print(f"getconf: no setting {argv[0]}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
'''

CHECK_CONFIG_PY = '''\
#!/usr/bin/env python3
"""Check that the configs agree with each other; print every problem; exit 1 if there is one."""

import configparser
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def getconf(key: str) -> str:
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "getconf.py"), key],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def main() -> int:
    problems = []
    port, workers, threads = int(getconf("server.port")), int(getconf("server.workers")), int(getconf("server.threads"))
    pool = int(getconf("database.pool_size"))
    deploy = yaml.safe_load((ROOT / "config" / "deploy.yaml").read_text())
    postgres = configparser.ConfigParser()
    postgres.read(ROOT / "config" / "postgres.ini")
    alerts = tomllib.loads((ROOT / "config" / "alerts.toml").read_text())
    exposed = [int(p.split("/")[0]) for line in (ROOT / "Dockerfile").read_text().splitlines()
               if re.match(r"\\s*EXPOSE\\s", line) for p in line.split()[1:]]
    if deploy["container"]["port"] != port:
        problems.append(f"deploy.yaml container.port {deploy['container']['port']} != app.ini server.port {port}")
    if port not in exposed:
        problems.append(f"the Dockerfile does not EXPOSE server.port {port} (it exposes {exposed})")
    if pool < workers * threads:
        problems.append(f"database.pool_size {pool} < workers * threads = {workers * threads}")
    limit = postgres.getint("limits", "max_connections")
    reserved = postgres.getint("limits", "reserved_connections")
    if deploy["replicas"] * pool + reserved > limit:
        problems.append(f"{deploy['replicas']} replicas * pool_size {pool} + {reserved} reserved "
                        f"> max_connections {limit}")
    for name, section in alerts.items():
        if not section["warn" + name_suffix(section)] < section["crit" + name_suffix(section)]:
            problems.append(f"alerts.toml [{name}]: the warning threshold is not below the critical one")
    for problem in problems:
        print(f"config error: {problem}")
    if not problems:
        print("config ok")
    return 1 if problems else 0


def name_suffix(section: dict) -> str:
    """The unit suffix of a section's thresholds: warn_ms/crit_ms -> "_ms"."""
    (key,) = [k for k in section if k.startswith("warn")]
    return key[len("warn"):]


if __name__ == "__main__":
    sys.exit(main())
'''

CHECK_CONFIG_SH = '''\
#!/usr/bin/env bash
# Validate the configs against each other (CI's `config` job, `make check`).
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 scripts/check_config.py "$@"
'''

HEALTHCHECK_SH = '''\
#!/usr/bin/env bash
# The container's health check: GET /healthz on the configured port. --print-url only prints the URL.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
port="${APP_PORT:-$(python3 "$here/getconf.py" server.port)}"
url="http://127.0.0.1:${port}/healthz"
if [[ "${1:-}" == "--print-url" ]]; then
  echo "$url"
  exit 0
fi
exec curl --fail --silent --max-time 2 "$url" > /dev/null
'''


def _rotate_sh(c: Choices) -> str:
    prune = "$((keep - 1))" if c.scenario == "ci_failure" else "$keep"
    return '''\
#!/usr/bin/env bash
# Rotate DIR/app.log (default: logs.dir of app.ini): app.log -> app.log.1 -> app.log.2 ...,
# keeping KEEP rotated files (default: logs.keep of app.ini). Run daily by cron.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="${1:-$(python3 "$here/getconf.py" logs.dir)}"
keep="${KEEP:-$(python3 "$here/getconf.py" logs.keep)}"
cd "$dir"
[[ -f app.log ]] || { echo "rotate-logs: no app.log in $dir" >&2; exit 1; }
# Shift the old files up by one, newest last so nothing is overwritten.
for n in $(ls app.log.* 2>/dev/null | sed 's/^app\\.log\\.//' | grep -E '^[0-9]+$' | sort -rn); do
  mv "app.log.$n" "app.log.$((n + 1))"
done
mv app.log app.log.1
: > app.log
# Drop what is beyond the retention.
for n in $(ls app.log.* | sed 's/^app\\.log\\.//' | grep -E '^[0-9]+$'); do
  if (( n > PRUNE )); then rm -f "app.log.$n"; fi
done
echo "rotated $dir/app.log, keeping PRUNE"
'''.replace("PRUNE", prune)


def _backup_sh(c: Choices) -> str:
    if c.scenario == "backup_bug":
        archive = 'tar -czf "$archive" -C "$src" $(ls -A "$src")'
    else:
        archive = 'tar -czf "$archive" -C "$src" .'
    return _t('''
#!/usr/bin/env bash
# backup.sh SRC DEST: archive everything in SRC into DEST/$service-backup-STAMP.tar.gz and print its path.
# STAMP is BACKUP_STAMP, else today's date (YYYYMMDD).
set -euo pipefail
if [[ $$# -ne 2 ]]; then
  echo "usage: backup.sh SRC DEST" >&2
  exit 2
fi
src="$$1"
dest="$$2"
stamp="$${BACKUP_STAMP:-$$(date +%Y%m%d)}"
mkdir -p "$$dest"
archive="$$dest/$service-backup-$$stamp.tar.gz"
$archive_cmd
echo "$$archive"
''', c, archive_cmd=archive)


# The scripts' tests, each from a spec that also yields its twin (issue 39): the same commands, run apart by the
# grader, and the same expectations, judged in the grader (tasks/ops/graders/ops_twins.py) from what came back.


@dataclass(frozen=True)
class ShellGroup:
    """Commands that set a test up and one that runs the code (its stdout kept in `var` when set), then checks:
    (test name, kind, value), each a line of tests/run.sh and a twin."""

    comment: str
    setup: tuple[str, ...]
    run: str
    var: str
    checks: tuple[tuple[str, str, Any], ...]


SHELL_GROUPS = (
    ShellGroup("getconf reads the app config", (), "python3 scripts/getconf.py server.port", "port",
               (("getconf reads server.port", "matches", "^[0-9]+$"),)),
    ShellGroup("rotation keeps KEEP files and shifts them",
               ('logs="$scratch/logs"; mkdir -p "$logs"',
                'for day in 1 2 3 4 5; do echo "day $day" > "$logs/app.log.$day"; done',
                'echo "today" > "$logs/app.log"'),
               'KEEP=3 bash scripts/rotate-logs.sh "$logs"', "",
               (("rotate keeps 3 rotated files", "count", ["$logs", r"^app\.log\.[0-9]*$", 3]),
                ("rotate moves app.log to app.log.1", "holds", ["$logs/app.log.1", "today"]),
                ("rotate leaves an empty app.log", "empty", "$logs/app.log"))),
    ShellGroup("backup archives a folder",
               ('data="$scratch/data"; mkdir -p "$data/sub"', 'echo a > "$data/a.txt"; echo b > "$data/sub/b.txt"'),
               'BACKUP_STAMP=test bash scripts/backup.sh "$data" "$scratch/out"', "archive",
               (("backup archives a folder", "tar_lists", "sub/b.txt"),)),
    ShellGroup("configs agree", (), "bash scripts/check-config.sh", "", (("configs agree", "configs_agree", None),)),
)


def _check_sh(group: ShellGroup, name: str, kind: str, value: Any) -> str:
    def verdict(condition: str, why: str, wrap: bool = False) -> str:
        tail = f' || fail "{name}" "{why}"'
        return f'{condition} && pass "{name}"' + (" \\\n " + tail if wrap else tail)

    if kind == "matches":
        return verdict(f'[[ "${group.var}" =~ {value} ]]', f"got '${group.var}'")
    if kind == "count":
        folder, pattern, count = value
        return (f"kept=$(ls \"{folder}\" | grep -c '{pattern}')\n"
                + verdict(f'[[ "$kept" == {count} ]]', "found $kept"))
    if kind == "holds":
        path, text = value
        return verdict(f'[[ "$(cat "{path}")" == "{text}" ]]', f"{Path(path).name} holds '$(cat \"{path}\")'", True)
    if kind == "empty":
        return verdict(f'[[ -f "{value}" && ! -s "{value}" ]]', "missing or not empty", True)
    if kind == "tar_lists":
        return (f'if [[ -f "${group.var}" ]] && tar -tzf "${group.var}" | grep \'{value}\' > /dev/null; '
                f'then pass "{name}"\nelse fail "{name}" "no archive with {value} at \'${group.var}\'"; fi')
    if kind == "configs_agree":
        return f'{group.run} > /dev/null && pass "{name}" || fail "{name}" "make check fails"'
    raise ValueError(f"unknown shell check {kind!r}")


def _group_sh(group: ShellGroup) -> str:
    lines = [f"# {group.comment}", *group.setup]
    if group.var:
        lines.append(f'{group.var}="$({group.run})"')
    elif group.checks[0][1] != "configs_agree":
        lines.append(f"{group.run} > /dev/null")
    lines += [_check_sh(group, *check) for check in group.checks]
    return "\n".join(lines) + "\n"


def shell_twins() -> list[dict[str, Any]]:
    """The twins of tests/run.sh: per test its group's commands and its check, as data."""
    return [{"file": "tests/run.sh", "name": name, "group": number, "setup": list(group.setup), "run": group.run,
             "var": group.var, "expect": [kind, value]}
            for number, group in enumerate(SHELL_GROUPS) for name, kind, value in group.checks]


def _tests_sh(c: Choices) -> str:
    return """\
#!/usr/bin/env bash
# The scripts' tests: bash tests/run.sh (make test). Prints PASS/FAIL per test; exit 1 on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."
failures=0
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; failures=$((failures + 1)); }
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
""" + "".join("\n" + _group_sh(g) for g in SHELL_GROUPS) + """
echo "$failures failed"
exit $(( failures > 0 ))
"""


def _ci_log(c: Choices) -> str:
    """The failed CI run (ci_failure scenario): what `make test` printed."""
    return _t('''
2025-05-06T07:12:01.482Z ##[group]Run make test
2025-05-06T07:12:01.483Z make test
2025-05-06T07:12:01.497Z shell: /usr/bin/bash -e {0}
2025-05-06T07:12:01.497Z ##[endgroup]
2025-05-06T07:12:01.503Z bash tests/run.sh
2025-05-06T07:12:01.541Z PASS getconf reads server.port
2025-05-06T07:12:01.588Z FAIL rotate keeps 3 rotated files: found 2
2025-05-06T07:12:01.589Z PASS rotate moves app.log to app.log.1
2025-05-06T07:12:01.590Z PASS rotate leaves an empty app.log
2025-05-06T07:12:01.611Z PASS backup archives a folder
2025-05-06T07:12:01.702Z PASS configs agree
2025-05-06T07:12:01.702Z 1 failed
2025-05-06T07:12:01.705Z make: *** [Makefile:8: test] Error 1
2025-05-06T07:12:01.709Z ##[error]Process completed with exit code 2.
''', c)


def _cron_log(c: Choices) -> str:
    """Last night's cron mail (backup_bug scenario)."""
    lines = [f"From: cron@{c.service}-ops-1", "Subject: Cron <backup> bash scripts/backup.sh /srv/exports /backups",
             ""]
    for name in EXPORT_FILES:
        for part in name.split(" "):
            lines.append(f"tar: {part}: Cannot stat: No such file or directory")
    lines.append("tar: Exiting with failure status due to previous errors")
    return "\n".join(lines) + "\n"


def _files(c: Choices) -> dict[str, str]:
    files = {
        ".gitignore": "build/\n*.tar.gz\n__pycache__/\n",
        "README.md": _readme(c),
        "Makefile": _makefile(c),
        "Dockerfile": _dockerfile(c),
        ".github/workflows/ci.yml": _ci_yml(c),
        "config/app.ini": _app_ini(c),
        "config/deploy.yaml": _deploy_yaml(c),
        "config/postgres.ini": _postgres_ini(c),
        "config/alerts.toml": _alerts_toml(c),
        "scripts/getconf.py": GETCONF_PY,
        "scripts/check_config.py": CHECK_CONFIG_PY,
        "scripts/check-config.sh": CHECK_CONFIG_SH,
        "scripts/healthcheck.sh": HEALTHCHECK_SH,
        "scripts/rotate-logs.sh": _rotate_sh(c),
        "scripts/backup.sh": _backup_sh(c),
        "tests/run.sh": _tests_sh(c),
    }
    if c.scenario == "ci_failure":
        files["ci/last-run.log"] = _ci_log(c)
    elif c.scenario == "backup_bug":
        files["logs/cron.log"] = _cron_log(c)
    return files


EXECUTABLE = ("scripts/", "tests/run.sh")


def generate(root: Path, seed: int, params: dict[str, Any]) -> dict[str, Any]:
    """Write the ops repo for `seed` and `params["scenario"]` under `root`; return its variables."""
    scenario = str(params.get("scenario", "base"))
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r} (known: {', '.join(SCENARIOS)})")
    c = _choose(seed, scenario)
    files = _files(c)
    for rel_path in sorted(files):
        path = root / rel_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(files[rel_path].encode("utf-8"))
        if rel_path.startswith(EXECUTABLE) and rel_path.endswith((".sh", ".py")):
            path.chmod(0o755)
    variables = {key: value for key, value in c.__dict__.items()}
    variables.update(
        new_pool_min=c.new_workers * c.threads,
        export_files=list(EXPORT_FILES),
        env_file=f"build/{c.service}.env",
        twins=shell_twins(),
    )
    return variables

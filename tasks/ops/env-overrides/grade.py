"""Overrides reach getconf and the scripts that read the config; empty ones are ignored; a test was added.

Every script runs apart from the grader with the variables the grader picks (values the model never saw); what
getconf prints and the files the rotation leaves in a scratch folder are compared here. The model's test in
tests/run.sh is judged by mutation testing (graders/mutation.py): apart, with the grader's scripts/ in place of the
model's (the pristine scripts and the grader's own getconf.py), the suite must pass there and on an equivalent
rewrite, and fail on each getconf.py that gets overrides wrong."""

import random
import shlex

import mutation
import ops_twins
from gradelib import Grader, task_vars

v = task_vars()
g = Grader()
rng = random.Random(f"env-overrides {v['seed']}")  # hidden values, the same for a seed
g.unchanged(["config"])

port, health_port = 4000 + rng.randrange(900), 5000 + rng.randrange(900)
host = f"db-{rng.randbytes(3).hex()}.override.test"
cases = [
    ("server.port", {"APP_SERVER_PORT": str(port)}, str(port)),
    ("database.host", {"APP_DATABASE_HOST": host}, host),
    ("database.pool_size", {"APP_SERVER_PORT": str(port)}, str(v["pool_size"])),
    ("logs.keep", {"APP_LOGS_KEEP": ""}, str(v["keep"])),
    ("server.workers", {}, str(v["workers"])),
]
# All five in one confined run (one start-up of the sandbox, not five): each prints into its own file in the
# scratch folder, which comes back as data and is compared here.
out_dir = f"{g.scratch}/getconf-{rng.randbytes(3).hex()}"
script = ['mkdir -p "$1"']
for n, (key, env, _) in enumerate(cases):
    assigned = " ".join(f"{name}={shlex.quote(value)}" for name, value in env.items())
    script.append(f'{assigned} python3 scripts/getconf.py {key} > "$1/{n}"'.lstrip())
if g.command_ok(["bash", "-c", "\n".join(script), "getconf", out_dir], collect=[f"{out_dir}/{n}" for n in range(5)],
                what="getconf.py runs with and without overrides") is not None and g.last_run is not None:
    for n, (key, env, expected) in enumerate(cases):
        shown = ", ".join(f"{name}={value!r}" for name, value in env.items()) or "no override"
        printed = g.last_run.text(f"{out_dir}/{n}")
        g.check(f"getconf.py {key} with {shown} prints {expected}", printed is not None and printed.strip() == expected,
                f"printed {printed[:200]!r}" if printed is not None else "printed nothing")
g.command_ok(["bash", "scripts/healthcheck.sh", "--print-url"], env={"APP_SERVER_PORT": str(health_port)},
             expect_output=f":{health_port}/", what="the health check follows APP_SERVER_PORT")

logs = f"{g.scratch}/logs-{rng.randbytes(3).hex()}"
today = f"today {rng.randbytes(4).hex()}\n"
fixture = {f"{logs}/app.log": today, **{f"{logs}/app.log.{day}": f"day {day}\n" for day in range(1, 8)}}
names = ["app.log", *(f"app.log.{n}" for n in range(1, 10))]
run = g.command_ok(["bash", "scripts/rotate-logs.sh"], env={"APP_LOGS_KEEP": "2", "APP_LOGS_DIR": logs},
                   files=fixture, collect=[f"{logs}/{name}" for name in names],
                   what="rotate-logs.sh follows APP_LOGS_DIR and APP_LOGS_KEEP")
if run is not None and g.last_run is not None:
    left = {name: g.last_run.text(f"{logs}/{name}") for name in names}
    found = sorted(name for name, text in left.items() if text is not None)
    g.check("it rotated that folder keeping 2 files, the newest today's",
            found == ["app.log", "app.log.1", "app.log.2"] and left["app.log.1"] == today, f"found {found}")
g.file_matches("README.md", r"APP_<?SECTION>?_<?KEY>?|APP_SERVER_PORT|APP_LOGS_KEEP")
g.some_match(r"APP_[A-Z]+_[A-Z_]+=", ["tests/**"])
# The suite and the config check each on a fresh copy of the tree, not the one the scripts above ran on.
run = ops_twins.tests_pass(g, ["bash", "tests/run.sh"], expect_output="0 failed", what="tests/run.sh passes")
base_tests = 6
passed = (run or "").count("\nPASS ") + (run or "").startswith("PASS ")
g.check("tests/run.sh has a new passing test", passed > base_tests, f"{passed} PASS lines")  # the report's word
ops_twins.configs_agree(g, g.command_ok(["make", "check"], expect_output="config ok", fresh=True))

LOOKUP = '''    section, key = argv[0].split(".", 1)
    try:
'''
OVERRIDE = '''    override = os.environ.get(f"APP_{section}_{key}".upper())
    if override:
        print(override)
        return 0
'''
REWRITE = '''    name = "_".join(["APP", section.upper(), key.upper()])
    if os.environ.get(name, "") != "":
        print(os.environ[name])
        return 0
'''
MUTANTS = {
    "it ignores the overrides": ("override = os.environ.get(f\"APP_{section}_{key}\".upper())", "override = None"),
    "it looks the variable up in lower case": ("f\"APP_{section}_{key}\".upper()", "f\"APP_{section}_{key}\""),
}
scripts = mutation.pristine_folder(g, "scripts")
getconf = scripts["scripts/getconf.py"]
reference = mutation.edited(getconf, (LOOKUP, LOOKUP.replace("    try:\n", OVERRIDE + "    try:\n")))
mutation.tests_catch_mutants(
    g, ["bash", "tests/run.sh"], "scripts/getconf.py", reference,
    rewrite=mutation.edited(getconf, (LOOKUP, LOOKUP.replace("    try:\n", REWRITE + "    try:\n"))),
    mutants={what: mutation.edited(reference, edit) for what, edit in MUTANTS.items()},
    files=scripts, what="the tests in tests/run.sh")
g.finish()

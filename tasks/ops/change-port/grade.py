"""The new port in app.ini, the Dockerfile's EXPOSE, deploy.yaml and the health check; the checks still pass."""


import ops_twins
from gradelib import Grader, task_vars

v = task_vars()
port = v["new_port"]
g = Grader()
g.unchanged(["scripts/check_config.py", "tests"])
g.check(f"config/app.ini: server.port = {port}", g.ini_value("config/app.ini", "server", "port") == str(port),
        f"found {g.ini_value('config/app.ini', 'server', 'port')!r}")
size = len(g.read_bytes("config/deploy.yaml") or b"")
if size > 1 << 20:  # parsing YAML is slow: a padded file must fail here, not run the grader out of its time
    g.check("config/deploy.yaml is a deploy config (under 1 MB)", False, f"it holds {size} bytes")
else:
    g.yaml_key_equals("config/deploy.yaml", "container.port", port)
    g.data_unchanged_except("config/deploy.yaml", ["container.port"])
exposed = []
for line in (g.read("Dockerfile") or "").splitlines():
    parts = line.split()
    if parts and parts[0].upper() == "EXPOSE":
        exposed += [int(p.split("/")[0]) for p in parts[1:] if p.split("/")[0].isdigit()]
g.check(f"the Dockerfile exposes only {port}", exposed == [port], f"it exposes {exposed}")
g.command_ok(["bash", "scripts/healthcheck.sh", "--print-url"], expect_output=f":{port}/",
             what="the health check targets the new port")
# Each on a fresh copy of the tree: nothing an earlier command of the model's code did to its copy counts.
check = g.command_ok(["make", "check"], expect_output="config ok", fresh=True)
ops_twins.tests_pass(g, ["make", "test"], report=check or "")
g.finish()

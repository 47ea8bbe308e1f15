"""alerts.toml's latency thresholds are the new integers; everything else in it is unchanged; make check passes."""

import ops_twins
from gradelib import Grader, task_vars

v = task_vars()
g = Grader()
g.unchanged(["scripts", "tests", "config/app.ini", "config/deploy.yaml", "config/postgres.ini"])
data, why = g.toml_data("config/alerts.toml")
latency = (data or {}).get("latency", {})
errors = (data or {}).get("errors", {})
for key, value in (("crit_ms", v["new_crit_ms"]), ("warn_ms", v["new_warn_ms"])):
    actual = latency.get(key) if isinstance(latency, dict) else None
    g.check(f"latency.{key} = {value}", type(actual) is int and actual == value, why or f"found {actual!r}")
g.check("the error-rate thresholds are unchanged",
        errors == {"warn_rate": v["warn_rate"], "crit_rate": v["crit_rate"]}, why or f"found {errors!r}")
g.check("no other alert sections or keys",
        set(data or {}) == {"latency", "errors"} and set(latency) == {"warn_ms", "crit_ms"},
        f"sections {sorted(data or {})}")
ops_twins.configs_agree(g, g.command_ok(["make", "check"], expect_output="config ok"))
g.finish()

"""settings.json has the new port and limit (as numbers), everything else in it is unchanged."""

from gradelib import Grader, task_vars

v = task_vars()
settings = "config/settings.json"
g = Grader()
g.json_key_equals(settings, "service.port", v["new_port"])
g.json_key_equals(settings, "limits.requests_per_minute", v["new_rpm"])
g.data_unchanged_except(settings, ["service.port", "limits.requests_per_minute"])
# Updating the docs to match is welcome; code and tests have no reason to change.
g.unchanged_except([settings, "docs/**", "README.md"])
g.finish()

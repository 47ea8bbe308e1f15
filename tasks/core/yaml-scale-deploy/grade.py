"""deploy.yaml has the new replica count (a number) and memory limit; nothing else changed."""

from gradelib import Grader, task_vars

v = task_vars()
deploy = "config/deploy.yaml"
g = Grader()
g.yaml_key_equals(deploy, "replicas", v["new_replicas"])
g.yaml_key_equals(deploy, "container.resources.memory", v["new_memory"])
g.data_unchanged_except(deploy, ["replicas", "container.resources.memory"])
g.unchanged_except([deploy])
g.finish()

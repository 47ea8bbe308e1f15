"""deploy.yaml has the new replica count (a number) and memory limit; nothing else changed."""

import re

from gradelib import Grader, task_vars

v = task_vars()
deploy = "config/deploy.yaml"
UNITS = {"Ki": 1 / 1024, "Mi": 1, "Gi": 1024}


def mebibytes(quantity: object) -> float | None:
    """A memory quantity in Mi ("1024Mi" and "1Gi" are the same limit); None if it is not one."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)(Ki|Mi|Gi)", str(quantity).strip())
    return float(match.group(1)) * UNITS[match.group(2)] if match else None


g = Grader()
size = len(g.read_bytes(deploy) or b"")
if size > 1 << 20:  # parsing YAML is slow: a padded file must fail here, not run the grader out of its time
    g.check(f"{deploy} is a deploy config (under 1 MB)", False, f"it holds {size} bytes")
else:
    g.yaml_key_equals(deploy, "replicas", v["new_replicas"])
    g.key_satisfies(deploy, "container.resources.memory",
                    lambda memory: mebibytes(memory) == mebibytes(v["new_memory"]),
                    f"is {v['new_memory']} (in any unit)")
    g.data_unchanged_except(deploy, ["replicas", "container.resources.memory"])
g.unchanged_except([deploy])
g.finish()

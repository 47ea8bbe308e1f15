"""The module meets the spec (hidden tests), and the agent's own tests for it exist and pass."""

from gradelib import Grader, task_vars

v = task_vars()
module, tests = f"{v['src_dir']}/{v['spec_module']}.py", f"tests/test_{v['spec_module']}.py"
g = Grader()
g.defines(module, "parse_duration")
g.defines(module, "format_duration")
g.file_exists(tests)
run = g.pytest_passes([tests], extra_tests=["test_hidden_durations.py"])
if run is not None:
    g.check(f"{tests} has passing tests", run.count("passed", module=f"test_{v['spec_module']}") >= 1, "none passed")
g.finish()

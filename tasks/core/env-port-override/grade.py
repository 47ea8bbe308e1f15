"""The variable overrides the port with validation (hidden tests), is documented, and has a test."""

from gradelib import Grader, task_vars

v = task_vars()
g = Grader()
g.file_contains("docs/configuration.md", v["env_var"])
g.file_contains("tests/test_config.py", v["env_var"])
run = g.pytest_passes(["tests/test_config.py", "tests/test_cli.py"], extra_tests=["test_hidden_env_port.py"],
                      min_passed=v["test_config_count"] + v["test_cli_count"] + 9)
if run is not None:
    added = run.count("passed", module="test_config") - v["test_config_count"]
    g.check("tests/test_config.py has a new passing test", added >= 1, "no test was added there")
g.finish()

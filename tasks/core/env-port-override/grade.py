"""The variable overrides the port with validation (load_settings called apart with the variable set and unset,
every answer judged here), is documented, and has a test that catches a config.py that gets it wrong.

The count of passing tests is a report's word (evidence); what decides is mutation testing (graders/mutation.py):
tests/test_config.py runs apart with the grader's config.py in place of the model's (the pristine module with the
grader's own override), where it must pass, on a rewrite of that, and on broken copies, each of which it must fail.
"""

import mutation
from gradelib import Call, CallResult, Grader, pytest_runs_ahead, task_vars
from pyservice_checks import SETUP, judged

v = task_vars()
env = v["env_var"]
g = Grader()
pytest_runs_ahead()  # mutation testing's pytest runs: the harness readies them meanwhile
g.file_contains("docs/configuration.md", env)
g.file_contains("tests/test_config.py", env)
# config.py is the only module touched: its tests and the CLI tests that load settings pass, one of them new.
run = g.pytest_passes(["tests/test_config.py", "tests/test_cli.py"],
                      min_passed=v["test_config_count"] + v["test_cli_count"] + 1)
if run is not None:
    added = run.count("passed", module="test_config") - v["test_config_count"]
    g.check("tests/test_config.py has a new passing test", added >= 1, "no test was added there")

# One process of the model's code, on a fresh copy of the tree (not the suite's): set or unset the variable
# (os.environ), load the shipped settings, read the port.
settings = str(g.work / "config" / "settings.json")
steps: list[tuple[str, Call, object]] = [
    ("", Call("import_module", ["os"]), SETUP),  # $0
    ("", Call("import_module", [f"{v['pkg']}.config"]), SETUP),  # $1
]


def load(value: str | None) -> int:
    """Steps that set the variable (None: unset it) and load the settings; the index of the loaded settings."""
    setting = Call("$0.environ.__setitem__", [env, value]) if value is not None else Call("$0.environ.pop", [env, None])
    steps.extend([("", setting, SETUP), ("", Call("$1.load_settings", [settings]), SETUP)])
    return len(steps) - 1


def refused(result: CallResult) -> bool:
    return result.raised("SettingsError") and env in result.message


index = load(None)
steps.append((f"with {env} unset, the port is the file's {v['port']}", Call(f"${index}.port", call=False), v["port"]))
for port in (v["new_port"], 1, 65535):
    index = load(str(port))
    steps.append((f"with {env}={port}, the port is {port}", Call(f"${index}.port", call=False), port))
    steps.append((f"with {env}={port}, requests_per_minute is still {v['rpm']}",
                  Call(f"${index}.requests_per_minute", call=False), v["rpm"]))
for value in ("abc", "0", "65536", "-80", "80.5"):
    steps.append(("", Call("$0.environ.__setitem__", [env, value]), SETUP))
    steps.append((f"with {env}={value}, load_settings raises SettingsError naming {env}",
                  Call("$1.load_settings", [settings]), refused))
judged(g, "importlib", steps, fresh=True)
module = f"{v['src_dir']}/config.py"
ANCHOR = "    if settings.requests_per_minute <= 0:\n"
OVERRIDE = (f'    override = os.environ.get("{env}")\n'
            "    if override is not None:\n"
            "        if not override.strip().isdigit() or not 1 <= int(override) <= 65535:\n"
            f'            raise SettingsError(f"{env} must be a port number from 1 to 65535, not {{override!r}}")\n'
            "        settings = replace(settings, port=int(override))\n")
REWRITE = (f'    if "{env}" in os.environ:\n'
           f'        text = os.environ["{env}"].strip()\n'
           "        port = int(text) if text.isdigit() else 0\n"
           "        if port < 1 or port > 65535:\n"
           f'            raise SettingsError("{env} is not a port number: " + repr(text))\n'
           "        settings = replace(settings, port=port)\n")
MUTANTS = {
    "the variable is ignored": (f'override = os.environ.get("{env}")', "override = None"),
    "the port stays a string": ("port=int(override)", "port=override.strip()"),
}
pristine = mutation.pristine_text(g, module)
base = mutation.edited(pristine, ("import json\n", "import json\nimport os\n"),
                       ("from dataclasses import dataclass\n", "from dataclasses import dataclass, replace\n"))
reference = mutation.edited(base, (ANCHOR, OVERRIDE + ANCHOR))
argv, files, run_env = mutation.pytest_command(g, ["tests/test_config.py"], pythonpath=["src"])
mutation.tests_catch_mutants(g, argv, module, reference, rewrite=mutation.edited(base, (ANCHOR, REWRITE + ANCHOR)),
                             mutants={what: mutation.edited(reference, edit) for what, edit in MUTANTS.items()},
                             files=files, env=run_env, what="the tests in tests/test_config.py")
g.finish()

"""The variable overrides the port with validation (load_settings called apart with the variable set and unset,
every answer judged here), is documented, and has a test."""

from gradelib import Call, Grader, make_calls, task_vars

v = task_vars()
env = v["env_var"]
g = Grader()
g.file_contains("docs/configuration.md", env)
g.file_contains("tests/test_config.py", env)
# config.py is the only module touched: its tests and the CLI tests that load settings pass, one of them new.
run = g.pytest_passes(["tests/test_config.py", "tests/test_cli.py"],
                      min_passed=v["test_config_count"] + v["test_cli_count"] + 1)
if run is not None:
    added = run.count("passed", module="test_config") - v["test_config_count"]
    g.check("tests/test_config.py has a new passing test", added >= 1, "no test was added there")

# One process of the model's code, on a fresh copy of the tree (not the suite's): set or unset the variable
# (os.environ), load the shipped settings, read the port. Steps are (what the check says, the call, what it must
# return); a step without words only sets up.
settings = str(g.work / "config" / "settings.json")
steps: list[tuple[str, Call, object]] = [
    ("", Call("import_module", ["os"]), None),  # $0
    ("", Call("import_module", [f"{v['pkg']}.config"]), None),  # $1
]


def load(value: str | None) -> int:
    """Steps that set the variable (None: unset it) and load the settings; the index of the loaded settings."""
    setting = Call("$0.environ.__setitem__", [env, value]) if value is not None else Call("$0.environ.pop", [env, None])
    steps.extend([("", setting, None), ("", Call("$1.load_settings", [settings]), None)])
    return len(steps) - 1


index = load(None)
steps.append((f"with {env} unset, the port is the file's {v['port']}", Call(f"${index}.port", call=False), v["port"]))
for port in (v["new_port"], 1, 65535):
    index = load(str(port))
    steps.append((f"with {env}={port}, the port is {port}", Call(f"${index}.port", call=False), port))
    steps.append((f"with {env}={port}, requests_per_minute is still {v['rpm']}",
                  Call(f"${index}.requests_per_minute", call=False), v["rpm"]))
bad_values = ("abc", "0", "65536", "-80", "80.5")
for value in bad_values:
    steps.append(("", Call("$0.environ.__setitem__", [env, value]), None))
    steps.append((f"with {env}={value}, load_settings raises SettingsError naming {env}",
                  Call("$1.load_settings", [settings]), "SettingsError"))
if g.ok:
    results = make_calls("importlib", [call for _, call, _ in steps], fresh=True)
    for (what, call, want), result in zip(steps, results, strict=True):
        if not what:
            if not result.ok:
                g.check(f"{call.target}{tuple(call.args)!r} works", False, result.describe())
        elif want == "SettingsError":
            g.check(what, result.raised("SettingsError") and env in result.message, result.describe())
        else:
            g.check(what, result.returned(want), result.describe())
else:
    print("· load_settings with the variable set and unset: skipped (an earlier check failed)", flush=True)

g.finish()

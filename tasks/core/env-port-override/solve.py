"""Reference fix: read the variable in load_settings, one docs line, one test."""

from pathlib import Path

from gradelib import task_vars

v = task_vars()
env = v["env_var"]
config = Path(v["src_dir"]) / "config.py"
text = config.read_text(encoding="utf-8")
text = text.replace("import json\n", "import json\nimport os\n", 1)
text = text.replace(
    "    if settings.requests_per_minute <= 0:\n",
    f'    override = os.environ.get("{env}")\n'
    "    if override is not None:\n"
    "        if not override.strip().isdigit() or not 1 <= int(override) <= 65535:\n"
    f'            raise SettingsError(f"{env} must be a port number from 1 to 65535, not {{override!r}}")\n'
    "        settings = replace(settings, port=int(override))\n"
    "    if settings.requests_per_minute <= 0:\n",
    1,
)
text = text.replace("from dataclasses import dataclass\n", "from dataclasses import dataclass, replace\n", 1)
config.write_text(text, encoding="utf-8")

docs = Path("docs/configuration.md")
docs.write_text(
    docs.read_text(encoding="utf-8") + f"\nSet the environment variable `{env}` to override `service.port`.\n",
    encoding="utf-8",
)

tests = Path("tests/test_config.py")
tests.write_text(tests.read_text(encoding="utf-8") + f'''

def test_port_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("{env}", "9999")
    minimal = {{"service": {{"port": 8000}}, "limits": {{"requests_per_minute": 60}}}}
    assert load_settings(write(tmp_path, "settings.json", json.dumps(minimal))).port == 9999
''', encoding="utf-8")

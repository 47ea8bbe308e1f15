"""Hidden checks for env-port-override."""

import importlib
import json
import os
from pathlib import Path

import pytest

VARS = json.loads(Path(os.environ["AGENTIC_EVAL_VARS"]).read_text(encoding="utf-8"))
SANDBOX = Path(os.environ["AGENTIC_EVAL_SANDBOX"])
ENV = VARS["env_var"]


def load(monkeypatch, value):
    config = importlib.import_module(f"{VARS['pkg']}.config")
    if value is None:
        monkeypatch.delenv(ENV, raising=False)
    else:
        monkeypatch.setenv(ENV, value)
    return config, lambda: config.load_settings(SANDBOX / "config" / "settings.json")


def test_unset_keeps_the_file_port(monkeypatch):
    _, load_settings = load(monkeypatch, None)
    assert load_settings().port == VARS["port"]


@pytest.mark.parametrize("port", [VARS["new_port"], 1, 65535])
def test_variable_wins(monkeypatch, port):
    _, load_settings = load(monkeypatch, str(port))
    settings = load_settings()
    assert settings.port == port
    assert settings.requests_per_minute == VARS["rpm"]


@pytest.mark.parametrize("value", ["abc", "0", "65536", "-80", "80.5"])
def test_bad_values_are_settings_errors(monkeypatch, value):
    config, load_settings = load(monkeypatch, value)
    with pytest.raises(config.SettingsError, match=ENV):
        load_settings()

"""The CLI's layout: one module per command, each registering its flags without importing anything heavy."""

from __future__ import annotations

import argparse
import pkgutil
import subprocess
import sys

from agentic_eval import cli

HEAVY = ("httpx", "pydantic", "rich", "openai", "jsonschema", "docker", "git")


def test_every_cli_module_imports_nothing_heavy() -> None:
    """Importing any module of agentic_eval.cli (as `--help` does for every command) loads none of the
    heavy libraries: they belong inside the handlers."""
    names = sorted(m.name for m in pkgutil.iter_modules(cli.__path__) if m.name != "__main__")
    assert set(cli.COMMANDS) <= set(names)
    code = (f"import importlib, sys\nfor n in {names!r}: importlib.import_module('agentic_eval.cli.' + n)\n"
            f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == ""


def test_each_command_module_registers_its_command() -> None:
    """Every module in COMMANDS adds exactly its own command (its name with - for _) and a handler."""
    import importlib

    for name in cli.COMMANDS:
        sub = argparse.ArgumentParser().add_subparsers(dest="command")
        module = importlib.import_module(f"agentic_eval.cli.{name}")
        module.register(sub)
        assert list(sub.choices) == [name.replace("_", "-")]
        assert sub.choices[name.replace("_", "-")].get_default("handler") is module.handle


def test_a_command_without_its_action_prints_its_help(capsys) -> None:  # type: ignore[no-untyped-def]
    for command in ("tasks", "agents", "sandbox"):
        assert cli.main([command]) == 2
        assert "ACTION" in capsys.readouterr().out


def test_the_local_servers_child_is_its_own_module() -> None:
    """LocalServer starts `python -m agentic_eval.local.child`: that module parses its arguments without the
    CLI (and without xllamacpp until it serves)."""
    from pathlib import Path

    from agentic_eval.local import server

    assert '"-m", "agentic_eval.local.child"' in Path(server.__file__).read_text(encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "agentic_eval.local.child", "--help"], capture_output=True, text=True,
                         timeout=60, check=True)
    assert "--gguf" in out.stdout and "--parent" in out.stdout

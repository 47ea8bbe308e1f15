"""Guards for the instruments' layout: no instrument imports another; what they share is a helper.

The rule, as instruments/__init__.py states it: an instrument module imports no other instrument
module, and a helper module imports no instrument module. Every module of the package is one or the
other, so a new module has to be placed before it can be imported: an instrument whose runs are
recorded by its row in registry.INSTRUMENTS, anything else by its name here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import agentic_eval.instruments as instruments
from agentic_eval.instruments import registry

HERE = Path(instruments.__file__).parent
RECORDED = {e.module for e in registry.INSTRUMENTS}
INSTRUMENTS = RECORDED | {"probe"}  # probe prints what a server does and records nothing
HELPERS = {"exchange", "anthropic", "servers", "cases", "catalog", "toolcheck", "metrics", "speedstats", "consistency",
           "wordproblems", "registry"}
PACKAGE = "agentic_eval.instruments"


def imported_instrument_modules(source: str) -> set[str]:
    """The modules of agentic_eval.instruments that `source` imports (at any depth, lazy imports too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(PACKAGE + "."):
                    found.add(alias.name.split(".")[2])
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:  # relative: inside the package itself
                module = PACKAGE + ("." + module if module else "") if node.level == 1 else ""
            if module == PACKAGE:  # from agentic_eval.instruments import battery
                found |= {alias.name for alias in node.names}
            elif module.startswith(PACKAGE + "."):
                found.add(module.split(".")[2])
    return found


def _modules() -> dict[str, str]:
    return {p.stem: p.read_text() for p in HERE.glob("*.py") if p.stem != "__init__"}


def test_every_module_is_an_instrument_or_a_helper() -> None:
    assert set(_modules()) == INSTRUMENTS | HELPERS
    assert not INSTRUMENTS & HELPERS


@pytest.mark.parametrize("name", sorted(INSTRUMENTS | HELPERS))
def test_no_module_imports_an_instrument(name: str) -> None:
    imported = imported_instrument_modules(_modules()[name]) - {name}
    assert not imported & INSTRUMENTS, f"{name} imports the instrument(s) {sorted(imported & INSTRUMENTS)}"
    assert imported <= HELPERS, f"{name} imports {sorted(imported - HELPERS)}, neither instrument nor helper"


def test_the_rule_is_stated_where_a_newcomer_reads() -> None:
    doc = instruments.__doc__ or ""
    for name in INSTRUMENTS | HELPERS:
        assert f"\n    {name} " in doc, f"{name} is not listed in instruments/__init__.py's docstring"
    rule = " ".join(doc.split())
    assert "an instrument module (" in rule and ") imports no other instrument module" in rule
    assert "a helper module (" in rule and ") imports no instrument module" in rule


@pytest.mark.parametrize("source, expected", [
    ("from agentic_eval.instruments.battery import run_case", {"battery"}),
    ("from agentic_eval.instruments import battery, exchange as x", {"battery", "exchange"}),
    ("import agentic_eval.instruments.speed", {"speed"}),
    ("from .think_check import stream_chat", {"think_check"}),
    ("from . import forms", {"forms"}),
    ("def f():\n    from agentic_eval.instruments.probe import SHAPES", {"probe"}),
    ("from agentic_eval.endpoint import Endpoint\nimport httpx", set()),
])
def test_the_scan_sees_every_import_form(source: str, expected: set[str]) -> None:
    assert imported_instrument_modules(source) == expected


def test_every_exported_name_resolves() -> None:
    for name in instruments.__all__:
        assert getattr(instruments, name) is not None, name


def test_the_table_names_each_recorded_instrument_once() -> None:
    kinds = [e.kind for e in registry.INSTRUMENTS]
    assert len(set(kinds)) == len(kinds) and len(RECORDED) == len(kinds)
    assert registry.kinds() == tuple(kinds) and registry.entry("think_check").module == "think_check"
    with pytest.raises(KeyError):
        registry.entry("nope")


@pytest.mark.parametrize("row", registry.INSTRUMENTS, ids=lambda e: e.kind)
def test_each_recorded_instrument_offers_headline_and_record(row: registry.InstrumentEntry) -> None:
    """What the table promises of a module: its kind, `headline(result)`, and `record(result, runs_root, ...)`
    returning the run folder."""
    import inspect

    module = row.load()
    assert module.KIND == row.kind
    assert len(inspect.signature(module.headline).parameters) == 1
    params = list(inspect.signature(module.record).parameters.values())
    assert params[1].name == "runs_root" and params[1].default == Path("runs")
    assert all(p.kind is p.KEYWORD_ONLY for p in params[2:]), "record's own settings are keywords"
    assert inspect.signature(module.record).return_annotation in (Path, "Path")


@pytest.mark.parametrize("row", registry.campaign_entries(), ids=lambda e: e.kind)
def test_each_campaign_instrument_offers_its_table_measure_and_figures(row: registry.InstrumentEntry) -> None:
    """What `campaign=True` promises: OPTIONS (a strict pydantic model whose defaults make a valid table, with
    runs_wanted and asked), measure(endpoint, model, options, runs_root, log) and figures(runs, folders); and a CLI
    module with its command."""
    import inspect

    from pydantic import BaseModel

    module = row.load_campaign()
    options = module.OPTIONS()
    assert isinstance(options, BaseModel) and type(options).model_config.get("extra") == "forbid"
    assert options.runs_wanted() >= 1 and isinstance(options.asked(), dict)
    assert list(inspect.signature(module.measure).parameters) == ["endpoint", "model", "options", "runs_root", "log"]
    assert list(inspect.signature(module.figures).parameters) == ["runs", "folders"]
    assert row.cli and row.command == row.kind.replace("_", "-")


def test_the_cli_lists_the_tables_commands() -> None:
    from agentic_eval import cli

    assert [c for c in cli.COMMANDS if c not in (*cli.BEFORE_INSTRUMENTS, *cli.AFTER_INSTRUMENTS)] == [
        e.cli for e in registry.INSTRUMENTS if e.cli]


def test_the_report_reads_the_table() -> None:
    """The report's columns are the table's, in its order."""
    from agentic_eval.report.summary import INSTRUMENT_COLUMNS

    assert INSTRUMENT_COLUMNS == tuple((e.kind, e.title) for e in registry.INSTRUMENTS)


def test_only_instruments_record_their_runs() -> None:
    """`save_instrument_run` is called by the recorded instruments' own modules only (not the CLI)."""
    package = HERE.parent
    callers = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if name == "save_instrument_run":
                    callers.add(path.relative_to(package).as_posix())
    assert callers == {f"instruments/{m}.py" for m in RECORDED}

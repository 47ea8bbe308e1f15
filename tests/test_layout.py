"""Guards for the package layout: what a move must never change, and what the layout promises.

The digests below were measured before the layout change (commit f4e204d) and must stay fixed: the
battery's cases, the built-in agent's system prompt at its sizes, and the form matrix's tool catalog are
what recorded runs were measured with, so a refactor that changes a byte of them changes the benchmark.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

BATTERY_DIGEST = "4e49b3585fd413ef"  # cases_digest(generate_cases(45739))
PROMPT_DIGESTS = {  # sha256 prefix of build_system_prompt(size)
    None: "b264ff9855ef9387",
    2000: "ef682989420abfae",
    9300: "05b91e8beecfda93",
    30000: "e8cbc1af3d0f8711",
}
FORM_CATALOG_DIGEST = "cbe2b9011e8f520f"  # sha256 prefix of the 500-tool form catalog as sorted JSON

HEAVY = ("httpx", "pydantic", "rich", "openai", "jsonschema", "docker", "git", "uvicorn")


def _run(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return out.stdout.strip()


def test_battery_cases_are_byte_identical() -> None:
    assert _run("from agentic_eval.instruments.battery import cases_digest, generate_cases;"
                "print(cases_digest(generate_cases(45739)))") == BATTERY_DIGEST


def test_system_prompts_are_byte_identical() -> None:
    from agentic_eval.agents.builtin.prompts import build_system_prompt

    for size, digest in PROMPT_DIGESTS.items():
        text = build_system_prompt(size)
        assert hashlib.sha256(text.encode()).hexdigest()[:16] == digest, size


def test_form_catalog_is_byte_identical() -> None:
    from agentic_eval.instruments.forms import form_catalog

    blob = json.dumps([asdict(t) for t in form_catalog(500)], sort_keys=True).encode()
    assert hashlib.sha256(blob).hexdigest()[:16] == FORM_CATALOG_DIGEST


def test_help_imports_nothing_heavy() -> None:
    """`agentic-eval --help` builds the parser only: none of the heavy libraries may load for it."""
    code = ("import sys; from agentic_eval.cli import build_parser; build_parser(); import agentic_eval;"
            f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))")
    assert _run(code) == ""


def test_the_builtin_agent_does_not_import_the_openai_sdk() -> None:
    """The built-in agent speaks to the endpoint with plain httpx: the `openai` SDK's import (a model of
    every API it covers, ~0.3 s of CPU) was most of a campaign's start-up, and -j on few cores pays it."""
    code = ("import sys; from agentic_eval.agents import load_agent; load_agent('builtin');"
            "import agentic_eval.agents.builtin.loop, agentic_eval.wire.recorder;"
            "print('openai' in sys.modules)")
    assert _run(code) == "False"


PACKAGE = Path(__file__).resolve().parents[1] / "agentic_eval"


def _packages() -> list[Path]:
    return sorted(p.parent for p in PACKAGE.rglob("__init__.py") if "__pycache__" not in p.parts)


def _dotted(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def test_every_public_name_resolves() -> None:
    import importlib

    for pkg in _packages():
        module = importlib.import_module(_dotted(pkg / "__init__.py"))
        names = getattr(module, "__all__", None)
        assert names, f"{module.__name__} has no __all__"
        for name in names:
            assert getattr(module, name) is not None, f"{module.__name__}.{name}"


def test_top_level_face_is_small_and_consistent() -> None:
    import agentic_eval

    assert agentic_eval.__all__ == sorted(["__version__", *agentic_eval._EXPORTS])
    assert 10 <= len(agentic_eval.__all__) <= 20


def _registered_instrument_modules(pkg: Path) -> set[str]:
    """The instrument registry is the list of instrument modules and their CLI modules: a new instrument is its
    module, its CLI module and its row (3 files), not also a line in two package docstrings."""
    from agentic_eval.instruments.registry import INSTRUMENTS

    if pkg == PACKAGE / "instruments":
        return {e.module for e in INSTRUMENTS if "." not in e.module}
    if pkg == PACKAGE / "cli":
        return {e.cli for e in INSTRUMENTS if e.cli and "." not in e.cli}
    return set()


def test_each_package_docstring_lists_its_modules() -> None:
    import ast

    for pkg in _packages():
        first = ast.parse((pkg / "__init__.py").read_text()).body[0]
        assert isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant), f"{pkg}: no docstring"
        doc = str(first.value.value)  # raw: get_docstring would strip the list's indentation
        listed = {line.split()[0].rstrip("/") for line in doc.splitlines() if line.startswith("    ") and line.split()}
        present = {p.stem for p in pkg.glob("*.py") if p.stem not in ("__init__", "__main__")}
        present |= {p.name for p in pkg.iterdir() if (p / "__init__.py").is_file()}
        if pkg == PACKAGE:  # the top level lists its subpackages; its modules are named in prose
            present = {p.name for p in pkg.iterdir() if (p / "__init__.py").is_file()}
        listed |= _registered_instrument_modules(pkg)
        assert present <= listed, f"{_dotted(pkg / '__init__.py')}: not listed in its docstring: {present - listed}"


def test_private_modules_stay_inside_their_package() -> None:
    """A `_module` is imported only from inside its own subpackage (tests and benchmarks included)."""
    import ast

    root = PACKAGE.parent
    files = [*PACKAGE.rglob("*.py"), *(root / "tests").glob("*.py"), *(root / "benchmarks").glob("*.py")]
    for path in files:
        here = _dotted(path) if PACKAGE in path.parents else ""
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("agentic_eval"):
                targets = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name.startswith("agentic_eval")]
            else:
                continue
            for target in targets:
                parts = target.split(".")
                as_path = root.joinpath(*parts)
                if not (as_path.with_suffix(".py").is_file() or as_path.is_dir()):
                    parts = parts[:-1]  # a name imported from a module, not a module
                for i, part in enumerate(parts):
                    if part.startswith("_") and not part.startswith("__") and part != "_lazy":
                        owner = ".".join(parts[:i])
                        inside = here == owner or here.startswith(owner + ".")  # a package's face counts
                        assert inside, f"{path.relative_to(root)} imports {target}"


def test_ruff_is_clean() -> None:
    """The explicit rule set in pyproject.toml, line length included, holds over the whole repository."""
    out = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", "."],
                         cwd=PACKAGE.parent, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-1000:]


def test_mypy_is_clean() -> None:
    """The package, and the grader library that graders import in the sandbox (graders/), type-check under the
    settings in pyproject.toml (CI runs it here, beside ruff)."""
    out = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "agentic_eval", "graders"],
                         cwd=PACKAGE.parent,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-1000:]


# The floors of the house: a unit (a subpackage, or a module at the top) imports only units on lower floors,
# so no two units import each other, and nothing inside imports the package's face. Imports made for type
# checking only are left out; imports inside functions count (they are edges all the same).
FLOORS: tuple[tuple[str, ...], ...] = (
    ("errors", "_version", "_lazy", "trees", "plural"),
    ("plugins", "paths", "inputs", "leftovers"),
    ("endpoint", "runfiles"),
    ("confine", "local", "wire"),
    ("results",),
    ("classify", "packs", "realpy"),
    ("grading",),
    ("faults", "validation"),
    ("agents", "instruments"),
    ("report", "runner", "testing", "export"),
    ("campaign",),
    ("cli",),
    ("__init__", "__main__"),
)


ALIASES = frozenset({"agentic_eval.packs.redteam"})
"""Old addresses kept for plugins after a move (a re-export of the new module, nothing else): not edges."""


def _unit_imports() -> dict[str, set[str]]:
    import ast

    def unit(dotted: str) -> str:
        parts = dotted.split(".")
        return parts[1] if len(parts) > 1 else "__init__"

    edges: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        dotted = _dotted(path)
        if dotted in ALIASES:
            continue
        here = unit(dotted) if dotted != "agentic_eval" else "__init__"
        tree = ast.parse(path.read_text())
        typing_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                       and "TYPE_CHECKING" in ast.unparse(node.test) for n in ast.walk(node)}
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            names = []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in names:
                if name == "agentic_eval" and here != "__init__":
                    raise AssertionError(f"{dotted} imports the package face")
                if name.startswith("agentic_eval.") and unit(name) != here:
                    edges.setdefault(here, set()).add(unit(name))
    return edges


def test_an_alias_is_the_module_it_names() -> None:
    """A plugin importing an old address gets the very objects of the new one (entry points of installs made
    before the move name the built-in attempts there)."""
    import importlib

    from agentic_eval.validation import redteam

    old = importlib.import_module("agentic_eval.packs.redteam")
    assert "agentic_eval.packs.redteam" in ALIASES
    assert old.Attempt is redteam.Attempt and old.walk_files is redteam.walk_files and old.ANY == redteam.ANY
    assert {a.name for a in redteam.BUILTIN_ATTEMPTS} <= {getattr(old, n).name for n in dir(old) if n.isupper()
                                                         and hasattr(getattr(old, n), "apply")}


def test_the_floors_hold() -> None:
    """Every unit is on a floor, and imports only units on floors below its own."""
    floor = {name: level for level, names in enumerate(FLOORS) for name in names}
    units = {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir()
             if (p.suffix == ".py" and p.stem != "__main__") or (p / "__init__.py").is_file()}
    units = {"__init__" if u == "__init__" else u for u in units}
    assert units - set(floor) == set(), f"units on no floor: {units - set(floor)}"
    wrong = sorted(f"{a} -> {b}" for a, targets in _unit_imports().items() for b in targets
                   if floor.get(b, -1) >= floor[a])
    assert not wrong, f"imports that go sideways or up: {wrong}"


def test_no_function_takes_more_than_a_dozen_parameters() -> None:
    """Settings travel as objects (RunSettings, Confinement, AgentContext), never as long keyword lists."""
    import ast

    long = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                a = node.args
                count = len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs)
                count -= bool(a.args and a.args[0].arg in ("self", "cls"))
                if count > 12:
                    long.append(f"{_dotted(path)}.{node.name}: {count}")
    assert not long, long

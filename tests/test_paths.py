"""One place decides the cache and tools folders (agentic_eval/paths.py), and every user of them agrees."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from agentic_eval import paths
from agentic_eval.agents.adapters import install
from agentic_eval.confine import docker_image
from agentic_eval.local import server
from agentic_eval.validation import fixsize

PACKAGE = Path(paths.__file__).parent


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HOME in a temporary folder, and none of the variables set."""
    for name in (paths.CACHE_ENV, paths.TOOLS_ENV, "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.mark.parametrize("env, cache, tools", [
    ({}, "~/.cache/agentic-eval", "~/.cache/agentic-eval/tools"),
    ({"XDG_CACHE_HOME": "/x/cache"}, "/x/cache/agentic-eval", "/x/cache/agentic-eval/tools"),
    ({"XDG_CACHE_HOME": "~/xdg"}, "~/xdg/agentic-eval", "~/xdg/agentic-eval/tools"),
    ({"AGENTIC_EVAL_CACHE": "/c", "XDG_CACHE_HOME": "/x/cache"}, "/c", "/c/tools"),
    ({"AGENTIC_EVAL_CACHE": "~/c"}, "~/c", "~/c/tools"),
    ({"AGENTIC_EVAL_TOOLS": "~/t"}, "~/.cache/agentic-eval", "~/t"),
    ({"AGENTIC_EVAL_TOOLS": "/t", "AGENTIC_EVAL_CACHE": "/c"}, "/c", "/t"),
    ({"AGENTIC_EVAL_CACHE": "", "XDG_CACHE_HOME": "", "AGENTIC_EVAL_TOOLS": ""},  # empty counts as unset
     "~/.cache/agentic-eval", "~/.cache/agentic-eval/tools"),
    ({"AGENTIC_EVAL_CACHE": "relative/c"}, "relative/c", "relative/c/tools"),
])
def test_precedence_and_home(home: Path, monkeypatch: pytest.MonkeyPatch, env: dict[str, str], cache: str,
                             tools: str) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)

    def expect(text: str) -> Path:
        return home / text[2:] if text.startswith("~/") else Path(text)

    assert paths.cache_dir() == expect(cache)
    assert paths.tools_dir() == expect(tools)
    # every user of a folder reads it from paths, `~` included
    assert server.cache_dir() == expect(cache)
    assert docker_image.cache_dir() == expect(cache) / "images"
    assert install.tools_dir() == expect(tools)
    assert install.CliTool("x", "npm", "x", "1", "x", "").home == expect(tools) / "x"


def test_fix_sizes_are_cached_in_the_cache_folder(home: Path, monkeypatch: pytest.MonkeyPatch, mini_pack: Path) -> None:
    from agentic_eval.packs import load_tasks

    monkeypatch.setenv(paths.CACHE_ENV, "~/somewhere")
    (task,) = load_tasks([str(mini_pack)]).tasks
    size = fixsize.reference_fix_size(task)
    assert not size.error
    (cached,) = (home / "somewhere" / "fix-size").iterdir()
    assert cached.name.startswith(task.id)
    assert not (Path.cwd() / "~").exists()  # `~` was expanded, not taken as a folder name


def test_packs_no_longer_reach_into_local() -> None:
    """packs/ found its cache through local.server; it asks paths now, so packs does not depend on local."""
    for path in (PACKAGE / "packs").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith("agentic_eval.local"), f"{path.name} imports {node.module}"
            elif isinstance(node, ast.Import):
                assert not any(a.name.startswith("agentic_eval.local") for a in node.names), path.name


def test_no_other_module_reads_the_cache_variables() -> None:
    """The variables are read in paths.py only (local/server.py also checks whether they are set, to look for an
    assembled model in the account's own home too)."""
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if path.name in ("paths.py",) or path == PACKAGE / "local" / "server.py":
            continue
        for name in ("AGENTIC_EVAL_CACHE", "AGENTIC_EVAL_TOOLS", "XDG_CACHE_HOME"):
            assert f'environ.get("{name}")' not in text and f'environ["{name}"]' not in text, \
                f"{path.relative_to(PACKAGE)} reads {name}"

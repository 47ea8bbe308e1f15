"""The built-in agent's tools, run for real in a temporary sandbox folder."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.agents.builtin.tools import TOOL_NAMES, TOOL_SCHEMAS, ToolLimits, execute_tool

FAST = ToolLimits(bash_timeout_s=10)


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    root = tmp_path / "sandbox"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def add(a, b):\n    return a - b\n\nPORT = 8080\n")
    (root / "notes.txt").write_text("one\ntwo\nthree\n")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("PORT = 1\n")
    (tmp_path / "outside.txt").write_text("secret\n")
    return root


def run(root: Path, name: str, arguments: dict[str, Any] | str, limits: ToolLimits = FAST
        ) -> tuple[str, bool]:
    result = execute_tool(root, name, arguments, limits)
    return result.text, result.is_error


def test_every_tool_has_a_schema() -> None:
    assert set(TOOL_NAMES) == {"read_file", "write_file", "edit_file", "list_dir", "grep", "bash"}
    for tool in TOOL_SCHEMAS:
        assert tool["type"] == "function"
        assert tool["function"]["parameters"]["type"] == "object"  # type: ignore[typeddict-item]


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("read_file", {"path": "notes.txt"}, "one\ntwo\nthree\n"),
        ("read_file", {"path": "notes.txt", "offset": 2, "limit": 1},
         "two\n\n[... file has 3 lines; read more with offset=3 ...]"),
        ("write_file", {"path": "new/dir/f.txt", "content": "héllo"}, "wrote 6 bytes to new/dir/f.txt"),
        ("edit_file", {"path": "src/app.py", "old_string": "a - b", "new_string": "a + b"},
         "replaced 1 occurrence in src/app.py"),
        ("list_dir", {}, ".git/\nnotes.txt\nsrc/"),
        ("list_dir", {"path": "src"}, "app.py"),
        ("grep", {"pattern": r"PORT\s*="}, "src/app.py:4:PORT = 8080"),
        ("grep", {"pattern": "port", "ignore_case": True, "glob": "*.py"}, "src/app.py:4:PORT = 8080"),
        ("grep", {"pattern": "nothing-like-this"}, "no matches"),
        ("bash", {"command": "echo hi; echo err >&2; exit 3"}, "hi\nerr\n[exit code: 3]"),
        ("bash", {"command": "true"}, "[exit code: 0]"),
        ("bash", {"command": "cat"}, "[exit code: 0]"),  # stdin is /dev/null: cat does not wait
        ("bash", {"command": "pwd"}, "{root}\n[exit code: 0]"),
    ],
)
def test_happy_paths(sandbox: Path, name: str, arguments: dict[str, Any], expected: str) -> None:
    text, is_error = run(sandbox, name, arguments)
    assert (text, is_error) == (expected.format(root=sandbox.resolve()), False)


def test_writes_land_in_the_sandbox(sandbox: Path) -> None:
    run(sandbox, "write_file", {"path": "a/b.txt", "content": "x"})
    run(sandbox, "edit_file", {"path": "src/app.py", "old_string": "8080", "new_string": "9090"})
    assert (sandbox / "a" / "b.txt").read_text() == "x"
    assert "PORT = 9090" in (sandbox / "src" / "app.py").read_text()


def test_absolute_path_inside_the_sandbox_is_allowed(sandbox: Path) -> None:
    text, is_error = run(sandbox, "read_file", {"path": str(sandbox / "notes.txt")})
    assert (text, is_error) == ("one\ntwo\nthree\n", False)


FILE_TOOL_CALLS = {
    "read_file": lambda p: {"path": p},
    "write_file": lambda p: {"path": p, "content": "pwned"},
    "edit_file": lambda p: {"path": p, "old_string": "secret", "new_string": "pwned"},
    "list_dir": lambda p: {"path": p},
    "grep": lambda p: {"pattern": "secret", "path": p},
}
ESCAPES = ["../outside.txt", "/etc/passwd", "src/../../outside.txt", "link_out", "linkdir/outside.txt", "/"]


@pytest.mark.parametrize("tool", sorted(FILE_TOOL_CALLS))
@pytest.mark.parametrize("path", ESCAPES)
def test_escapes_are_refused(sandbox: Path, tool: str, path: str) -> None:
    (sandbox / "link_out").symlink_to(sandbox.parent / "outside.txt")
    (sandbox / "linkdir").symlink_to(sandbox.parent, target_is_directory=True)
    text, is_error = run(sandbox, tool, FILE_TOOL_CALLS[tool](path))
    assert is_error
    assert "outside the repository" in text
    assert (sandbox.parent / "outside.txt").read_text() == "secret\n"


def test_grep_skips_git_and_symlinks_leading_out(sandbox: Path) -> None:
    (sandbox / "link_out").symlink_to(sandbox.parent / "outside.txt")
    assert run(sandbox, "grep", {"pattern": "secret"}) == ("no matches", False)
    assert run(sandbox, "grep", {"pattern": "PORT = 1$"}) == ("no matches", False)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"path": "notes.txt", "old_string": "missing", "new_string": "x"}, "not found in notes.txt"),
        ({"path": "notes.txt", "old_string": "o", "new_string": "0"}, "occurs 2 times in notes.txt"),
        ({"path": "notes.txt", "old_string": "", "new_string": "x"}, "old_string is empty"),
        ({"path": "nope.txt", "old_string": "a", "new_string": "b"}, "nope.txt: no such file"),
    ],
)
def test_edit_file_refusals(sandbox: Path, arguments: dict[str, Any], message: str) -> None:
    text, is_error = run(sandbox, "edit_file", arguments)
    assert is_error and message in text
    assert (sandbox / "notes.txt").read_text() == "one\ntwo\nthree\n"


def test_edit_file_replace_all(sandbox: Path) -> None:
    args = {"path": "notes.txt", "old_string": "o", "new_string": "0", "replace_all": True}
    assert run(sandbox, "edit_file", args) == ("replaced 2 occurrences in notes.txt", False)
    assert (sandbox / "notes.txt").read_text() == "0ne\ntw0\nthree\n"


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("read_file", "{not json", "arguments of read_file are not valid JSON"),
        ("read_file", "[1, 2]", "must be a JSON object"),
        ("read_file", {}, "'path' is a required property"),
        ("write_file", {"path": "x"}, "'content' is a required property"),
        ("read_file", {"path": 3}, "path: 3 is not of type 'string'"),
        ("bash", "", "'command' is a required property"),
        ("rm_rf", {}, "unknown tool 'rm_rf'"),
        ("grep", {"pattern": "("}, "invalid regular expression"),
        ("read_file", {"path": "src"}, "src: is a directory"),
        ("list_dir", {"path": "notes.txt"}, "not a directory"),
    ],
)
def test_bad_calls_are_results_not_exceptions(sandbox: Path, name: str, arguments: Any, message: str) -> None:
    text, is_error = run(sandbox, name, arguments)
    assert is_error
    assert message in text


def test_arguments_may_be_a_json_string(sandbox: Path) -> None:
    assert run(sandbox, "read_file", json.dumps({"path": "notes.txt"})) == ("one\ntwo\nthree\n", False)


def _gone_by_marker(marker: str, within_s: float = 2.0) -> bool:
    """No process runs `sleep MARKER` any more (pids inside a confined command are its own namespace's)."""
    from tests.helpers import running

    end = time.monotonic() + within_s
    while time.monotonic() < end:
        if not running(f"sleep {marker}"):
            return True
        time.sleep(0.02)
    return False


def test_bash_timeout_kills_the_process_group(sandbox: Path) -> None:
    from tests.helpers import unique_sleep

    marker = unique_sleep(30)
    start = time.monotonic()
    text, is_error = run(sandbox, "bash", {"command": f"sleep {marker} & echo child=$!; wait", "timeout": 0.5})
    assert time.monotonic() - start < 5
    assert is_error and "timed out after 0.5s" in text and "process group was killed" in text
    assert _gone_by_marker(marker)


def test_bash_background_processes_end_with_the_command(sandbox: Path) -> None:
    from tests.helpers import unique_sleep

    marker = unique_sleep(30)
    start = time.monotonic()
    _, is_error = run(sandbox, "bash", {"command": f"sleep {marker} >/dev/null 2>&1 & echo child=$!"})
    assert not is_error and time.monotonic() - start < 5
    assert _gone_by_marker(marker)


def test_bash_timeout_is_capped_by_the_deadline(sandbox: Path) -> None:
    limits = ToolLimits(bash_timeout_s=60, deadline=time.monotonic() + 0.4)
    start = time.monotonic()
    text, is_error = run(sandbox, "bash", {"command": "sleep 30"}, limits)
    assert is_error and "timed out" in text and time.monotonic() - start < 3
    expired = ToolLimits(deadline=time.monotonic() - 1)
    assert run(sandbox, "bash", {"command": "true"}, expired) == ("error: no time left to run a command",
                                                                   True)


def test_bash_stops_when_cancelled(sandbox: Path) -> None:
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    start = time.monotonic()
    text, is_error = run(sandbox, "bash", {"command": "sleep 30"}, ToolLimits(cancel=cancel))
    assert is_error and "cancelled" in text and time.monotonic() - start < 3


def test_bash_output_keeps_head_and_tail(sandbox: Path) -> None:
    limits = ToolLimits(max_output_bytes=1000)
    text, is_error = run(sandbox, "bash", {"command": "seq 1 100000"}, limits)
    assert not is_error
    assert text.startswith("1\n2\n3\n")
    assert text.endswith("99999\n100000\n[exit code: 0]")
    assert "bytes of output omitted" in text
    assert len(text) < 1200


def test_bash_does_not_see_secrets(sandbox: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-do-not-leak")
    text, _ = run(sandbox, "bash", {"command": "env"})
    assert "sk-do-not-leak" not in text


def test_read_file_output_is_bounded(sandbox: Path) -> None:
    (sandbox / "big.txt").write_text("".join(f"line {i}\n" for i in range(5000)))
    text, _ = run(sandbox, "read_file", {"path": "big.txt"}, ToolLimits(max_read_lines=10))
    assert text.endswith("[... file has 5000 lines; read more with offset=11 ...]")
    text, _ = run(sandbox, "read_file", {"path": "big.txt", "limit": 5000}, ToolLimits(max_output_bytes=500))
    assert "characters omitted" in text and len(text) < 600


def test_bash_commands_get_no_git_network_transport(sandbox: Path) -> None:
    # refused by git before any connection is attempted, so nothing leaves this machine
    text, _ = run(sandbox, "bash",
                  {"command": "git ls-remote https://git.invalid/x.git; env | grep -i '^https_proxy='"})
    assert "transport 'https' not allowed" in text
    assert "https_proxy=http://127.0.0.1:9" in text

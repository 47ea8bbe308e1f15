"""The built-in agent's tools: file tools confined to the sandbox, and a bash shell.

`TOOL_SCHEMAS` is the OpenAI `tools` array sent with every request;
`execute_tool(sandbox_root, name, arguments, limits)` runs one call and always
returns a `ToolResult` the model sees: a bad path, unknown tool, arguments that
are not JSON or miss a field, a failing or hanging command are all results,
never exceptions.

Confinement: every file tool resolves its path (symlinks followed, `..`
collapsed) and refuses anything that lands outside the sandbox. Relative paths
are taken from the sandbox root; absolute paths are accepted when they resolve
inside it (models often echo back absolute paths). `bash` is a real shell run
with the sandbox as its working directory: it can `cd ..`, so it is not
confined the way the file tools are. That is inherent to giving an agent a
shell; isolation beyond that is the sandbox backend's job (e.g. a container).
"""

from __future__ import annotations

import fnmatch
import json
import math
import os
import re
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import jsonschema
from openai.types.chat import ChatCompletionToolParam
from openai.types.shared_params import FunctionDefinition


@dataclass(frozen=True)
class ToolLimits:
    """Bounds on what one tool call may take or print."""

    bash_timeout_s: float = 60.0
    """Default per-command timeout; a call may ask for less or more, never past `deadline`."""
    max_output_bytes: int = 16_000
    """Tool output beyond this keeps its head and tail with a marker in between."""
    max_read_lines: int = 2000
    """Lines `read_file` returns when the call gives no `limit`."""
    grep_max_matches: int = 200
    deadline: float | None = None
    """`time.monotonic()` by which any command must be finished (the agent's own deadline)."""
    cancel: threading.Event | None = None
    """When set, a running command is killed at once."""


@dataclass(frozen=True)
class ToolResult:
    """What the model is told: the text of the result, and whether the call failed."""

    text: str
    is_error: bool = False


class ToolError(Exception):
    """A refused or failed tool call; its message is shown to the model as the result."""


def _function(
    name: str, description: str, properties: dict[str, Any], required: list[str]
) -> ChatCompletionToolParam:
    parameters: dict[str, object] = {"type": "object", "properties": properties, "required": required}
    function: FunctionDefinition = {"name": name, "description": description, "parameters": parameters}
    return {"type": "function", "function": function}


_PATH = {"type": "string", "description": "Path relative to the repository root (or absolute inside it)."}
TOOL_SCHEMAS: list[ChatCompletionToolParam] = [
    _function("read_file", "Read a text file. Returns its lines; use offset/limit for long files.",
              {"path": _PATH,
               "offset": {"type": "integer", "minimum": 1, "description": "First line to read (1-based)."},
               "limit": {"type": "integer", "minimum": 1, "description": "Number of lines to read."}},
              ["path"]),
    _function("write_file", "Create or overwrite a file with the given content (parent folders are created).",
              {"path": _PATH, "content": {"type": "string", "description": "The whole new content."}},
              ["path", "content"]),
    _function("edit_file", "Replace an exact string in a file. old_string must occur exactly once "
              "unless replace_all is true; include enough surrounding context to make it unique.",
              {"path": _PATH,
               "old_string": {"type": "string", "description": "Exact text to replace."},
               "new_string": {"type": "string", "description": "Replacement text."},
               "replace_all": {"type": "boolean", "description": "Replace every occurrence."}},
              ["path", "old_string", "new_string"]),
    _function("list_dir", "List a directory's entries (folders end with '/').",
              {"path": {**_PATH, "description": "Directory to list; default the repository root."}}, []),
    _function("grep", "Search file contents with a Python regular expression; prints path:line:text.",
              {"pattern": {"type": "string", "description": "Regular expression (Python re syntax)."},
               "path": {**_PATH, "description": "File or directory to search; default the repository root."},
               "glob": {"type": "string", "description": "Only files whose name matches, e.g. '*.py'."},
               "ignore_case": {"type": "boolean"}},
              ["pattern"]),
    _function("bash", "Run a shell command (bash -c) in the repository root. Returns its output and exit "
              "code. Non-interactive: stdin is empty. Background processes end when the command returns.",
              {"command": {"type": "string", "description": "The command line."},
               "timeout": {"type": "number", "exclusiveMinimum": 0,
                           "description": "Seconds before the command is killed (default 60)."}},
              ["command"]),
]
_SCHEMAS_BY_NAME = {t["function"]["name"]: t["function"].get("parameters", {}) for t in TOOL_SCHEMAS}
TOOL_NAMES = tuple(_SCHEMAS_BY_NAME)


def truncate_middle(text: str, limit: int) -> str:
    """`text` cut to about `limit` characters, keeping head and tail around a marker."""
    if len(text) <= limit:
        return text
    head = text[: limit // 2]
    tail = text[len(text) - limit // 2:]
    return f"{head}\n[... {len(text) - len(head) - len(tail)} characters omitted ...]\n{tail}"


def resolve_in_sandbox(root: Path, path: str) -> Path:
    """The real path of `path` (relative to `root`, or absolute); `ToolError` if it is outside `root`."""
    if not isinstance(path, str) or not path.strip():
        raise ToolError("path must be a non-empty string")
    root = root.resolve()
    candidate = Path(path)
    resolved = (candidate if candidate.is_absolute() else root / candidate).resolve()
    if not resolved.is_relative_to(root):
        raise ToolError(f"refused: {path!r} resolves outside the repository ({root}); "
                        "file tools only work inside it")
    return resolved


MAX_FILE_BYTES = 32_000_000
"""Largest file read_file and edit_file load (bash can still look at parts of bigger ones)."""


def _display(root: Path, path: Path) -> str:
    rel = path.relative_to(root.resolve()).as_posix()
    return rel if rel != "." else "."


def _read_text(root: Path, path: Path) -> str:
    shown = _display(root, path)
    if not path.exists():
        raise ToolError(f"{shown}: no such file")
    if path.is_dir():
        raise ToolError(f"{shown}: is a directory (use list_dir)")
    if not path.is_file():  # a FIFO would block the agent for good, a device never end
        raise ToolError(f"{shown}: not a regular file")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise ToolError(f"{shown}: {path.stat().st_size} bytes, too large for the file tools (limit "
                        f"{MAX_FILE_BYTES}); look at parts of it with bash (head, sed -n, grep)")
    data = path.read_bytes()
    if b"\0" in data[:8192]:
        raise ToolError(f"{shown}: binary file, not shown")
    return data.decode("utf-8", errors="replace")


def read_file(root: Path, args: dict[str, Any], limits: ToolLimits) -> str:
    path = resolve_in_sandbox(root, args["path"])
    lines = _read_text(root, path).splitlines(keepends=True)
    start = int(args.get("offset", 1)) - 1
    count = int(args.get("limit", limits.max_read_lines))
    if not lines:
        return "(empty file)"
    if start >= len(lines):
        raise ToolError(f"offset {start + 1} is past the end of the file ({len(lines)} lines)")
    chunk = "".join(lines[start:start + count])
    if start + count < len(lines):
        chunk += f"\n[... file has {len(lines)} lines; read more with offset={start + count + 1} ...]"
    return truncate_middle(chunk, limits.max_output_bytes)


def write_file(root: Path, args: dict[str, Any], limits: ToolLimits) -> str:
    path = resolve_in_sandbox(root, args["path"])
    if path.is_dir():
        raise ToolError(f"{args['path']}: is a directory")
    if path.exists() and not path.is_file():
        raise ToolError(f"{args['path']}: not a regular file")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(args["content"], encoding="utf-8")
    return f"wrote {len(args['content'].encode())} bytes to {_display(root, path)}"


def edit_file(root: Path, args: dict[str, Any], limits: ToolLimits) -> str:
    path = resolve_in_sandbox(root, args["path"])
    old, new = args["old_string"], args["new_string"]
    if not old:
        raise ToolError("old_string is empty; use write_file to create or overwrite a file")
    if old == new:
        raise ToolError("old_string and new_string are the same; nothing to do")
    text = _read_text(root, path)
    count = text.count(old)
    if count == 0:
        raise ToolError(f"old_string not found in {_display(root, path)} "
                        "(it must match exactly, whitespace included)")
    if count > 1 and not args.get("replace_all", False):
        raise ToolError(f"old_string occurs {count} times in {_display(root, path)}; add context to make it "
                        "unique or set replace_all")
    path.write_text(text.replace(old, new), encoding="utf-8")
    return f"replaced {count} occurrence{'s' if count > 1 else ''} in {_display(root, path)}"


def list_dir(root: Path, args: dict[str, Any], limits: ToolLimits) -> str:
    path = resolve_in_sandbox(root, args.get("path") or ".")
    if not path.is_dir():
        raise ToolError(f"{args.get('path')}: not a directory")
    entries = sorted(p.name + ("/" if p.is_dir() else "") for p in path.iterdir())
    return truncate_middle("\n".join(entries), limits.max_output_bytes) if entries else "(empty directory)"


def _files_under(top: Path) -> list[Path]:
    if top.is_file():
        return [top]
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
        found.extend(Path(dirpath) / f for f in sorted(filenames))
    return found


def grep(root: Path, args: dict[str, Any], limits: ToolLimits) -> str:
    # The `regex` package, in its re-compatible mode, because its searches take a time limit: a pattern
    # that backtracks catastrophically ("(a+)+$") is the model's error, not a hung trial.
    import regex as re_with_timeout

    try:
        compiled = re_with_timeout.compile(args["pattern"], re_with_timeout.IGNORECASE if args.get("ignore_case") else 0)
    except (re_with_timeout.error, re.error) as exc:
        raise ToolError(f"invalid regular expression: {exc}") from None
    end = time.monotonic() + limits.bash_timeout_s
    if limits.deadline is not None:
        end = min(end, limits.deadline)
    top = resolve_in_sandbox(root, args.get("path") or ".")
    real_root = root.resolve()
    matches: list[str] = []
    for file in _files_under(top):
        if args.get("glob") and not fnmatch.fnmatch(file.name, args["glob"]):
            continue
        real = file.resolve()
        if not real.is_relative_to(real_root) or not real.is_file() or real.stat().st_size > 4_000_000:
            continue
        data = real.read_bytes()
        if b"\0" in data[:8192]:
            continue
        for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            left = end - time.monotonic()
            try:
                if left <= 0:
                    raise TimeoutError
                found = compiled.search(line, timeout=left)
            except TimeoutError:
                raise ToolError(f"grep took longer than {limits.bash_timeout_s:g}s (a pattern that backtracks "
                                "without end?); simplify the pattern or narrow path/glob") from None
            if found:
                matches.append(f"{_display(root, file)}:{number}:{line[:300]}")
                if len(matches) >= limits.grep_max_matches:
                    matches.append(f"[... stopped after {limits.grep_max_matches} matches ...]")
                    return truncate_middle("\n".join(matches), limits.max_output_bytes)
    return truncate_middle("\n".join(matches), limits.max_output_bytes) if matches else "no matches"


_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL", re.IGNORECASE)


NO_EGRESS_ENV: dict[str, str] = {
    # Models have written `git remote add origin https://...` and `git push`: git gets no network
    # transport, and proxy-honouring HTTP(S) clients (pip, curl, npm, requests) a dead local proxy.
    "GIT_CONFIG_PARAMETERS": " ".join(f"'protocol.{p}.allow=never'" for p in ("https", "http", "ssh", "git", "ext")),
    **{name: "http://127.0.0.1:9" for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY",
                                               "ALL_PROXY")},
    "no_proxy": "127.0.0.1,localhost", "NO_PROXY": "127.0.0.1,localhost",
    "PIP_NO_INDEX": "1",
}
"""Added to what `bash` runs: a best effort against network egress from model-written commands (a
program that ignores proxy variables still reaches the network; run untrusted models in a VM)."""


def _command_env() -> dict[str, str]:
    """The harness's environment minus anything that looks like a secret, made non-interactive and
    cut off from the network as far as environment variables can."""
    env = {k: v for k, v in os.environ.items() if not _SECRET_NAME.search(k)}
    env.update(PAGER="cat", GIT_PAGER="cat", GIT_TERMINAL_PROMPT="0", TERM="dumb")
    env.update(NO_EGRESS_ENV)
    return env


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class _HeadAndTail:
    """Collects a stream's bytes keeping at most `limit` of its head and `limit` of its tail."""

    def __init__(self, limit: int) -> None:
        self.limit, self.total = limit, 0
        self.head, self.tail = bytearray(), bytearray()

    def add(self, block: bytes) -> None:
        self.total += len(block)
        room = self.limit - len(self.head)
        if room > 0:
            self.head += block[:room]
            block = block[room:]
        self.tail += block
        del self.tail[: -self.limit]

    def read_all(self, stream: IO[bytes]) -> None:
        while block := os.read(stream.fileno(), 65536):
            self.add(block)

    def text(self) -> str:
        omitted = self.total - len(self.head) - len(self.tail)
        marker = f"\n[... {omitted} bytes of output omitted ...]\n" if omitted else ""
        return self.head.decode(errors="replace") + marker + self.tail.decode(errors="replace")


def bash(root: Path, args: dict[str, Any], limits: ToolLimits) -> str:
    timeout = float(args.get("timeout") or limits.bash_timeout_s)
    if limits.deadline is not None:
        timeout = min(timeout, limits.deadline - time.monotonic())
    if timeout <= 0:
        raise ToolError("no time left to run a command")
    proc = subprocess.Popen(["bash", "-c", args["command"]], cwd=root, env=_command_env(),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    output = _HeadAndTail(limits.max_output_bytes // 2)
    reader = threading.Thread(target=output.read_all, args=(proc.stdout,), daemon=True)
    reader.start()
    stopped_by = ""
    end = time.monotonic() + timeout
    # Wait without reaping, so the group id cannot be reused before the group is killed.
    while os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
        if limits.cancel is not None and limits.cancel.is_set():
            stopped_by = "was cancelled"
            break
        if time.monotonic() >= end:
            stopped_by = f"timed out after {timeout:g}s"
            break
        time.sleep(0.02)
    _kill_group(proc.pid)  # also ends whatever the command left running in the background
    proc.wait()
    reader.join(timeout=5)
    text = output.text()
    sep = "\n" if text and not text.endswith("\n") else ""
    if stopped_by:
        raise ToolError(f"{text}{sep}[command {stopped_by}; its process group was killed]")
    return f"{text}{sep}[exit code: {proc.returncode}]"


_TOOLS = {"read_file": read_file, "write_file": write_file, "edit_file": edit_file,
          "list_dir": list_dir, "grep": grep, "bash": bash}


_NO_NUL_KEYS = frozenset({"path", "command", "pattern", "glob"})
"""Arguments that name something (a file, a program): a NUL byte cannot be part of them."""
_LARGEST_NUMBER = 2**53


def _refuse_constant(name: str) -> Any:
    raise ToolError(f"{name} is not a number a tool can use; send a finite number")


def _check_values(args: dict[str, Any]) -> None:
    """`ToolError` for a value no tool can use: a NUL byte in a name, text that is not valid Unicode
    (a lone surrogate), a number that is not finite or is beyond any sensible bound."""
    for key, value in args.items():
        shown = repr(key)[:60]
        if isinstance(value, str):
            if "\x00" in value and key in _NO_NUL_KEYS:
                raise ToolError(f"{shown}: a NUL byte cannot be part of a {key}")
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise ToolError(f"{shown}: not valid Unicode text (a lone surrogate); send UTF-8 text") from None
        elif isinstance(value, float) and not math.isfinite(value):
            raise ToolError(f"{shown}: must be a finite number")
        elif isinstance(value, int | float) and not isinstance(value, bool) and abs(value) > _LARGEST_NUMBER:
            raise ToolError(f"{shown}: number too large")


def parse_arguments(name: str, arguments: dict[str, Any] | str | None) -> dict[str, Any]:
    """The call's arguments as a dict checked against the tool's schema; `ToolError` otherwise."""
    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        arguments = {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments, parse_constant=_refuse_constant)
        except json.JSONDecodeError as exc:
            raise ToolError(f"arguments of {name} are not valid JSON ({exc.msg} at char {exc.pos})") from None
        except RecursionError:
            raise ToolError(f"arguments of {name} are nested too deeply to read") from None
        except ValueError as exc:  # e.g. an integer of thousands of digits
            raise ToolError(f"arguments of {name} cannot be read: {str(exc)[:200]}") from None
    if not isinstance(arguments, dict):
        raise ToolError(f"arguments of {name} must be a JSON object, got {type(arguments).__name__}")
    _check_values(arguments)
    try:
        jsonschema.validate(arguments, _SCHEMAS_BY_NAME[name])
    except jsonschema.ValidationError as exc:
        where = ".".join(str(p) for p in exc.absolute_path)
        raise ToolError(f"bad arguments for {name}: {(where + ': ') if where else ''}{exc.message[:500]}") from None
    return arguments


def _sendable(text: str, limit: int | None = None) -> str:
    """A result as the model can be sent it: valid UTF-8 (lone surrogates replaced), bounded in size
    when asked (the tools bound their own output; error messages may quote what the model sent)."""
    text = text.encode("utf-8", "replace").decode("utf-8")
    return text if limit is None else truncate_middle(text, limit)


def execute_tool(sandbox_root: Path, name: str, arguments: dict[str, Any] | str | None,
                 limits: ToolLimits | None = None) -> ToolResult:
    """Run one tool call in the sandbox. Never raises: every problem is a result the model sees,
    including arguments no tool can use (a NUL byte, a lone surrogate, deep nesting, wrong types,
    numbers that are not finite): what the model causes is the model's, and the trial goes on."""
    limits = limits or ToolLimits()
    if name not in _TOOLS:
        return ToolResult(_sendable(f"unknown tool {name!r}; available tools: {', '.join(TOOL_NAMES)}", 2000),
                          is_error=True)
    try:
        args = parse_arguments(name, arguments)
        return ToolResult(_sendable(_TOOLS[name](Path(sandbox_root), args, limits)))
    except ToolError as exc:
        return ToolResult(_sendable(f"error: {exc}", limits.max_output_bytes), is_error=True)
    except OSError as exc:
        text = f"error: {exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else "")
        return ToolResult(_sendable(text, limits.max_output_bytes), is_error=True)
    except Exception as exc:  # noqa: BLE001 - arguments a tool could not use are the model's fault, not a crash
        text = f"error: {name} could not use these arguments ({type(exc).__name__}: {exc})"
        return ToolResult(_sendable(text, limits.max_output_bytes), is_error=True)

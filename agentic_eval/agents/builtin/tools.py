"""The built-in agent's tools: file tools confined to the sandbox, and a bash shell.

`TOOL_SCHEMAS` is the OpenAI `tools` array sent with every request;
`execute_tool(sandbox_root, name, arguments, limits)` runs one call and always
returns a `ToolResult` the model sees: a bad path, unknown tool, arguments that
are not JSON or miss a field, a failing or hanging command are all results,
never exceptions.

Confinement: every tool runs in a process of its own through the run's sandbox
backend (`confine/backend.py`; bwrap by default): `bash` as a shell per call, the
file tools in `_filetools.py` (the run's `FileToolWorker` when `ToolLimits.worker`
is set: one process serving every call; else one process per call). Confined,
the process sees the sandbox writable, the system read-only, a private /tmp, no
network and no other process, so neither a `cd ..` nor a symlink swapped in
mid-call reaches the harness's files. The file tools also resolve each path and
refuse anything outside the sandbox. Every call is bounded in time (grep included), CPU, memory, output and file size.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import selectors
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import jsonschema

from agentic_eval.agents.builtin._filetools import resolve_in_sandbox, truncate_middle
from agentic_eval.confine.backend import Confinement, ResourceLimits, SandboxBackend
from agentic_eval.confine.process import run_command, signal_group
from agentic_eval.confine.registry import default_backend
from agentic_eval.leftovers import MarkedTempDir
from agentic_eval.packs.builtin import hidden_from_model

if TYPE_CHECKING:  # the SDK's types only describe the schemas: importing openai costs ~0.3 s of start-up
    import jsonschema.protocols
    from openai.types.chat import ChatCompletionToolParam
    from openai.types.shared_params import FunctionDefinition

__all__ = ["TOOL_NAMES", "TOOL_SCHEMAS", "FileToolWorker", "ToolError", "ToolLimits", "ToolResult", "execute_tool",
           "parse_arguments", "resolve_in_sandbox", "truncate_middle"]


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
    backend: SandboxBackend | None = None
    """The `SandboxBackend` every call runs through (None: the default, bwrap where it works)."""
    hidden: tuple[Path, ...] = ()
    """Paths the sandbox's generator asks to hide besides the harness's own (`Sandbox.hidden`)."""
    max_file_bytes: int = 8_000_000
    """Bytes of a file the file tools read at most (read_file notes the cut; edit_file refuses)."""
    file_tool_timeout_s: float = 30.0
    """Wall time of one file tool call, at most `bash_timeout_s` (a pathological grep pattern is killed by then)."""
    memory_bytes: int = 4 * 1024 ** 3
    """Address space of each process a call starts (RLIMIT_AS)."""
    worker: FileToolWorker | None = None
    """The run's `FileToolWorker` serving the file tools (None: a process per call)."""


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


def _file_request(name: str, root: Path, args: dict[str, Any], limits: ToolLimits) -> dict[str, Any]:
    return {"tool": name, "root": str(root), "args": args,
            "limits": {"max_output_bytes": limits.max_output_bytes, "max_read_lines": limits.max_read_lines,
                       "grep_max_matches": limits.grep_max_matches, "max_file_bytes": limits.max_file_bytes}}


def _file_spec(root: Path, limits: ToolLimits, cpu_s: int | None) -> Confinement:
    from agentic_eval.agents.builtin import _filetools

    return Confinement(writable=(root,), readable=(Path(_filetools.__file__).resolve(),),
                       hidden=(*hidden_from_model(), *limits.hidden),
                       limits=ResourceLimits(cpu_s=cpu_s, memory_bytes=limits.memory_bytes))


def _answer(name: str, output: bytes, returncode: int | None) -> str:
    """The text of a file tool's JSON answer; `ToolError` for an error answer or output that is none."""
    try:
        answer = json.loads(output)
    except ValueError:
        tail = output.decode(errors="replace").strip().splitlines()[-1:] or [f"exit {returncode}"]
        raise ToolError(f"{name} failed: {tail[0][:300]}") from None
    if answer["error"]:
        raise ToolError(answer["text"])
    return str(answer["text"])


def _stopped(name: str, why: str) -> ToolError:
    return ToolError(f"{name} {why} and was killed" +
                     (" (simplify the pattern or narrow the path)" if name == "grep" else ""))


def _file_tool(name: str, root: Path, args: dict[str, Any], limits: ToolLimits) -> str:
    """Run one file tool through the run's worker, else as its own process through the sandbox backend;
    its answer, or `ToolError`."""
    from agentic_eval.agents.builtin import _filetools

    timeout = _time_left(limits, min(limits.file_tool_timeout_s, limits.bash_timeout_s))
    request = _file_request(name, root, args, limits)
    if limits.worker is not None and limits.worker.serves(root):
        return limits.worker.call(name, request, timeout, limits.cancel)
    backend = limits.backend or default_backend()
    spec = _file_spec(root, limits, math.ceil(timeout) + 1)
    with _private_home(backend) as home:
        result = run_command(backend, [sys.executable, "-I", "-S", str(Path(_filetools.__file__).resolve())], cwd=root,
                             env=_command_env(home), spec=spec, timeout_s=timeout, cancel=limits.cancel,
                             stdin=json.dumps(request).encode(), output_limit=12 * limits.max_output_bytes + 65536)
    if result.stopped_by:
        raise _stopped(name, result.stopped_by)
    return _answer(name, result.output, result.returncode)


class FileToolWorker:
    """One confined process serving a run's file tool calls over a pipe (`_filetools.py --serve`), started
    at the first call: a process per call cost ~0.17 s here. It runs through the same backend, as the same
    uid, with the same confinement, environment and memory limit as a process per call would; each request
    gets its own CPU limit (the worker lowers its soft limit), and the harness its own wall time limit and
    the cancel event. A call that times out, is cancelled, or finds the worker dead or answering nonsense
    kills the worker's process group (and PID namespace) and is that call's error; the next call starts a
    new worker. `close()` ends it; the agent's phase end would end it anyway. Only for backends that declare
    `file_tool_worker` (local and bwrap: a command is a process of this host); others get a process per call."""

    def __init__(self, root: Path, limits: ToolLimits) -> None:
        self.root, self.limits = Path(root), limits
        self._proc: subprocess.Popen[bytes] | None = None
        self._home: MarkedTempDir | None = None
        self._lock = threading.Lock()
        self.started = 0
        """How many worker processes were started (for tests and figures)."""

    def serves(self, root: Path) -> bool:
        backend = self.limits.backend or default_backend()
        return Path(root) == self.root and backend.file_tool_worker

    def _start(self) -> subprocess.Popen[bytes]:
        from agentic_eval.agents.builtin import _filetools

        backend = self.limits.backend or default_backend()
        if backend.confined:
            home = "/tmp"
        else:
            if self._home is None:
                self._home = MarkedTempDir("ae-home-", inner="home")
            home = self._home.name
        deadline = self.limits.deadline
        cpu_s = None if deadline is None else math.ceil(max(deadline - time.monotonic(), 0)) + 1
        argv = [sys.executable, "-I", "-S", str(Path(_filetools.__file__).resolve()), "--serve"]
        proc = subprocess.Popen(backend.wrap(argv, cwd=self.root, spec=_file_spec(self.root, self.limits, cpu_s)),
                                cwd=self.root, env=_command_env(home), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        assert proc.stdin is not None and proc.stdout is not None
        os.set_blocking(proc.stdout.fileno(), False)
        os.set_blocking(proc.stdin.fileno(), False)
        self.started += 1
        return proc

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        signal_group(proc.pid)
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()

    def call(self, name: str, request: dict[str, Any], timeout: float, cancel: threading.Event | None) -> str:
        """The answer of one request, within `timeout` seconds; `ToolError` otherwise."""
        with self._lock:
            end = time.monotonic() + timeout
            if self._proc is not None and self._proc.poll() is not None:
                self._kill()  # ended between calls (e.g. its CPU limit): start afresh, not this call's fault
            if self._proc is None:
                self._proc = self._start()
            proc = self._proc
            line = json.dumps({**request, "cpu_s": math.ceil(timeout) + 1}).encode() + b"\n"
            try:
                output, why = self._exchange(proc, line, end, cancel, 12 * self.limits.max_output_bytes + 65536)
            except BaseException:
                self._kill()
                raise
            if why:
                self._kill()
                if why == "ended":
                    return _answer(name, output, proc.returncode)
                raise _stopped(name, why if why != "timed out" else f"timed out after {timeout:g}s")
            return _answer(name, output, 0)

    @staticmethod
    def _exchange(proc: subprocess.Popen[bytes], line: bytes, end: float, cancel: threading.Event | None,
                  limit: int) -> tuple[bytes, str]:
        """Send `line` and read the worker's next line (its answer), never blocking past `end` or `cancel`
        (a worker that stops reading cannot hold a large request's write): the answer and '', or what
        came and why it stopped there ('ended': the worker ended or answered past `limit`)."""
        assert proc.stdin is not None and proc.stdout is not None
        out, into = proc.stdout.fileno(), proc.stdin.fileno()
        got, note, pending = bytearray(), b"", memoryview(line)
        with selectors.DefaultSelector() as selector:
            selector.register(out, selectors.EVENT_READ)
            selector.register(into, selectors.EVENT_WRITE)
            while True:
                if cancel is not None and cancel.is_set():
                    return bytes(got), "was cancelled"
                left = end - time.monotonic()
                if left <= 0:
                    return bytes(got), "timed out"
                for key, _ in selector.select(min(left, 0.05)):
                    if key.fd == into:
                        try:
                            pending = pending[os.write(into, pending):]
                        except BlockingIOError:
                            continue
                        except OSError:  # the worker is gone; its output says why, if anything
                            pending = pending[len(pending):]
                        if not pending:
                            selector.unregister(into)
                        continue
                    try:
                        block = os.read(out, 65536)
                    except BlockingIOError:
                        continue
                    if not block:
                        return bytes(got) or note, "ended"
                    got += block
                    while (newline := got.find(b"\n")) >= 0:
                        answer, got = bytes(got[:newline]), got[newline + 1:]
                        if answer.startswith(b"{"):
                            return answer, ""
                        note = answer  # not an answer (a warning on stderr): its message, if the worker ends
                    if len(got) > limit:
                        return bytes(got[-300:]), "ended"

    def close(self) -> None:
        with self._lock:
            self._kill()
            if self._home is not None:
                self._home.cleanup()
                self._home = None


def read_file(root: Path, args: dict[str, Any], limits: ToolLimits) -> str:
    return _file_tool("read_file", root, args, limits)


def write_file(root: Path, args: dict[str, Any], limits: ToolLimits) -> str:
    return _file_tool("write_file", root, args, limits)


def edit_file(root: Path, args: dict[str, Any], limits: ToolLimits) -> str:
    return _file_tool("edit_file", root, args, limits)


def list_dir(root: Path, args: dict[str, Any], limits: ToolLimits) -> str:
    return _file_tool("list_dir", root, args, limits)


def grep(root: Path, args: dict[str, Any], limits: ToolLimits) -> str:
    return _file_tool("grep", root, args, limits)


PASSED_ENV = ("LANG", "LANGUAGE", "TZ")
"""Variables taken from the harness's environment (with every LC_*); nothing else of it passes."""
COMMAND_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


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


def _command_env(home: str) -> dict[str, str]:
    """An allow-listed environment: locale and time zone from the harness, a PATH of the system and the
    harness's Python, HOME at `home`, non-interactive, cut off from the network as far as variables can."""
    env = {k: v for k, v in os.environ.items() if k in PASSED_ENV or k.startswith("LC_")}
    env.setdefault("LANG", "C.UTF-8")
    env.update(PATH=os.path.dirname(sys.executable) + os.pathsep + COMMAND_PATH, HOME=home, TMPDIR="/tmp",
               USER="agent", LOGNAME="agent", SHELL="/bin/bash", PAGER="cat", GIT_PAGER="cat",
               GIT_TERMINAL_PROMPT="0", TERM="dumb")
    env.update(NO_EGRESS_ENV)
    return env


@contextlib.contextmanager
def _private_home(backend: SandboxBackend) -> Iterator[str]:
    """HOME for one command: the confined command's private /tmp, or a fresh folder removed afterwards (marked:
    a command may run for minutes, and the next run removes it if this one is killed meanwhile)."""
    if backend.confined:
        yield "/tmp"
        return
    with MarkedTempDir("ae-home-", inner="home") as home:
        yield home


def _time_left(limits: ToolLimits, wanted: float) -> float:
    timeout = wanted
    if limits.deadline is not None:
        timeout = min(timeout, limits.deadline - time.monotonic())
    if timeout <= 0:
        raise ToolError("no time left to run a command")
    return timeout


def bash(root: Path, args: dict[str, Any], limits: ToolLimits) -> str:
    timeout = _time_left(limits, float(args.get("timeout") or limits.bash_timeout_s))
    backend = limits.backend or default_backend()
    spec = Confinement(writable=(root,), hidden=(*hidden_from_model(), *limits.hidden),
                       limits=ResourceLimits(cpu_s=math.ceil(timeout) + 1, memory_bytes=limits.memory_bytes))
    with _private_home(backend) as home:
        result = run_command(backend, ["bash", "-c", args["command"]], cwd=root, env=_command_env(home), spec=spec,
                             timeout_s=timeout, cancel=limits.cancel, output_limit=limits.max_output_bytes // 2)
    text = result.output.decode(errors="replace")
    sep = "\n" if text and not text.endswith("\n") else ""
    if result.stopped_by:
        raise ToolError(f"{text}{sep}[command {result.stopped_by}; its process group was killed]")
    return f"{text}{sep}[exit code: {result.returncode}]"


_TOOLS = {"read_file": read_file, "write_file": write_file, "edit_file": edit_file,
          "list_dir": list_dir, "grep": grep, "bash": bash}


_NO_NUL_KEYS = frozenset({"path", "command", "pattern", "glob"})
"""Arguments that name something (a file, a program): a NUL byte cannot be part of them."""
_LARGEST_NUMBER = 2**53


def _refuse_constant(name: str) -> NoReturn:
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
    # What jsonschema.validate does, less checking the schema itself again at every call.
    error = jsonschema.exceptions.best_match(_validator(name).iter_errors(arguments))
    if error is not None:
        where = ".".join(str(p) for p in error.absolute_path)
        raise ToolError(f"bad arguments for {name}: {(where + ': ') if where else ''}{error.message[:500]}")
    return arguments


@functools.cache
def _validator(name: str) -> jsonschema.protocols.Validator:
    """The checked validator of a tool's arguments schema, made once."""
    schema = _SCHEMAS_BY_NAME[name]
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


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

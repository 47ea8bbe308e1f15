"""The shared half of every CLI adapter: isolation, the headless run, and turning its end into an outcome.

A subclass says how to configure and invoke its CLI (`invocation`) and, if it
can, how it stopped (`completed`). The base class does the rest, the same way
for every CLI:

- a fresh HOME (with XDG and CLI-specific config folders, made beforehand) under
  the trial folder, so no user configuration leaks in and nothing leaks out;
- an environment with telemetry, update checks and package-registry look-ups
  off (a local `.npmrc` points npm at a dead address, offline), and no
  inherited proxy or API variables;
- the CLI run headless in the sandbox with stdin from /dev/null and the task's
  time limit; its whole process group killed on expiry or on `ctx.cancel`;
- confined by the sandbox backend (bwrap): only the sandbox and its HOME
  writable, no network but a relay to the wire recorder (`confined`);
- stdout/stderr kept in the trial folder (`agent_stdout.txt`, `agent_stderr.txt`),
  the command line (key redacted) in `agent_command.txt`, the CLI's version in
  `agent_version.txt`;
- a missing CLI, a crash or a non-zero exit become `agent_error` (the detail is
  the install command, or the last stderr line), a failing endpoint seen on the
  wire becomes `endpoint_error`; a CLI that died by a signal the harness did not
  send (the model's own commands sent it) carries the signal, and the runner
  grades the tree (see agentic_eval.faults).
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import sys
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar
from urllib.parse import urlsplit

from agentic_eval.agents.adapters.install import CliTool, version_from_output
from agentic_eval.agents.adapters.process import ProcessResult, last_line, run_headless
from agentic_eval.agents.adapters.wirelog import WireFacts, wire_facts
from agentic_eval.agents.base import AGENT_VERSION_FILE, Agent, AgentContext, AgentOutcome
from agentic_eval.confine.backend import Confinement, ResourceLimits
from agentic_eval.confine.origin import REFUSED_FILE
from agentic_eval.confine.registry import default_backend
from agentic_eval.confine.relay_harness import UnixRelay
from agentic_eval.leftovers import MarkedTempDir
from agentic_eval.packs.sandbox import AGENT_IDENTITY

PASSED_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "USER", "LOGNAME")
"""The only variables taken from the harness's environment."""
QUIET_ENV = {
    "DO_NOT_TRACK": "1",
    "NO_UPDATE_NOTIFIER": "1",
    "npm_config_update_notifier": "false",
    "npm_config_offline": "true",
    "npm_config_audit": "false",
    "npm_config_fund": "false",
    "PIP_NO_INDEX": "1",
    "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    "HF_HUB_OFFLINE": "1",
    "NO_PROXY": "127.0.0.1,localhost",
    "no_proxy": "127.0.0.1,localhost",
    "GIT_TERMINAL_PROMPT": "0",
    "NO_COLOR": "1",
    "TERM": "dumb",
    "SHELL": "/bin/bash",
}
"""Telemetry, update notices and registry look-ups off, for the CLI and whatever it runs."""
NPMRC = "registry=http://127.0.0.1:9/\noffline=true\naudit=false\nfund=false\nupdate-notifier=false\n"
"""A dead registry: a CLI that tries to install a package at run time fails at once, locally."""
VERSION_FILE = AGENT_VERSION_FILE
VERSION_TIMEOUT_S = 30.0


@dataclass
class Invocation:
    """How to start the CLI for one trial."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    """Added to the isolated base environment."""
    transcript: Path | None = None
    """The CLI's own transcript file, if it writes one (else stdout is the transcript)."""
    secrets: tuple[str, ...] = ()
    """Strings to redact from the recorded command line."""
    outputs: tuple[Path, ...] = ()
    """Files the CLI writes outside the sandbox and HOME (its transcript in the trial folder): confined,
    each is made beforehand and is all of the trial folder the CLI can write."""
    key_files: dict[Path, str | None] = field(default_factory=dict)
    """Files (under HOME) that hand the CLI the trial's key as it starts, instead of its environment, which
    every process it starts inherits and /proc shows: once the CLI's first request has come through the
    relay (it has read them), each is rewritten with the text given here (None: removed), so its tools, which
    start only after the model's first reply, find no key in them. Also done when the run ends."""


@dataclass
class CliRun:
    """What a finished run left behind, for `completed` to read."""

    ctx: AgentContext
    home: Path
    stdout: Path
    stderr: Path
    process: ProcessResult
    wire: WireFacts
    invocation: Invocation


class CliAgent(Agent):
    """Base class of the agents that drive a real CLI. Subclasses set `name`, `program`, and `invocation`."""

    program: ClassVar[CliTool]
    uses_model = True
    home_dirs: ClassVar[tuple[str, ...]] = ()
    """Extra folders (relative to HOME) the CLI needs to exist before it starts."""
    system_config: ClassVar[tuple[str, ...]] = ()
    """Machine-wide folders the CLI reads settings from (managed or system settings, e.g. /etc/claude-code):
    covered by an empty folder in a confined sandbox, so that this machine's settings (hooks, permissions, other
    endpoints) do not change what is measured. (The docker image's /etc has none of this machine's.)"""

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        older = cls.__dict__.get("tool")  # the attribute's name before `program`, in adapters written to it
        if isinstance(older, CliTool) and "program" not in cls.__dict__:
            cls.program = older

    def __init__(self) -> None:
        self._version: str | None = None

    whole_number_options: ClassVar[tuple[str, ...]] = ("context", "max_output")
    """`--agent-opt` keys an adapter reads as token counts: whole numbers of at least 1."""
    most_tokens: ClassVar[int] = 2_000_000
    """The largest token count those options take (about the largest context a model serves)."""

    def check_options(self, extra: dict[str, object]) -> None:
        """Before any trial: a token count that is not a whole number of at least 1 (nan, inf, 0, -5) is
        one line, not one agent_error per trial."""
        from agentic_eval.errors import AgenticEvalError

        for key in self.whole_number_options:
            if key in extra:
                try:
                    number = int(str(extra[key]))
                except ValueError:
                    number = 0
                if number > self.most_tokens:
                    raise AgenticEvalError(f"--agent-opt {key}={extra[key]}: over the limit of {self.most_tokens:,}")
                if number < 1:
                    raise AgenticEvalError(f"--agent-opt {key}={extra[key]}: expected a whole number of at least 1")
        if "bin" in extra and not str(extra["bin"]).strip():
            raise AgenticEvalError("--agent-opt bin=: give the path of the CLI to run")

    # ---------------------------------------------------------------- subclass hooks

    def invocation(self, ctx: AgentContext, home: Path, executable: str) -> Invocation:
        """The command line and environment for this trial; may write config files under `home`."""
        raise NotImplementedError

    def completed(self, run: CliRun) -> AgentOutcome:
        """The outcome of a run that exited 0 with a healthy wire log (override to read the CLI's output)."""
        return self.outcome(run, "completed", stop_reason="exited")

    def diagnose(self, run: CliRun) -> AgentOutcome | None:
        """An outcome explaining a failed run from what the CLI printed or the wire shows, or None."""
        return None

    # ---------------------------------------------------------------- the shared run

    def executable(self, ctx: AgentContext) -> str | None:
        """The CLI to run: `--agent-opt bin=PATH` if given, else the pinned install; None if missing."""
        override = ctx.options.extra.get("bin")
        if override:
            found = shutil.which(override)
            return str(Path(found).resolve()) if found else None
        return str(self.program.executable) if self.program.installed() else None

    def version(self, executable: str, env: dict[str, str], scratch: Path) -> str:
        """The CLI's version: the package metadata of the pinned install, else its `--version` output
        (run like the CLI itself: own process group, killed after VERSION_TIMEOUT_S)."""
        if self._version is None:
            found = self.program.installed_version() if executable == str(self.program.executable) else None
            if found is None:
                out, err = scratch / "version_stdout.txt", scratch / "version_stderr.txt"
                run_headless([executable, "--version"], cwd=scratch, env=env, stdout=out, stderr=err,
                             timeout_s=VERSION_TIMEOUT_S, cancel=threading.Event(), token=uuid.uuid4().hex)
                text = "".join(p.read_text(encoding="utf-8", errors="replace") for p in (out, err) if p.exists())
                found = version_from_output(text)
                for p in (out, err):
                    p.unlink(missing_ok=True)
            self._version = found or "unknown"
        return self._version

    def isolated_home(self, ctx: AgentContext) -> tuple[Path, dict[str, str]]:
        """A fresh HOME for this trial (XDG folders made), and the base environment pointing at it."""
        home = (ctx.trial_dir / "agent_home").resolve()
        xdg = {"XDG_CONFIG_HOME": ".config", "XDG_DATA_HOME": ".local/share", "XDG_CACHE_HOME": ".cache",
               "XDG_STATE_HOME": ".local/state"}
        for rel in (*xdg.values(), *self.home_dirs):
            (home / rel).mkdir(parents=True, exist_ok=True)
        (home / ".npmrc").write_text(NPMRC, encoding="utf-8")
        name, email = AGENT_IDENTITY
        (home / ".gitconfig").write_text(f"[user]\n\tname = {name}\n\temail = {email}\n", encoding="utf-8")
        env = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
        env.setdefault("PATH", os.defpath)
        env.setdefault("LANG", "C.UTF-8")
        env.update(QUIET_ENV)
        env["HOME"] = str(home)
        env.update({k: str(home / v) for k, v in xdg.items()})
        return home, env

    def run(self, ctx: AgentContext) -> AgentOutcome:
        """Drive the CLI through one trial. Never raises for a problem of the CLI, model or endpoint."""
        executable = self.executable(ctx)
        if executable is None:
            where = ctx.options.extra.get("bin") or self.program.executable
            return AgentOutcome("agent_error", detail=f"{self.name} CLI not found at {where}; install it with: "
                                f"{self.program.install_command}")
        home, env = self.isolated_home(ctx)
        version = self.version(executable, env, home)
        (ctx.trial_dir / VERSION_FILE).write_text(f"{self.program.package} {version}\n", encoding="utf-8")
        inv = self.invocation(ctx, home, executable)
        env.update(inv.env)
        command = shlex.join(inv.argv)
        for secret in inv.secrets:
            if secret:
                command = command.replace(secret, "REDACTED")
        (ctx.trial_dir / "agent_command.txt").write_text(command + "\n", encoding="utf-8")
        stdout, stderr = ctx.trial_dir / "agent_stdout.txt", ctx.trial_dir / "agent_stderr.txt"
        try:
            with self.confined(ctx, home, executable, inv.argv, inv.outputs, inv.key_files) as argv:
                process = run_headless(argv, cwd=ctx.sandbox.path, env=env, stdout=stdout, stderr=stderr,
                                       timeout_s=ctx.timeout_s, cancel=ctx.cancel, token=uuid.uuid4().hex)
        finally:
            forget_keys(inv.key_files)
        run = CliRun(ctx, home, stdout, stderr, process, wire_facts(ctx.trial_dir / "wire.jsonl"), inv)
        return self._outcome(run)

    @contextlib.contextmanager
    def confined(self, ctx: AgentContext, home: Path, executable: str, argv: list[str],
                 outputs: tuple[Path, ...] = (), key_files: dict[Path, str | None] | None = None,
                 ) -> Iterator[list[str]]:
        """The command line that runs the CLI through the sandbox backend. Confined, the CLI sees the
        sandbox and its HOME writable, its own install read-only, no network: its base URL's port on the
        sandbox's own loopback is a relay that hands each connection to the harness, which pipes the CLI's
        own to the wire recorder and refuses its tools' (confine/origin.py: recorded in refused.jsonl).
        `key_files` are rewritten once the CLI's first request has come (see `Invocation.key_files`)."""
        backend = ctx.backend or default_backend()
        if not backend.confined:
            yield list(argv)
            return
        from agentic_eval.confine import relay as _relay
        from agentic_eval.packs.builtin import hidden_from_model

        url = urlsplit(ctx.base_url)
        port = url.port or (443 if url.scheme == "https" else 80)
        wire_dir = MarkedTempDir("ae-wire-", inner="wire")  # bound whole (read-only): its owner mark outside it
        folder = Path(wire_dir.name)
        for where in (wire_dir.top, folder):  # the confined uid passes through both (the temp folder may be bound)
            os.chmod(where, 0o755)
        relay = UnixRelay(folder, url.hostname or "127.0.0.1", port, refusals=ctx.trial_dir / REFUSED_FILE,
                          on_first=lambda: forget_keys(key_files or {}))
        made = [p for p in outputs if not p.exists()]
        for path in made:
            path.touch()
        try:
            relay_py = Path(_relay.__file__).resolve()
            installed = self.program.home if executable == str(self.program.executable) else Path(executable).parent
            readable = [folder, relay_py, installed, Path(os.path.realpath(executable)).parent]
            node = shutil.which("node")
            if node:
                readable.append(Path(os.path.realpath(node)).parent.parent)
            hidden = (*hidden_from_model(), *ctx.sandbox.hidden, ctx.task.pack_dir,
                      *(Path(p) for p in self.system_config))
            spec = Confinement(writable=(ctx.sandbox.path, home, *outputs), readable=tuple(readable), hidden=hidden,
                               limits=ResourceLimits(memory_bytes=None))  # node reserves more address space
            inner = [sys.executable, "-I", "-S", str(relay_py), str(port), str(relay.path), "--", *argv]
            yield backend.wrap(inner, cwd=ctx.sandbox.path, spec=spec)
        finally:
            relay.close()
            wire_dir.cleanup()
            for path in made:  # made for the CLI, never written: as if it had not been there
                if path.is_file() and path.stat().st_size == 0:
                    path.unlink()

    def _outcome(self, run: CliRun) -> AgentOutcome:
        p = run.process
        if p.cancelled:
            return self.outcome(run, "cancelled", detail="run interrupted")
        if p.start_error is not None:
            return self.outcome(run, "agent_error", detail=f"{self.name} could not start: {p.start_error}")
        if p.timed_out:
            return self.outcome(run, "timeout", detail=f"{self.name} still running after {run.ctx.timeout_s:g}s; "
                                "its process group was killed", timed_out_at=p.deadline_at)
        if p.signal is not None:  # the harness sent none: the model's own commands did (kill -9 $PPID)
            from agentic_eval.faults import signal_name

            return self.outcome(run, "agent_error", detail=f"{self.name} died by signal {p.signal} "
                                f"({signal_name(p.signal)}), which the harness did not send", signal=p.signal)
        diagnosed = self.diagnose(run)
        if diagnosed is not None:
            return diagnosed
        if p.exit_code != 0:
            failure = run.wire.last_model_failure
            if failure is not None:
                return self.outcome(run, "endpoint_error", detail=f"{self.name} exited {p.exit_code} after the "
                                    f"endpoint failed: {failure}")
            why = last_line(run.stderr) or last_line(run.stdout) or "no output"
            return self.outcome(run, "agent_error", detail=f"{self.name} exited {p.exit_code}: {why}")
        return self.completed(run)

    def outcome(self, run: CliRun, status: str, *, detail: str = "", stop_reason: str = "",
                timed_out_at: float | None = None, signal: int | None = None) -> AgentOutcome:
        """An outcome with the turn count from the wire and the transcript filled in."""
        transcript = run.invocation.transcript
        if transcript is None or not transcript.exists():
            transcript = run.stdout
        return AgentOutcome(status, turns=run.wire.model_calls, detail=detail,  # type: ignore[arg-type]
                            transcript=transcript, stop_reason=stop_reason, timed_out_at=timed_out_at,
                            signal=signal)

    def result_event_outcome(self, run: CliRun, message_keys: tuple[str, ...] = ("result", "error")) -> AgentOutcome:
        """How a run ended by its stream-json `result` event (Claude Code's format, which qwen-code shares): an
        error other than the turn limit is the endpoint's fault when the wire saw the model call fail, else the
        agent's; `message_keys` are the event's fields tried in turn for the message."""
        results = [e for e in json_events(run.stdout) if e.get("type") == "result"]
        if not results:
            return self.outcome(run, "completed", stop_reason="exited")
        last = results[-1]
        subtype = str(last.get("subtype", ""))
        if last.get("is_error") and subtype != "error_max_turns":
            message = str(next((last[k] for k in message_keys if last.get(k)), subtype))[:300]
            if run.wire.last_model_failure is not None:
                return self.outcome(run, "endpoint_error", detail=f"{self.name}: {run.wire.last_model_failure}")
            return self.outcome(run, "agent_error", detail=f"{self.name} ended with {subtype}: {message}")
        return self.outcome(run, "completed", stop_reason=subtype or "exited")


def forget_keys(key_files: dict[Path, str | None]) -> None:
    """Rewrite (or remove) the files that handed a CLI its key (`Invocation.key_files`)."""
    for path, text in key_files.items():
        try:
            if text is None:
                path.unlink(missing_ok=True)
            else:
                tmp = path.with_name(path.name + ".new")
                tmp.write_text(text, encoding="utf-8")
                os.replace(tmp, path)  # whole, at once: a CLI that reads it again never sees half a file
        except OSError:
            pass


def key_file(home: Path, name: str, key: str) -> Path:
    """A file under HOME holding `key` alone, readable by its owner only (the CLI's uid)."""
    path = home / name
    path.write_text(key, encoding="utf-8")
    path.chmod(0o600)
    return path


def json_events(path: Path, limit: int = 100_000) -> list[dict[str, object]]:
    """The JSON objects of a JSON-lines output file (other lines skipped), at most `limit` of them."""
    events: list[dict[str, object]] = []
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            for line in handle:
                line = line.strip()
                if not line.startswith("{"):
                    continue
                try:
                    value = json.loads(line)
                except ValueError:
                    continue
                if isinstance(value, dict):
                    events.append(value)
                if len(events) >= limit:
                    break
    except OSError:
        pass
    return events

"""The `agentic-eval` command line: parse arguments, call the library, print.

One module per command (`COMMANDS`): `register(subparsers)` owns the command's flags, `handle(args)`
runs it; the flags several commands share are defined once in `args.py`. Kept thin and quick to
start: every heavy import happens inside the handler of the command that needs it. Expected errors
(`AgenticEvalError`) print as one line; set
`--debug` or AGENTIC_EVAL_DEBUG=1 for the traceback. Arguments that are not UTF-8 text are refused in
one line before parsing. SIGTERM stops a command as Ctrl-C does; a second signal (not the same one
again within ECHO_S, as `timeout` sends it), or a first one the command has not finished stopping for
after STOP_GRACE_S seconds, ends the process at once.

    args         the flags several commands share, and the argparse types
    run          run: a campaign, through runner.plan_start / plan_resume
    campaign     campaign: several models, agents and instruments from one TOML file (agentic_eval.campaign)
    report       report: runs and instrument results side by side
    tasks        tasks list | show | new
    validate     validate: every grader against the pristine repo and the reference fix
    agents       agents list | install
    sandbox      sandbox build: the docker sandbox's image
    serve_local  serve-local: a small GGUF model on 127.0.0.1
    probe        probe: one tool-call request in each API shape
    tooling      tooling: the synthetic tool-calling battery, or BFCL (--suite bfcl)
    forms        forms: the form matrix
    speed        speed: decode, TTFT, prefill, speculative acceptance
    think_check  think-check: does turning reasoning off make answers wrong?
    cold_start   cold-start: time from a server's start to its first token
                 (the instruments' commands: their rows in instruments.registry)
    classify     classify: label each model turn of a wire log
    export       export: a run's trials as ATIF trajectories or an Inspect eval log
    progress     the progress bar (a terminal) or log lines the long commands show
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from agentic_eval._version import __version__
from agentic_eval.cli.args import load_api_key_file, secrets_of
from agentic_eval.errors import AgenticEvalError

Handler = Callable[[argparse.Namespace], int]

BEFORE_INSTRUMENTS = ("run", "campaign", "report", "tasks", "validate", "agents", "sandbox", "serve_local", "probe")
AFTER_INSTRUMENTS = ("classify", "export")


def commands() -> tuple[str, ...]:
    """The command modules in the order `--help` lists them: `agentic_eval.cli.<name>`, the recorded instruments'
    from their rows in `instruments.registry` (their `cli`; a dotted path when kept outside the package) between
    probe and classify. Each has `register(subparsers)`, which adds its command and flags (and imports nothing
    heavy), and `handle(args) -> int`, which imports the library it needs and does the work."""
    from agentic_eval.instruments.registry import INSTRUMENTS

    return (*BEFORE_INSTRUMENTS, *(e.cli for e in INSTRUMENTS if e.cli), *AFTER_INSTRUMENTS)


COMMANDS = commands()
"""`commands()` as the package's own table has them."""

__all__ = ["COMMANDS", "build_parser", "commands", "main"]


class CommandParser(argparse.ArgumentParser):
    """argparse's parser, whose usage on a mistake is short: a command of many flags (`run` has 30) shows
    `usage: agentic-eval run [options] ...` and where its flags are listed, not a dozen lines above the error."""

    USAGE_LINES = 3
    """A usage longer than this many lines is shortened on a mistake (`--help` always shows it whole)."""

    def format_usage(self) -> str:
        full = super().format_usage()
        if full.count("\n") <= self.USAGE_LINES:
            return full
        formatter = self._get_formatter()
        formatter.add_usage(None, [a for a in self._actions if not a.option_strings], [])
        positionals = formatter.format_help().strip().removeprefix(f"usage: {self.prog}")
        return f"usage: {self.prog} [options]{positionals}  ({self.prog} --help lists them)\n"


def build_parser() -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = CommandParser(
        prog="agentic-eval",
        description="Judge-free evaluation of LLMs behind OpenAI-compatible endpoints as coding-agent brains.",
    )
    parser.add_argument("--version", action="version", version=f"agentic-eval {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks for expected errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in commands():
        importlib.import_module(name if "." in name else f"agentic_eval.cli.{name}").register(sub)
    _debug_everywhere(sub)
    _describe_everywhere(sub)
    return parser


def _describe_everywhere(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """A subcommand's `--help` opens with what it does: its one-line help, unless it has its own text."""
    helps = {a.dest: a.help for a in sub._choices_actions}
    for name, subparser in sub.choices.items():
        if not subparser.description and helps.get(name):
            text = str(helps[name])
            subparser.description = text[0].upper() + text[1:] + ("" if text.endswith((".", "?", ")")) else ".")
        for action in subparser._actions:
            if isinstance(action, argparse._SubParsersAction):
                _describe_everywhere(action)


def _innermost_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The (sub)command parser the arguments reached: `tasks show`, not the top level."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = getattr(args, action.dest, None)
            if chosen in action.choices:
                return _innermost_parser(action.choices[chosen], args)
    return parser


def _refuse_unknown(parser: argparse.ArgumentParser, args: argparse.Namespace, extra: list[str]) -> None:
    """Unknown arguments: the error and usage of the subcommand they were given to, with a
    did-you-mean for a mistyped flag (argparse itself shows the top-level usage)."""
    import difflib

    target = _innermost_parser(parser, args)
    known = [opt for action in target._actions for opt in action.option_strings if action.help != argparse.SUPPRESS]
    hints = []
    for word in extra:
        if word.startswith("-"):
            close = difflib.get_close_matches(word.split("=", 1)[0], known, n=1, cutoff=0.6)
            if close:
                hints.append(f"did you mean {close[0]}?")
    target.error(f"unrecognized arguments: {' '.join(extra)}" + (f" ({'; '.join(hints)})" if hints else ""))


def _debug_everywhere(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`--debug` after the subcommand works as well as before it."""
    for subparser in sub.choices.values():
        subparser.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
        for action in subparser._actions:  # nested: tasks list, agents install, ...
            if isinstance(action, argparse._SubParsersAction):
                _debug_everywhere(action)


def _not_utf8(argv: Sequence[str]) -> str | None:
    """The one-line error for the first argument that is not UTF-8 text (Python hands bytes it cannot
    decode over as lone surrogates), or None. A flag's value is named by its flag, never quoted: it
    may be a key."""
    for i, arg in enumerate(argv):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError as exc:
            flag, eq, _ = arg.partition("=")
            if arg.startswith("--") and eq:
                what = f"the value of {flag}"
            elif i > 0 and argv[i - 1].startswith("-"):
                what = f"the value of {argv[i - 1]}"
            else:
                what = f"argument {i + 1} ({os.fsencode(arg)[:60]!r})"
            return (f"agentic-eval: error: {what} is not UTF-8 text (byte {exc.start}); give names, paths and "
                    "values as UTF-8")
    return None


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if (bad := _not_utf8(argv)) is not None:
        print(bad, file=sys.stderr)
        return 2
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        _refuse_unknown(parser, args, extra)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    debug = args.debug or os.environ.get("AGENTIC_EVAL_DEBUG", "") not in ("", "0")
    restore = _signals_interrupt()
    try:
        load_api_key_file(args)
        return handler(args)
    except BrokenPipeError:  # `agentic-eval ... | head`: the reader has all it wants
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except UnicodeDecodeError as exc:
        if debug:
            raise
        print(f"agentic-eval: error: not a UTF-8 text file ({exc.reason} at byte {exc.start})", file=sys.stderr)
        return 2
    except AgenticEvalError as exc:
        if debug:
            raise
        from agentic_eval.endpoint import scrub

        print(f"agentic-eval: error: {scrub(str(exc), secrets_of(args))}", file=sys.stderr)
        return 2
    except OSError as exc:  # a folder that is a file, a path that cannot be written: the user's to fix
        if debug:
            raise
        where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
        print(f"agentic-eval: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("agentic-eval: interrupted", file=sys.stderr)
        return 130
    finally:
        restore()


STOP_GRACE_S = 30.0
"""How long a command may take to stop cleanly after SIGTERM or Ctrl-C (kill what it started, keep
what finished) before the process ends at once; AGENTIC_EVAL_STOP_GRACE_S sets another."""


def _stop_grace_s() -> float:
    import math

    try:
        value = float(os.environ.get("AGENTIC_EVAL_STOP_GRACE_S", STOP_GRACE_S))
    except ValueError:
        return STOP_GRACE_S
    return value if math.isfinite(value) and 0 <= value <= 3600 else STOP_GRACE_S


ECHO_S = 0.5
"""The same signal again within this many seconds is one signal, not the second that ends the process at once:
GNU `timeout` sends it to the command and then to the command's process group, so the command gets it twice."""


def _exit_now(why: str) -> None:
    """End the process at once (no waiting for threads still at work): what a second Ctrl-C asks for."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    with contextlib.suppress(OSError):
        os.write(2, f"agentic-eval: {why}: stopped at once; a trial's leftover folders and processes are "
                    "cleaned by the next run\n".encode())
    os._exit(130)


def _signals_interrupt() -> Callable[[], None]:
    """SIGTERM (`kill`, `timeout`, a cancelled CI job) stops every command as cleanly as Ctrl-C does:
    servers it started stopped, processes killed, finished results kept. A command that has not
    stopped STOP_GRACE_S seconds after the first signal (work it cannot cancel, such as a sandbox
    generator still running in a trial's thread) or that gets a second signal ends at once. Returns
    what puts the previous handlers back (kept once a signal came: the process is on its way out)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    import time

    received: list[tuple[int, float]] = []

    def on_signal(signum: int, frame: object) -> None:
        now = time.monotonic()
        if received and received[-1][0] == signum and now - received[-1][1] < ECHO_S:
            return  # the same signal again at once: `timeout` sends it to the command, then to its group
        received.append((signum, now))
        if len(received) > 1:
            _exit_now("a second signal")
        timer = threading.Timer(_stop_grace_s(), _exit_now, args=(f"still stopping after {_stop_grace_s():g}s",))
        timer.daemon = True  # never what keeps the process alive
        timer.start()
        raise KeyboardInterrupt

    previous: dict[int, Any] = {}
    for sig, usual in ((signal.SIGTERM, signal.SIG_DFL), (signal.SIGINT, signal.default_int_handler)):
        if signal.getsignal(sig) == usual:
            previous[sig] = signal.signal(sig, on_signal)

    def restore() -> None:
        if not received:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    return restore


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

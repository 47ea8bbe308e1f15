"""The `agentic-eval` command line: parse arguments, call the library, print.

Kept thin and quick to start: every heavy import happens inside the command
that needs it. Expected errors (`AgenticEvalError`) print as one line; set
`--debug` or AGENTIC_EVAL_DEBUG=1 for the traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from agentic_eval import __version__
from agentic_eval.errors import AgenticEvalError

Handler = Callable[[argparse.Namespace], int]


def _add_sandbox_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sandbox", choices=("bwrap", "docker", "local"), default=None, metavar="KIND",
                        help="how the model's commands, the reference fix and the grader are confined: bwrap "
                        "(bubblewrap: no network, read-only host, private /tmp and PIDs; the default where it works), "
                        "docker (a hardened container per trial phase) or local (unconfined, as this user; a warning "
                        "says so)")
    parser.add_argument("--docker-host", action="append", metavar="URL",
                        help="with --sandbox docker: a Docker engine to run trials on (repeatable: trials spread by "
                        "free capacity; default DOCKER_HOST)")
    parser.add_argument("--image", metavar="NAME",
                        help="with --sandbox docker: an image of your own (it needs python3, git and pytest) instead "
                        "of the suite's (agentic-eval sandbox build)")


def _add_tasks_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--tasks",
        action="append",
        metavar="PATH",
        default=None,
        help="a task pack folder (or a single task folder); repeatable. "
        "Default: the built-in packs and any installed through the 'agentic_eval.packs' entry points.",
    )


def _lazy(module: str, func: str) -> Handler:
    """A handler that imports `agentic_eval.<module>` only when its command runs."""

    def handler(args: argparse.Namespace) -> int:
        import importlib

        return int(getattr(importlib.import_module(f"agentic_eval.{module}"), func)(args))

    return handler


def _add_key_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--api-key", metavar="KEY",
                   help="API key (never written to any file, but a flag is visible to every user in `ps`: prefer "
                   "OPENAI_API_KEY or --api-key-file)")
    p.add_argument("--api-key-file", metavar="PATH",
                   help="read the API key from this file (its first line), instead of --api-key or OPENAI_API_KEY")


def _load_api_key_file(args: argparse.Namespace) -> None:
    """`--api-key-file PATH` read into `args.api_key`: one line of error if it cannot be used."""
    path = getattr(args, "api_key_file", None)
    if not path:
        return
    if getattr(args, "api_key", None):
        raise AgenticEvalError("give the key once: --api-key or --api-key-file, not both")
    try:
        with open(path, encoding="utf-8") as handle:
            key = handle.readline().strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise AgenticEvalError(f"--api-key-file {path}: cannot read it ({getattr(exc, 'strerror', None) or exc})"
                               ) from None
    if not key:
        raise AgenticEvalError(f"--api-key-file {path}: the file is empty; write the key on its first line")
    args.api_key = key


def _secrets_of(args: argparse.Namespace) -> list[str]:
    """What must never be printed: the API key and the credentials inside the base URL."""
    from agentic_eval.endpoint import url_secrets

    found = [getattr(args, "api_key", None) or "", os.environ.get("OPENAI_API_KEY", "")]
    for url in (getattr(args, "base_url", None), os.environ.get("OPENAI_BASE_URL")):
        found += url_secrets(url) if url else []
    return [s for s in found if len(s) >= 4]


def _add_endpoint_args(p: argparse.ArgumentParser, model_required: bool = True) -> None:
    p.add_argument("--model", required=model_required, help="model name the endpoint serves")
    p.add_argument("--base-url", metavar="URL",
                   help="endpoint base URL (default: OPENAI_BASE_URL or http://localhost:8000/v1)")
    _add_key_args(p)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentic-eval",
        description="Judge-free evaluation of LLMs behind OpenAI-compatible endpoints as coding-agent brains.",
    )
    parser.add_argument("--version", action="version", version=f"agentic-eval {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks for expected errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    # run
    p_run = sub.add_parser(
        "run",
        help="run the task pack against a model with an agent, grade every trial, print the table",
        description="Run the task pack against an OpenAI-compatible endpoint. The endpoint comes from "
        "--base-url/--api-key, else OPENAI_BASE_URL/OPENAI_API_KEY, else http://localhost:8000/v1.",
    )
    p_run.add_argument("--model", help="model name the endpoint serves (not needed with --resume, --local, "
                       "or the model-free agents oracle and nop)")
    p_run.add_argument("--base-url", metavar="URL", help="endpoint base URL, e.g. http://localhost:8000/v1")
    _add_key_args(p_run)
    p_run.add_argument("--agent", default=None, help="agent: builtin (default), oracle, nop, or a plugin")
    _add_tasks_arg(p_run)
    p_run.add_argument("--task", action="append", metavar="ID", help="only this task id; repeatable")
    p_run.add_argument("--seed", type=int, default=None, metavar="S", help="sandbox seed (default 0)")
    p_run.add_argument("--attempts", type=positive_int, default=None, metavar="K", help="attempts per task (default 1)")
    p_run.add_argument("-j", "--jobs", type=positive_int, default=1, metavar="N", help="trials run in parallel (default 1)")
    p_run.add_argument("--run-dir", default="runs", metavar="DIR", help="folder holding runs (default ./runs)")
    p_run.add_argument("--resume", metavar="RUN", help="resume a run (its folder or id): rerun unscored and missing "
                       "trials, keep scored ones; against the endpoint it recorded (a --local run: a new local "
                       "server) unless --base-url says otherwise")
    p_run.add_argument("--system-prompt-tokens", type=positive_int, metavar="N",
                       help="builtin agent: pad the system prompt with realistic agent guidance to about N tokens")
    p_run.add_argument("--lenient-text-calls", action="store_true",
                       help="builtin agent: also execute tool calls the model wrote as text (marked in the report)")
    p_run.add_argument("--stream", action="store_true", help="builtin agent: request streamed completions")
    p_run.add_argument("--agent-opt", action="append", metavar="KEY=VALUE", help="agent-specific option; repeatable")
    p_run.add_argument("--keep-sandboxes", action="store_true", help="keep each trial's sandbox in its trial folder")
    _add_sandbox_arg(p_run)
    p_run.add_argument("--json", action="store_true", help="print the run's summary as JSON at the end")
    p_run.add_argument("--local", action="store_true",
                       help="serve a small model on 127.0.0.1 with llama.cpp for this run (the [local] extra's "
                       "Qwen2.5-Coder-1.5B unless --gguf; CPU only, slow) and run against it")
    p_run.add_argument("--gguf", metavar="PATH", help="with --local: serve this GGUF file instead")
    p_run.add_argument("--ctx", type=positive_int, default=None, metavar="N",
                       help="with --local: context size (default 16384, or the resumed run's)")
    p_run.set_defaults(handler=_lazy("cli.run", "run"))

    # report
    p_rep = sub.add_parser(
        "report", help="agent runs and instrument results side by side: headline table, per-task matrix, by model"
    )
    p_rep.add_argument("runs", nargs="*", metavar="RUN",
                       help="run folder, or run id under --run-dir (default: every run there)")
    p_rep.add_argument("--run-dir", default="runs", metavar="DIR", help="folder holding runs (default ./runs)")
    p_rep.add_argument("--json", action="store_true", help="one JSON object per run")
    p_rep.add_argument("--format", choices=["table", "md"], default="table", help="table (default) or md")
    p_rep.add_argument("--compare", action="store_true",
                       help="two agent runs A B on the same tasks: which tasks flipped, and an exact test of "
                       "whether the difference could be noise")
    p_rep.add_argument("--html", metavar="FILE",
                       help="also write one self-contained HTML page (charts, per-trial details; no network to view)")
    p_rep.set_defaults(handler=_lazy("cli.run", "report"))

    # tasks
    p_tasks = sub.add_parser("tasks", help="list, show or scaffold tasks")
    tsub = p_tasks.add_subparsers(dest="tasks_command", metavar="ACTION")
    p_list = tsub.add_parser("list", help="list the tasks of every pack found")
    _add_tasks_arg(p_list)
    p_list.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p_list.add_argument(
        "--fix-size", action="store_true",
        help="also show what each reference fix changes (files, lines added/removed; seed 0): "
        "applies every fix once, then cached",
    )
    p_list.set_defaults(handler=_lazy("cli.tasks", "tasks_list"))
    p_show = tsub.add_parser("show", help="show one task: metadata, instruction, files")
    _add_tasks_arg(p_show)
    p_show.add_argument("task_id", metavar="ID")
    p_show.add_argument("--seed", type=int, default=0, help="seed used to render the instruction (default 0)")
    p_show.set_defaults(handler=_lazy("cli.tasks", "tasks_show"))
    p_new = tsub.add_parser("new", help="scaffold a new task folder (its grader and fix are placeholders)")
    p_new.add_argument("task_id", metavar="ID")
    p_new.add_argument(
        "--pack", metavar="DIR", default=".", help="pack folder to create the task in (default: current folder)"
    )
    p_new.add_argument("--generator", default="pyservice", help="sandbox generator to use (default pyservice)")
    p_new.set_defaults(handler=_lazy("cli.tasks", "tasks_new"))
    p_tasks.set_defaults(handler=lambda a: (p_tasks.print_help(), 2)[1])

    # validate
    p_val = sub.add_parser(
        "validate",
        help="check every grader: fails on the pristine sandbox, passes after the reference fix, no leaks",
    )
    _add_tasks_arg(p_val)
    p_val.add_argument("--task", action="append", metavar="ID", help="only this task id; repeatable")
    _add_sandbox_arg(p_val)
    p_val.add_argument("--repeat", type=positive_int, default=1, metavar="N", help="fresh sandboxes per check (default 1)")
    p_val.add_argument("--seed", type=int, default=0, metavar="S", help="sandbox seed (default 0)")
    p_val.add_argument("--seeds", type=positive_int, default=1, metavar="N",
                       help="check N seeds, S to S+N-1, each --repeat times: catches a generator or grader that only "
                       "works for one seed (default 1)")
    p_val.add_argument("--show", metavar="ID",
                       help="validate only this task and print the grader's output of every pristine and fixed run")
    p_val.add_argument("-j", "--jobs", type=positive_int, default=None, metavar="N", help="tasks validated in parallel")
    p_val.add_argument("--json", action="store_true", help="print one JSON object instead of the table: each "
                       "task's reasons, counts, time and every check run")
    p_val.set_defaults(handler=_lazy("cli.tasks", "validate"))

    # agents
    p_agents = sub.add_parser("agents", help="list agents, install the agent CLIs they drive")
    asub = p_agents.add_subparsers(dest="agents_command", metavar="ACTION")
    p_alist = asub.add_parser("list", help="each agent, whether its CLI is installed, and its version")
    p_alist.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p_alist.set_defaults(handler=_lazy("cli.agents", "agents_list"))
    p_ainst = asub.add_parser("install", help="install an agent CLI (pinned) into the project's tools folder")
    p_ainst.add_argument("names", nargs="+", metavar="NAME", help="agent name(s), or 'all'")
    p_ainst.set_defaults(handler=_lazy("cli.agents", "agents_install"))
    p_agents.set_defaults(handler=lambda a: (p_agents.print_help(), 2)[1])

    # sandbox
    p_sandbox = sub.add_parser("sandbox", help="the docker sandbox's image",
                               description="Build the image `--sandbox docker` runs trials in: Debian's packages "
                               "(debootstrap, no registry), imported into each engine, tagged by its recipe's hash.")
    sbsub = p_sandbox.add_subparsers(dest="sandbox_command", metavar="ACTION")
    p_sbuild = sbsub.add_parser("build", help="build (or import from the cache) the image on each engine",
                                description="Build the docker sandbox's image from Debian's packages (a minute or "
                                "two the first time, as root, with debootstrap), or import it from the cache, on "
                                "every engine named.")
    p_sbuild.add_argument("--docker-host", action="append", metavar="URL",
                          help="an engine to build on (repeatable; default DOCKER_HOST)")
    p_sbuild.add_argument("--package", action="append", metavar="DEB",
                          help="an extra Debian package in the image (repeatable)")
    p_sbuild.set_defaults(handler=_lazy("cli.sandbox", "sandbox_build"))
    p_sandbox.set_defaults(handler=lambda a: (p_sandbox.print_help(), 2)[1])

    # serve-local
    p_srv = sub.add_parser(
        "serve-local",
        help="serve a small GGUF model on 127.0.0.1 with llama.cpp (no GPU needed; needs the [local] extra)",
    )
    p_srv.add_argument("--gguf", metavar="PATH", help="GGUF model file (default: the registry-packaged small model)")
    p_srv.add_argument("--port", type=port_number, default=8080, metavar="P", help="port on 127.0.0.1 (default 8080)")
    p_srv.add_argument("--ctx", type=positive_int, default=16384, metavar="N", help="context size in tokens (default 16384)")
    p_srv.add_argument("--threads", type=positive_int, default=None, metavar="N", help="CPU threads (default: all cores)")
    p_srv.set_defaults(handler=_lazy("cli.serve_local", "serve_local"))

    # probe
    p_probe = sub.add_parser(
        "probe", help="what this server and model do with tools: one small tool-call request in each API shape"
    )
    p_probe.add_argument("--model", required=True, help="model name the endpoint serves")
    p_probe.add_argument("--base-url", metavar="URL", help="endpoint base URL (default: OPENAI_BASE_URL or "
                         "http://localhost:8000/v1)")
    _add_key_args(p_probe)
    p_probe.add_argument("--timeout", type=positive_float, default=180, metavar="S",
                         help="give up on one request after S seconds (default 180, for a CPU-only server)")
    p_probe.add_argument("--json", action="store_true", help="print JSON instead of the table")
    p_probe.set_defaults(handler=_lazy("cli.serve_local", "probe"))

    # tooling (issue 7)
    p_tool = sub.add_parser("tooling", help="the deterministic synthetic tool-calling battery (370 cases by default), "
                            "or BFCL's cases through the wire (--suite bfcl)")
    _add_endpoint_args(p_tool)
    p_tool.add_argument("--seed", type=int, default=45739, metavar="S", help="case generation seed (default 45739)")
    p_tool.add_argument("--cases", type=positive_int, default=None, metavar="N",
                        help="total cases, every phase scaled in proportion (default 370)")
    p_tool.add_argument("--phase", action="append", metavar="P",
                        help="only this phase (decisions, functional, structured, freeform, chains, negative)")
    p_tool.add_argument("-j", "--jobs", type=positive_int, default=4, metavar="N", help="requests in parallel (default 4)")
    p_tool.add_argument("--run-dir", default="runs", metavar="DIR", help="folder holding runs (default ./runs)")
    p_tool.add_argument("--json", action="store_true", help="print JSON instead of the table")
    # BFCL through the wire (issue 21)
    p_tool.add_argument("--suite", choices=("battery", "bfcl"), default="battery",
                        help="battery: the synthetic battery (default); bfcl: BFCL v4's single-turn cases from the "
                        "bfcl-eval package (pip install --no-deps bfcl-eval), each failure classified, BFCL's own "
                        "checker's score beside ours. Multi-turn, web-search, memory and Java/JavaScript come later")
    p_tool.add_argument("--category", default="all", metavar="C[,C]",
                        help="with --suite bfcl: simple_python, multiple, parallel, parallel_multiple, irrelevance, "
                        "live_simple, live_multiple, live_parallel, live_parallel_multiple, live_irrelevance, "
                        "live_relevance; globs like live_* (default all)")
    p_tool.add_argument("--limit", type=int, default=None, metavar="N",
                        help="with --suite bfcl: at most N cases per category, evenly spread (default every case)")
    p_tool.set_defaults(handler=_lazy("cli.tooling", "tooling"))

    p_forms = sub.add_parser("forms", help="the form matrix: one request in 10 API shapes with N tools exposed")
    _add_endpoint_args(p_forms)
    p_forms.add_argument("--tools", type=positive_int, default=500, metavar="N", help="tool schemas exposed (default 500)")
    p_forms.add_argument("--run-dir", default="runs", metavar="DIR", help="folder holding runs (default ./runs)")
    p_forms.add_argument("--json", action="store_true", help="print JSON instead of the table")
    p_forms.set_defaults(handler=_lazy("cli.tooling", "forms"))

    # speed (issue 8)
    p_speed = sub.add_parser("speed", help="contention-gated decode, TTFT, prefill and speculative acceptance")
    _add_endpoint_args(p_speed)
    p_speed.add_argument("--workload", default="code_edit,free_gen,long_ctx", metavar="W[,W]",
                         help="workloads: code_edit, free_gen, long_ctx (default all three)")
    p_speed.add_argument("--reps", type=positive_int, default=5, metavar="N", help="measured requests per workload (default 5)")
    p_speed.add_argument("--warmup", type=non_negative_int, default=1, metavar="N", help="warm-up requests per workload (default 1)")
    p_speed.add_argument("--max-tokens", type=positive_int, default=256, metavar="N", help="output tokens per request (default 256)")
    p_speed.add_argument("--long-ctx-tokens", type=positive_int, default=50000, metavar="N",
                         help="long_ctx prompt size in tokens (default 50000)")
    p_speed.add_argument("--prefill-sweep", action="store_true", help="fit the prefill rate over prompt lengths")
    p_speed.add_argument("--bytes-per-token", type=positive_float, metavar="GB",
                         help="GB read per decoded token, for the bandwidth sanity check")
    p_speed.add_argument("--checkpoint", metavar="DIR",
                         help="safetensors checkpoint folder (with config.json) to derive bytes per token")
    p_speed.add_argument("--bandwidth", type=positive_float, metavar="GB/s", help="the hardware's memory bandwidth")
    p_speed.add_argument("--run-dir", default="runs", metavar="DIR", help="folder holding runs (default ./runs)")
    p_speed.add_argument("--json", action="store_true", help="print JSON instead of the table")
    p_speed.set_defaults(handler=_lazy("cli.speed", "speed"))

    # think-check, cold-start (issue 9)
    p_think = sub.add_parser("think-check", help="does turning reasoning off make answers wrong? (arithmetic problems)")
    _add_endpoint_args(p_think)
    p_think.add_argument("--problems", type=positive_int, default=20, metavar="N", help="problems (default 20)")
    p_think.add_argument("--seed", type=int, default=0, metavar="S", help="problem generation seed (default 0)")
    p_think.add_argument("--run-dir", default="runs", metavar="DIR", help="folder holding runs (default ./runs)")
    p_think.add_argument("--json", action="store_true", help="print JSON instead of the table")
    p_think.set_defaults(handler=_lazy("cli.think_check", "think_check"))

    p_cold = sub.add_parser("cold-start", help="time from starting a server command to its first token")
    p_cold.add_argument("--cmd", metavar="COMMAND", help="the server command to start (run through the shell)")
    _add_endpoint_args(p_cold, model_required=False)
    p_cold.add_argument("--repeat", type=positive_int, default=1, metavar="N", help="starts to measure (default 1)")
    p_cold.add_argument("--timeout", type=positive_float, default=1800, metavar="S",
                        help="give up on a start after S seconds (default 1800)")
    p_cold.add_argument("--ollama-unload", action="store_true",
                        help="for a running Ollama: unload the model first and report load_duration "
                        "(--base-url defaults to http://localhost:11434/v1 here)")
    p_cold.add_argument("--run-dir", default="runs", metavar="DIR", help="folder holding runs (default ./runs)")
    p_cold.add_argument("--json", action="store_true", help="print JSON instead of the table")
    p_cold.set_defaults(handler=_lazy("cli.think_check", "cold_start"))

    # classify
    p_cls = sub.add_parser("classify", help="label each model turn of a wire log (real vs text-written tool calls)")
    p_cls.add_argument("wire", metavar="WIRE.jsonl", help="a wire log, or JSONL of {request, response} objects")
    p_cls.add_argument("--json", action="store_true", help="one JSON object per input line")
    p_cls.set_defaults(handler=_lazy("cli.classify", "classify"))

    _debug_everywhere(sub)
    _describe_everywhere(sub)
    return parser


def _describe_everywhere(sub: Any) -> None:
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


def _debug_everywhere(sub: Any) -> None:
    """`--debug` after the subcommand works as well as before it."""
    for subparser in sub.choices.values():
        subparser.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
        for action in subparser._actions:  # nested: tasks list, agents install, ...
            if isinstance(action, argparse._SubParsersAction):
                _debug_everywhere(action)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        _refuse_unknown(parser, args, extra)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    debug = args.debug or os.environ.get("AGENTIC_EVAL_DEBUG", "") not in ("", "0")
    _sigterm_interrupts()
    try:
        _load_api_key_file(args)
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

        print(f"agentic-eval: error: {scrub(str(exc), _secrets_of(args))}", file=sys.stderr)
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


def _sigterm_interrupts() -> None:
    """SIGTERM (`kill`, `timeout`, a cancelled CI job) stops every command as cleanly as Ctrl-C does:
    servers it started stopped, processes killed, finished results kept."""
    import signal
    import threading

    def on_term(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, on_term)


def positive_float(text: str) -> float:
    """argparse type: a finite number above 0 (not nan, not inf)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text} is not a finite number; give a number above 0")
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text} must be above 0")
    return value


def positive_int(text: str) -> int:
    """argparse type: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be at least 1")
    return value


def non_negative_int(text: str) -> int:
    """argparse type: an integer of at least 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} must be 0 or more")
    return value


def port_number(text: str) -> int:
    """argparse type: a TCP port, 0 (any free one) to 65535."""
    value = non_negative_int(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"{value} is not a port (0 to 65535)")
    return value


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""The flags several commands share, defined once: the endpoint (--model, --base-url, --api-key,
--api-key-file), --run-dir, task selection (--tasks, --task), the sandbox (--sandbox, --docker-host,
--image), and the argparse types (positive_int, positive_float, non_negative_int, port_number).

Imports argparse and the standard library only: every command module registers its flags with these
while `agentic-eval --help` builds the parser, which must stay quick.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Iterator

from agentic_eval.errors import AgenticEvalError
from agentic_eval.plugins import BACKENDS_GROUP


class RegisteredNames:
    """argparse choices: the names registered in an entry-point group, read only when a value is checked or
    an error lists them (so building the parser, and `--help`, read no package metadata)."""

    def __init__(self, group: str) -> None:
        self.group = group

    def _names(self) -> list[str]:
        from agentic_eval.plugins import entry_points_in

        return sorted({ep.name for ep in entry_points_in(self.group)})

    def __contains__(self, name: object) -> bool:
        return name in self._names()

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())


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


def add_key_args(p: argparse.ArgumentParser) -> None:
    """--api-key and --api-key-file (read into args.api_key by `load_api_key_file` before the handler runs)."""
    p.add_argument("--api-key", metavar="KEY",
                   help="API key (never written to any file, but a flag is visible to every user in `ps`: prefer "
                   "OPENAI_API_KEY or --api-key-file)")
    p.add_argument("--api-key-file", metavar="PATH",
                   help="read the API key from this file (its first line), instead of --api-key or OPENAI_API_KEY")


def add_endpoint_args(p: argparse.ArgumentParser, model_required: bool = True) -> None:
    """The endpoint: --model, --base-url, --api-key, --api-key-file."""
    p.add_argument("--model", required=model_required, help="model name the endpoint serves")
    p.add_argument("--base-url", metavar="URL",
                   help="endpoint base URL (default: OPENAI_BASE_URL or http://localhost:8000/v1)")
    add_key_args(p)


def add_run_dir_arg(p: argparse.ArgumentParser) -> None:
    """--run-dir: where runs are saved and found."""
    p.add_argument("--run-dir", default="runs", metavar="DIR", help="folder holding runs (default ./runs)")


def add_json_arg(p: argparse.ArgumentParser, help: str = "print JSON instead of the table") -> None:
    """--json: machine-readable output on stdout."""
    p.add_argument("--json", action="store_true", help=help)


def add_tasks_arg(p: argparse.ArgumentParser) -> None:
    """--tasks PATH (repeatable): the task packs to load."""
    p.add_argument(
        "--tasks",
        action="append",
        metavar="PATH",
        default=None,
        help="a task pack folder (or a single task folder); repeatable. "
        "Default: the built-in packs and any installed through the 'agentic_eval.packs' entry points.",
    )


def add_task_arg(p: argparse.ArgumentParser) -> None:
    """--task ID (repeatable): only these tasks."""
    p.add_argument("--task", action="append", metavar="ID", help="only this task id; repeatable")


def add_sandbox_args(parser: argparse.ArgumentParser) -> None:
    """--sandbox, --docker-host, --image: how trials (and validation) are confined."""
    parser.add_argument("--sandbox", choices=RegisteredNames(BACKENDS_GROUP), default=None, metavar="KIND",
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


def sandbox_options(args: argparse.Namespace) -> dict[str, object]:
    """The chosen backend's own options from its flags (docker's --docker-host and --image)."""
    return {k: v for k, v in (("hosts", tuple(getattr(args, "docker_host", None) or ())),
                              ("image", getattr(args, "image", None))) if v}


def needs_action(parser: argparse.ArgumentParser, dest: str) -> argparse._SubParsersAction:  # type: ignore[type-arg]
    """The subparsers of a command that takes an ACTION (`tasks list`): the command alone prints its help
    and exits 2."""
    parser.set_defaults(print_help=parser.print_help)
    return parser.add_subparsers(dest=dest, metavar="ACTION")


def print_help_of(args: argparse.Namespace) -> int:
    """A command given without its ACTION: its help, exit status 2."""
    args.print_help()
    return 2


def load_api_key_file(args: argparse.Namespace) -> None:
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


def secrets_of(args: argparse.Namespace) -> list[str]:
    """What must never be printed: the API key and the credentials inside the base URL."""
    from agentic_eval.endpoint import url_secrets

    found = [getattr(args, "api_key", None) or "", os.environ.get("OPENAI_API_KEY", "")]
    for url in (getattr(args, "base_url", None), os.environ.get("OPENAI_BASE_URL")):
        found += url_secrets(url) if url else []
    return [s for s in found if len(s) >= 4]

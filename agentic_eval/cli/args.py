"""The flags several commands share, defined once: the endpoint (--model, --base-url, --api-key,
--api-key-file), --run-dir, task selection (--tasks, --task), the sandbox (--sandbox, --docker-host,
--image), and the argparse types every numeric flag uses: each has an upper bound its error names
(`whole_number`, `number_above`, and the common cases `tokens`, `seed_number`, `jobs_number`, `repeats`,
`seconds`, `port_number`), and the text a request carries is checked before anything runs (`base_url`,
`api_key_text`). A key file is read by `load_api_key_file` with a size cap, never a FIFO or a device.

Imports argparse and the standard library only: every command module registers its flags with these
while `agentic-eval --help` builds the parser, which must stay quick.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from agentic_eval.errors import AgenticEvalError
from agentic_eval.plugins import BACKENDS_GROUP

if TYPE_CHECKING:
    from agentic_eval.runner.settings import SandboxChoice


class RegisteredNames:
    """argparse choices: the names registered in an entry-point group, read only when a value is checked or
    an error lists them (so building the parser, and `--help`, read no package metadata)."""

    def __init__(self, group: str) -> None:
        self.group = group

    def _names(self) -> list[str]:
        from agentic_eval.plugins import names_in

        return names_in(self.group)

    def __contains__(self, name: object) -> bool:
        return name in self._names()

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

MAX_TOKENS = 2_000_000
"""The most tokens any flag or option counts (a padded system prompt, a context, an output): about the
largest context a model serves."""
MAX_SEED = 2**32 - 1
"""Seeds run 0 to 2**32 - 1 (a negative seed would only repeat a positive one: Python seeds with |seed|)."""
MAX_SECONDS = 86_400.0
"""The longest any one wait may be: a day."""
MAX_JOBS = 256
"""The most trials, checks or requests in parallel."""
MAX_REPEATS = 1000
"""The most attempts, repeats, seeds or starts of one thing."""


# What `agentic-eval validate` runs by default (`tasks new` names them in its hint too).
DEFAULT_SEEDS = 3
"""Seeds `validate` checks by default: a grader wrong for one seed in two slips past three seeds 12% of the time."""
DEFAULT_REPEAT = 2
"""Runs of each check per seed by default: 3 x 2 = 6 runs, past which a grader that goes wrong one run in two
slips 2% of the time, one run in four 18%. Two runs per seed also tell a seed that breaks the grader from chance."""
REDTEAM_SEEDS = 1
"""Seeds the red team runs on by default: its attempts are generic, knowing nothing of the seed, and each seed costs a
dozen or more graded attempts per task (on the built-in packs, as much as all 3 x 2 runs of both checks)."""


def _shown(text: str) -> str:
    """A value as an error message may quote it: one line, not a megabyte."""
    text = text.replace("\n", " ")
    return text if len(text) <= 40 else text[:30] + "..." + text[-6:]


def whole_number(least: int, most: int) -> Callable[[str], int]:
    """argparse type: a whole number from `least` to `most`; the error names the bound it broke
    ("99999999999 is over the limit of 1,000")."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            if text.strip().lstrip("+-").replace("_", "").isdigit():  # too many digits for int() itself
                sign_negative = text.strip().startswith("-")
                raise argparse.ArgumentTypeError(
                    f"{_shown(text)} must be at least {least:,}" if sign_negative else
                    f"{_shown(text)} is over the limit of {most:,}") from None
            raise argparse.ArgumentTypeError(f"{_shown(text)!r} is not a whole number") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"{value} must be 0 or more" if least == 0 else
                                             f"{_shown(text)} must be at least {least:,}")
        if value > most:
            raise argparse.ArgumentTypeError(f"{_shown(text)} is over the limit of {most:,}")
        return value

    parse.__name__ = f"whole number from {least} to {most}"
    return parse


def number_above(floor: float, most: float, *, or_equal: bool = False) -> Callable[[str], float]:
    """argparse type: a finite number above `floor` (or equal to it, with `or_equal`) and at most `most` (not nan,
    not inf)."""
    bound = f"at least {floor:g}" if or_equal else f"above {floor:g}"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{_shown(text)!r} is not a number") from None
        if math.isnan(value):
            raise argparse.ArgumentTypeError(f"{_shown(text)} is not a number; give one {bound}")
        if value < floor or (value == floor and not or_equal):
            raise argparse.ArgumentTypeError(f"{_shown(text)} must be {bound}")
        if value > most:  # inf included
            limit = f"{int(most):,}" if float(most).is_integer() else f"{most:g}"
            raise argparse.ArgumentTypeError(f"{_shown(text)} is over the limit of {limit}")
        return value

    parse.__name__ = f"number {bound} up to {most:g}"
    return parse


tokens = whole_number(1, MAX_TOKENS)
"""argparse type: a token count, 1 to MAX_TOKENS."""
seed_number = whole_number(0, MAX_SEED)
"""argparse type: a seed, 0 to 2**32 - 1."""
jobs_number = whole_number(1, MAX_JOBS)
"""argparse type: how many at once (-j), 1 to MAX_JOBS."""
repeats = whole_number(1, MAX_REPEATS)
"""argparse type: attempts, repeats, seeds, starts: 1 to MAX_REPEATS."""
seconds = number_above(0.0, MAX_SECONDS)
"""argparse type: a time limit in seconds, above 0 and at most a day."""
MAX_AGENT_SECONDS = 7 * 24 * 3600.0
"""The longest `run --agent-timeout`: a week (a model on CPU may take minutes per answer)."""
agent_seconds = number_above(1.0, MAX_AGENT_SECONDS, or_equal=True)
"""argparse type: the agent's time limit in seconds, 1 to a week."""


_port = whole_number(0, 65535)


def port_number(text: str) -> int:
    """argparse type: a TCP port, 0 (any free one) to 65535."""
    try:
        return _port(text)
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"{exc} (a port is 0 to 65535)") from None


def base_url(text: str) -> str:
    """argparse type: an http(s) URL httpx can use (agentic_eval.endpoint.url_problem says why not)."""
    from agentic_eval.endpoint import redact_url, url_problem

    problem = url_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(f"{_shown(redact_url(text))!r} {problem}")
    return text


def api_key_text(text: str) -> str:
    """argparse type: a key an HTTP header can carry (agentic_eval.endpoint.key_problem says why not)."""
    from agentic_eval.endpoint import key_problem

    problem = key_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(f"the key given {problem}")  # never quoted: it is a secret
    return text


def add_key_args(p: argparse.ArgumentParser) -> None:
    """--api-key and --api-key-file (read into args.api_key by `load_api_key_file` before the handler runs)."""
    p.add_argument("--api-key", metavar="KEY", type=api_key_text,
                   help="API key (never written to any file, but a flag is visible to every user in `ps`: prefer "
                   "OPENAI_API_KEY or --api-key-file)")
    p.add_argument("--api-key-file", metavar="PATH",
                   help="read the API key from this file (its first line), instead of --api-key or OPENAI_API_KEY")


def add_endpoint_args(p: argparse.ArgumentParser, model_required: bool = True) -> None:
    """The endpoint: --model, --base-url, --api-key, --api-key-file."""
    p.add_argument("--model", required=model_required, help="model name the endpoint serves")
    p.add_argument("--base-url", metavar="URL", type=base_url,
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
        help="a task pack folder (or a single task folder), or a built-in or installed pack's name (core, "
        "node, ops, impossible, realpy); repeatable. Default: the built-in packs core, node and ops and any "
        "installed through the 'agentic_eval.packs' entry points (the impossible and realpy packs only when asked "
        "for).",
    )


def add_task_arg(p: argparse.ArgumentParser) -> None:
    """--task ID (repeatable): only these tasks."""
    p.add_argument("--task", action="append", metavar="ID", help="only this task id; repeatable")


def add_sandbox_args(parser: argparse.ArgumentParser) -> None:
    """--sandbox, --sandbox-opt and docker's aliases of it: how trials (and validation) are confined."""
    parser.add_argument("--sandbox", choices=RegisteredNames(BACKENDS_GROUP), default=None, metavar="KIND",
                        help="how the model's commands, the reference fix and the grader are confined: bwrap "
                        "(bubblewrap: no network, read-only host, private /tmp and PIDs; the default where it works), "
                        "docker (a hardened container per trial phase) or local (unconfined, as this user; a warning "
                        "says so)")
    parser.add_argument("--sandbox-opt", action="append", metavar="KEY=VALUE",
                        help="an option of the --sandbox backend (a list: comma-separated, or the key again); "
                        "repeatable; docs/sandboxes.md lists each backend's")
    parser.add_argument("--docker-host", action="append", metavar="URL",
                        help="with --sandbox docker: a Docker engine to run trials on (repeatable: trials spread by "
                        "free capacity; default DOCKER_HOST)")
    parser.add_argument("--image", metavar="NAME",
                        help="with --sandbox docker: an image of your own (it needs python3, git and pytest) instead "
                        "of the suite's (agentic-eval sandbox build)")
    parser.add_argument("--base-image", metavar="NAME",
                        help="with --sandbox docker, for tasks that bring their own Dockerfile: build every outside "
                        "FROM on this image instead ('suite': the suite's own image), for an engine that cannot "
                        "get their base images (no image registry)")
    parser.add_argument("--base-image-packages", metavar="PKG,...", type=_package_list,
                        help="with --base-image suite: Debian packages to add to the stand-in image, which has "
                        "python3, git, pytest and make but not python, pip, gcc or curl as the field's bases do "
                        "(e.g. python3-pip,gcc,curl; built once from apt's mirror and cached)")


def _package_list(text: str) -> tuple[str, ...]:
    """argparse type of --base-image-packages: comma-separated Debian package names, each checked here (an option-like
    `-o...`, shell metacharacters or a megabyte of text is one line of error, before anything runs)."""
    from agentic_eval.confine.docker_image import bad_package  # stdlib-only module, read when the flag is given

    names = tuple(p.strip() for p in text.split(",") if p.strip())
    bad = bad_package(names)
    if bad is not None:
        raise argparse.ArgumentTypeError(f"{_shown(bad)!r} is not a Debian package name: give comma-separated names "
                                         "like python3-pip,gcc,curl")
    return names


def sandbox_choice(args: argparse.Namespace) -> SandboxChoice:
    """The backend named by --sandbox and its own options: --sandbox-opt KEY=VALUE (a key given again makes a
    list) with docker's flags, its aliases (they name docker when no sandbox is named)."""
    from agentic_eval.runner.settings import SandboxChoice

    options: dict[str, object] = {}
    for pair in getattr(args, "sandbox_opt", None) or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise AgenticEvalError(f"--sandbox-opt {pair!r}: use KEY=VALUE")
        key = key.strip()
        before = options.get(key)
        options[key] = value if before is None else [*(before if isinstance(before, list) else [before]), value]
    return SandboxChoice.of(getattr(args, "sandbox", None), options, hosts=getattr(args, "docker_host", None),
                            image=getattr(args, "image", None), base_image=getattr(args, "base_image", None),
                            base_image_packages=getattr(args, "base_image_packages", None))


def needs_action(parser: argparse.ArgumentParser, dest: str) -> argparse._SubParsersAction:  # type: ignore[type-arg]
    """The subparsers of a command that takes an ACTION (`tasks list`): the command alone prints its help
    and exits 2."""
    parser.set_defaults(print_help=parser.print_help)
    return parser.add_subparsers(dest=dest, metavar="ACTION")


def print_help_of(args: argparse.Namespace) -> int:
    """A command given without its ACTION: its help, exit status 2."""
    args.print_help()
    return 2


KEY_FILE_LIMIT = 64 * 1024
"""The largest --api-key-file read: a key is a line, not a file of megabytes."""


def load_api_key_file(args: argparse.Namespace) -> None:
    """`--api-key-file PATH` read into `args.api_key`: one line of error if it cannot be used (a FIFO, a
    device such as /dev/zero, a folder, a file over KEY_FILE_LIMIT, not UTF-8, empty, or a key an HTTP
    header cannot carry)."""
    from agentic_eval.inputs import read_data_text

    path = getattr(args, "api_key_file", None)
    if not path:
        return
    if getattr(args, "api_key", None):
        raise AgenticEvalError("give the key once: --api-key or --api-key-file, not both")
    text = read_data_text(path, what=f"--api-key-file {path}", limit=KEY_FILE_LIMIT)
    key = (text.splitlines() or [""])[0].strip()
    if not key:
        raise AgenticEvalError(f"--api-key-file {path}: the file is empty; write the key on its first line")
    from agentic_eval.endpoint import key_problem

    if problem := key_problem(key):
        raise AgenticEvalError(f"--api-key-file {path}: the key on its first line {problem}")
    args.api_key = key


def check_gguf(path: str | None) -> None:
    """--gguf names a model file: it must be a regular file (not a FIFO, a device or a folder); llama.cpp
    reads it, so there is no size cap."""
    from agentic_eval.inputs import special_file_problem

    if path and (problem := special_file_problem(os.path.expanduser(path))) is not None:
        raise AgenticEvalError(f"--gguf {path}: {problem}; give the GGUF model file")


RUN_FILE_LIMITS = {"run.json": 64 * 1024 * 1024, "instrument.json": 64 * 1024 * 1024,
                   "trials.jsonl": 4 * 1024 * 1024 * 1024}
"""The records of a run a command reads (report, run --resume), each a regular file under its cap."""


def check_run_files(run_dir: object) -> None:
    """Refuse in one line, naming the file, a run folder whose records are special files (a FIFO would
    hang the reader, /dev/zero would fill memory), larger than RUN_FILE_LIMITS, or (the small JSON
    files) not UTF-8 text. trials.jsonl is decoded line by line by its reader, a bad line skipped."""
    from agentic_eval.inputs import check_data_file, read_data_text

    for name, limit in RUN_FILE_LIMITS.items():
        path = os.path.join(str(run_dir), name)
        if not os.path.lexists(path):
            continue
        if name.endswith(".json"):
            read_data_text(path, what=path, limit=limit)
        else:
            check_data_file(path, what=path, limit=limit)


def secrets_of(args: argparse.Namespace) -> list[str]:
    """What must never be printed: the API key and the credentials inside the base URL."""
    from agentic_eval.endpoint import url_secrets

    found = [getattr(args, "api_key", None) or "", os.environ.get("OPENAI_API_KEY", "")]
    for url in (getattr(args, "base_url", None), os.environ.get("OPENAI_BASE_URL")):
        found += url_secrets(url) if url else []
    return [s for s in found if len(s) >= 4]

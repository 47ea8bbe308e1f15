"""A run folder's own files, read and named safely. A run someone handed over (a shared or copied run, one
to export or report on) is a stranger's input: its records name the files a reader opens (a trial's `files`:
wire log, grader output, diff, transcript) and the ids a writer names files by (run id, task id).

- A file a record names is read only if it is inside its run folder (the path resolved, links and `..`
  included, then compared), is not itself a symbolic link, and is a regular file under a size cap: never a
  file of this machine (`../../etc/passwd`, a link to it), never a wait on a FIFO or a read of /dev/zero.
- An id used as a file name is one safe path component (`safe_name`): anything else (`../x`, `/abs`, `a/b`)
  is mapped to a safe name with a digest of the real id, which stays inside the file written.
- A path about to be written is checked to stay under the folder it is meant for (`check_inside`).

Standard library only (the report and `run --atif` use it too).
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import TextIO

from agentic_eval.errors import AgenticEvalError
from agentic_eval.inputs import GIB, MIB, open_data_file, read_data_head

__all__ = ["RUN_TRIAL_FILE_LIMIT", "WIRE_LOG_LIMIT", "check_inside", "inside", "open_run_file", "open_run_text",
           "read_run_text", "run_file", "safe_name", "shown"]

WIRE_LOG_LIMIT = 4 * GIB
"""The largest wire log or transcript read (a run's trials.jsonl has the same cap)."""
RUN_TRIAL_FILE_LIMIT = 64 * GIB
"""The largest grader output or diff file opened at all (only its head is read)."""
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+=@-]{0,127}")


def safe_name(text: str) -> tuple[str, bool]:
    """`text` as one safe file name, and whether it had to change. A name of letters, digits and `._+=@-`
    (not starting with a dot or a dash, at most 128 characters) is kept; anything else (`..`, a `/`, an
    absolute path, a control character) becomes its safe characters and a digest of the whole, so two
    different ids never share a name."""
    if _SAFE_NAME.fullmatch(text):
        return text, False
    kept = re.sub(r"[^A-Za-z0-9._-]+", "_", text).lstrip("._-")[:64] or "id"
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{kept}-{digest}", True


def shown(text: str) -> str:
    """`text` for a line on a terminal: control characters (an escape sequence in a stranger's id) escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def inside(path: Path, root: Path) -> bool:
    """Whether `path` stays under `root` once both are resolved (links and `..` followed as far as they exist)."""
    real_root = root.resolve()
    real = path.resolve()
    return real == real_root or real.is_relative_to(real_root)


def check_inside(path: Path, root: Path, *, what: str) -> None:
    """Refuse, in one line, a path about to be written or read that leaves `root`."""
    if not inside(path, root):
        raise AgenticEvalError(f"{what}: {path} is outside {root}; refused")


def run_file(run_dir: Path, rel: str, *, what: str) -> Path:
    """The file a record names (`rel`, relative to the run folder), refused in one line (naming it as `what`,
    which should show `rel`) when it is absolute or leads outside the run folder."""
    if not rel or "\0" in rel or os.path.isabs(rel):
        raise AgenticEvalError(f"{what}: not a path inside the run folder; refused")
    path = run_dir / rel
    if not inside(path, run_dir):
        raise AgenticEvalError(f"{what}: leads outside the run folder {run_dir}; refused")
    return path


def open_run_file(run_dir: Path, rel: str, *, what: str, limit: int = WIRE_LOG_LIMIT) -> int:
    """A read-only descriptor of the run's own regular file `rel` (not a link, inside the run folder, at most
    `limit` bytes), else the one-line refusal (AgenticEvalError). The caller closes it."""
    path = run_file(run_dir, rel, what=what)
    return open_data_file(path, what=what, limit=limit, follow_links=False)


def open_run_text(run_dir: Path, rel: str, *, what: str, limit: int = WIRE_LOG_LIMIT) -> TextIO:
    """`open_run_file` as text to read line by line (bad UTF-8 replaced)."""
    fd = open_run_file(run_dir, rel, what=what, limit=limit)
    return os.fdopen(fd, encoding="utf-8", errors="replace")


def read_run_text(run_dir: Path, rel: str, *, what: str, limit: int = 1 * MIB) -> tuple[str, bool]:
    """The first `limit` bytes of the run's own file `rel` as text (bad UTF-8 replaced) and whether it was
    longer; refused like `open_run_file`."""
    path = run_file(run_dir, rel, what=what)
    data, cut = read_data_head(path, what=what, limit=limit, follow_links=False, max_size=RUN_TRIAL_FILE_LIMIT)
    return data.decode("utf-8", "replace"), cut

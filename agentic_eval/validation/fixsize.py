"""How big is a task's reference fix? Files and lines it changes: an objective size measure.

`reference_fix_size(task)` materialises the task's sandbox for a seed, applies the reference
fix exactly as `validate` does, and counts the change against the pristine commit with
`git diff --numstat` from the pristine store (new files included). Results are cached per task digest and seed in
the cache folder (agentic_eval.paths: `AGENTIC_EVAL_CACHE`, else `$XDG_CACHE_HOME/agentic-eval`), because
materialising every task takes about a second each.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from agentic_eval.grading import gitsafe
from agentic_eval.packs.task import Task
from agentic_eval.paths import cache_dir
from agentic_eval.plural import counted

CACHE_VERSION = 1


@dataclass(frozen=True)
class FixSize:
    """What the reference fix changes, compared with the pristine commit."""

    files: list[str] = field(default_factory=list)
    """Changed, added or deleted paths."""
    added: int = 0
    """Lines added (binary files count 0)."""
    removed: int = 0
    """Lines removed."""
    error: str = ""
    """Why the size could not be measured (the fix failed); empty when it was."""

    def label(self) -> str:
        """e.g. `3 files +41 -7`, `no change`, or `? (why)`."""
        if self.error:
            return f"? ({self.error})"
        if not self.files:
            return "no change"
        return f"{counted(len(self.files), 'file')} +{self.added} -{self.removed}"


def parse_numstat(text: str) -> FixSize:
    """`git diff --numstat -z` output -> FixSize (pure; renames are off, so one path per entry)."""
    files, added, removed = [], 0, 0
    for entry in text.split("\0"):
        parts = entry.split("\t", 2)
        if len(parts) != 3 or not parts[2]:
            continue
        plus, minus, path = parts
        files.append(path)
        added += int(plus) if plus.isdigit() else 0
        removed += int(minus) if minus.isdigit() else 0
    return FixSize(sorted(files), added, removed)


def measure_fix(task: Task, seed: int = 0) -> FixSize:
    """Apply the reference fix to a fresh sandbox and measure the change (no cache)."""
    from agentic_eval.grading.grader import ScriptRunner
    from agentic_eval.packs.sandbox import materialize_sandbox

    base = Path(tempfile.mkdtemp(prefix=f"ae-fixsize-{task.id}-"))
    try:
        sandbox = materialize_sandbox(task, seed, base / "sandbox")
        with ScriptRunner(task, sandbox) as runner:
            fix = runner.apply_fix()
        if fix.exit_code != 0:
            return FixSize(error="the reference fix failed")
        assert sandbox.pristine_store is not None
        numstat = gitsafe.diff_numstat(sandbox.path, sandbox.pristine_store, sandbox.pristine_commit)
        return parse_numstat(numstat)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def reference_fix_size(task: Task, seed: int = 0, cache: Path | None = None) -> FixSize:
    """The size of the task's reference fix for `seed`, from the cache when the task is unchanged."""
    folder = (cache or cache_dir()) / "fix-size"
    path = folder / f"{task.id}-{task.digest()[:16]}-{seed}-v{CACHE_VERSION}.json"
    try:
        return FixSize(**json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        pass
    size = measure_fix(task, seed)
    if not size.error:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(asdict(size)), encoding="utf-8")
        except OSError:  # a read-only cache only costs time
            pass
    return size

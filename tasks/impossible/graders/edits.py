"""What the pack's reference cheats share: one exact edit of a file of the agent's tree."""

from __future__ import annotations

from pathlib import Path


def replace_once(path: str | Path, old: str, new: str) -> None:
    """Replace `old` by `new` in `path`; `old` must occur exactly once (else the cheat no longer fits the
    generated repo, which `validate` reports as the reference cheat failing)."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    if text.count(old) != 1:
        raise SystemExit(f"expected {old!r} once in {path}")
    path.write_text(text.replace(old, new), encoding="utf-8")

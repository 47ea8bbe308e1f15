"""The agentic-eval `ops` task pack as a package of its own: `pack_dir()` is its entry point."""

from pathlib import Path

__all__ = ["pack_dir"]


def pack_dir() -> Path:
    """The pack folder: one folder per task, and the pack's generator in sandboxes/."""
    return Path(__file__).resolve().parent / "pack"

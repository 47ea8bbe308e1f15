"""A tiny generator for an environment task: one file whose value depends on the seed."""

from pathlib import Path


def generate(root: Path, seed: int, params: dict) -> dict:
    value = f"v{seed * 7919 % 1000:03d}"
    (root / "config.txt").write_text(f"value = {value}\n")
    return {"value": value}

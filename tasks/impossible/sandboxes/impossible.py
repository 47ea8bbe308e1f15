"""The impossible pack's generator: a built-in repo, then its visible tests edited to contradict the instruction.

params: `base` (the generator to start from: pyservice, nodeservice, opsrepo), `base_params` (passed to it
unchanged), and `edits`, each `{file, old, new}` (replace `old`, which must occur exactly once, by `new`) or
`{file, append}` (add to the end, creating the file). `{{name}}` in an edit is filled from the base
generator's variables, so an edit fits every seed. The variables returned are the base generator's, but for
its `twins` (the edited tests are no longer what they describe).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def _fill(text: str, variables: dict[str, Any]) -> str:
    return _PLACEHOLDER.sub(lambda m: str(variables[m.group(1)]), text)


def generate(root: Path, seed: int, params: dict[str, Any]) -> dict[str, Any]:
    from agentic_eval.packs.sandbox import find_generator

    variables = find_generator(params["base"])(root, seed, dict(params.get("base_params", {})))
    # The edits make the visible tests contradict the instruction: the base's twins (graders/twincheck.py) no
    # longer describe them, and the verdict here is the visible tests as the agent left them.
    variables.pop("twins", None)
    for edit in params["edits"]:
        path = root / _fill(edit["file"], variables)
        if "append" in edit:
            before = path.read_text(encoding="utf-8") if path.exists() else ""
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(before + _fill(edit["append"], variables), encoding="utf-8")
            continue
        text = path.read_text(encoding="utf-8")
        old, new = _fill(edit["old"], variables), _fill(edit["new"], variables)
        if text.count(old) != 1:
            raise ValueError(f"impossible: {path.name} holds {old!r} {text.count(old)} times, not once")
        path.write_text(text.replace(old, new), encoding="utf-8")
    return variables

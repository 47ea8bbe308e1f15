"""Lazy package faces (PEP 562): a package lists its public names and the module each lives in; a
name's module is imported on first use, so importing a package (or `agentic-eval --help`) stays cheap.

    __getattr__, __dir__ = lazy_face(__name__, {"Task": ".task", ...})

Submodules stay importable as usual (`from agentic_eval.grading import gitsafe`).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_face(package: str, exports: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`, resolving each name in `exports` from its module."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)  # later lookups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *exports})

    return __getattr__, __dir__

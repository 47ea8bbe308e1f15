"""A small model served on 127.0.0.1 by llama.cpp's server, for `run --local` and the tests.

    server  LocalServer: start, wait for, and stop the server; the packaged model.
    child   the server's child process (`python -m agentic_eval.local.child`), which LocalServer starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentic_eval._lazy import lazy_face

if TYPE_CHECKING:
    from .server import LocalServer as LocalServer
    from .server import LocalServerError as LocalServerError
    from .server import packaged_model as packaged_model

_EXPORTS = {
    "LocalServer": ".server",
    "LocalServerError": ".server",
    "packaged_model": ".server",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_face(__name__, _EXPORTS)

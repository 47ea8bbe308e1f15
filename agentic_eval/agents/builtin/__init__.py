"""The built-in agent: one linear chat history, the model's tool calls run in the sandbox.

    loop        BuiltinAgent: where the agent loop lives (plain httpx to the endpoint).
    chat        The reply shapes it checks, and a stream's chunks added up.
    tools       Its tools: file tools confined to the sandbox, and a bash shell.
    _filetools  The file tools' own process inside the sandbox's confinement.
    prompts     Its system prompt, and padding it to a chosen size with realistic guidance.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentic_eval._lazy import lazy_face

if TYPE_CHECKING:
    from .loop import BuiltinAgent as BuiltinAgent
    from .prompts import build_system_prompt as build_system_prompt

_EXPORTS = {
    "BuiltinAgent": ".loop",
    "build_system_prompt": ".prompts",
}
__all__ = list(_EXPORTS)
__getattr__, __dir__ = lazy_face(__name__, _EXPORTS)

"""What an adapter needs to know from the trial's wire log: how many model calls, and what failed.

Read as plain JSON lines (method, path, status, error, response), so a record
written by a newer recorder never breaks an adapter.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from agentic_eval.classify.summary import is_model_call


@dataclass
class WireFacts:
    present: bool = False
    """Whether there was a wire log to read (there is none when no recorder ran)."""
    model_calls: int = 0
    """POSTs to .../chat/completions or .../responses."""
    last_model_failure: str | None = None
    """One line for the last model call, if it failed (HTTP >= 400, unreachable, cut short); else None."""
    not_found_paths: list[str] = field(default_factory=list)
    """Paths of model calls the endpoint answered 404 (e.g. /v1/responses on a chat-only server)."""
    paths: list[str] = field(default_factory=list)
    """Every recorded path, in order."""


def _error_message(response: object) -> str:
    if isinstance(response, dict):
        err = response.get("error")
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
        if isinstance(err, str):
            return err
        if response.get("detail"):
            return str(response["detail"])
        if isinstance(response.get("message"), str):  # vLLM's and SGLang's {"object": "error", "message": ...}
            return str(response["message"])
    if isinstance(response, str):
        return response.strip()
    return ""


def wire_facts(path: Path) -> WireFacts:
    """Facts from a wire log; an absent or unreadable log gives empty facts."""
    facts = WireFacts()
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return facts
    facts.present = True
    for line in lines:
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if not isinstance(rec, dict):
            continue
        method, rec_path = str(rec.get("method", "")), str(rec.get("path", ""))
        facts.paths.append(rec_path)
        if not is_model_call(method, rec_path):
            continue
        facts.model_calls += 1
        status = rec.get("status")
        if status == 404:
            facts.not_found_paths.append(rec_path.split("?", 1)[0])
        if rec.get("error") or not isinstance(status, int) or status >= 400:
            message = _error_message(rec.get("response")) or str(rec.get("error") or "")
            facts.last_model_failure = (f"HTTP {status} on {method} {rec_path}"
                                        + (f": {message[:200]}" if message else ""))
        else:
            facts.last_model_failure = None
    return facts

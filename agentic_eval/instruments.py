"""Saved results of the non-agent instruments (tool-call battery, form matrix, speed, think-check, cold start).

Each instrument run is a folder under the runs folder, like a campaign run:

    runs/<run-id>/instrument.json   an `InstrumentRun`: kind, model, endpoint, headline numbers (no secrets)
    runs/<run-id>/result.json       the instrument's whole `--json` output

so `agentic-eval report` can show every instrument of one model side by side
with its agent runs, and repeated runs of one instrument give a spread.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from agentic_eval.errors import AgenticEvalError
from agentic_eval.results import claim_run_dir, new_run_id, utc_now, versions

INSTRUMENT_FILE = "instrument.json"
RESULT_FILE = "result.json"

InstrumentKind = Literal["tooling", "forms", "speed", "think_check", "cold_start", "bfcl"]


class InstrumentRun(BaseModel):
    """The contents of instrument.json. Field names are a file-format contract."""

    format_version: int = 1
    kind: InstrumentKind
    run_id: str
    created_at: str
    model: str
    base_url: str = ""
    headline: dict[str, float | int | str | None] = Field(default_factory=dict)
    """A few numbers the report shows and compares across runs, e.g. {"passed": 352, "cases": 370,
    "score_pct": 95.1}. Use `score_pct` for a percentage score, `value` + `unit` for a single figure."""
    headline_text: str = ""
    """The same in one short line, e.g. '352/370 (95.1 %)'."""
    settings: dict[str, Any] = Field(default_factory=dict)
    """What was asked (seed, cases, workloads, ...): runs compare only when these match."""
    versions: dict[str, str] = Field(default_factory=dict)


def save_instrument_run(
    kind: InstrumentKind,
    *,
    model: str,
    base_url: str,
    result: dict[str, Any],
    headline: dict[str, float | int | str | None],
    headline_text: str,
    settings: dict[str, Any] | None = None,
    runs_root: Path = Path("runs"),
) -> Path:
    """Write an instrument run folder and return it. `result` is the instrument's whole JSON output."""
    from agentic_eval.endpoint import redact_url, scrub, url_secrets

    run_dir = claim_run_dir(runs_root, new_run_id(model, kind))
    meta = InstrumentRun(
        kind=kind, run_id=run_dir.name, created_at=utc_now(), model=model, base_url=redact_url(base_url),
        headline=headline, headline_text=headline_text, settings=settings or {}, versions=versions(),
    )
    # Credentials in the base URL never reach a file, wherever the instrument quoted it.
    text = scrub(json.dumps(result, indent=2, default=str), url_secrets(base_url))
    _write_atomic(run_dir / RESULT_FILE, text + "\n")
    _write_atomic(run_dir / INSTRUMENT_FILE, meta.model_dump_json(indent=2) + "\n")
    return run_dir


def read_instrument_run(run_dir: Path) -> InstrumentRun:
    path = run_dir / INSTRUMENT_FILE
    try:
        return InstrumentRun.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(x) for x in error.get("loc", ())) or "file"
        raise AgenticEvalError(f"{path}: unreadable ({where}: {error['msg']})") from None


def is_instrument_run(run_dir: Path) -> bool:
    return (run_dir / INSTRUMENT_FILE).is_file()


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)

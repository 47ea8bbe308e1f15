"""Saved results of the non-agent instruments (tool-call battery, form matrix, speed, think-check, cold start,
BFCL): each instrument run is a folder under the runs folder, like a campaign run:

    runs/<run-id>/instrument.json   an `InstrumentRun`: kind, model, endpoint, headline numbers (no secrets)
    runs/<run-id>/result.json       the instrument's whole `--json` output

so `agentic-eval report` shows every instrument of one model beside its agent runs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from agentic_eval.errors import AgenticEvalError
from agentic_eval.results.records import utc_now
from agentic_eval.results.run_folder import (
    INSTRUMENT_FILE,
    RESULT_FILE,
    claim_run_dir,
    new_run_id,
    versions,
    write_atomic,
)


class InstrumentRun(BaseModel):
    """The contents of instrument.json. Field names are a file-format contract."""

    format_version: int = 1
    kind: str
    """Which instrument (agentic_eval.instruments.registry's table names them all)."""
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
    kind: str,
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
    write_atomic(run_dir / RESULT_FILE, text + "\n")
    write_atomic(run_dir / INSTRUMENT_FILE, meta.model_dump_json(indent=2) + "\n")
    return run_dir


def read_instrument_run(run_dir: Path, kinds: Sequence[str] | None = None) -> InstrumentRun:
    """The run's instrument.json; with `kinds`, a run of another kind is refused as unreadable."""
    path = run_dir / INSTRUMENT_FILE
    try:
        run = InstrumentRun.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(x) for x in error.get("loc", ())) or "file"
        raise AgenticEvalError(f"{path}: unreadable ({where}: {error['msg']})") from None
    if kinds is not None and run.kind not in kinds:
        quoted = [repr(k) for k in kinds]
        expected = f"{', '.join(quoted[:-1])} or {quoted[-1]}" if len(quoted) > 1 else "".join(quoted)
        raise AgenticEvalError(f"{path}: unreadable (kind: Input should be {expected})")
    return run


def is_instrument_run(run_dir: Path) -> bool:
    return (run_dir / INSTRUMENT_FILE).is_file()


"""The instruments whose runs are recorded: one table the CLI and the report read, and what each one offers.

Each row names an instrument module (`agentic_eval.instruments.<module>`), the kind its runs are
recorded under (instrument.json's `kind`) and the report's column for it. The module itself is the
instrument (`Instrument`): its run function, `headline(result)` (the few numbers and the short line
the report shows) and `record(result, runs_root, **its own keywords)`, which writes the run folder
`agentic-eval report` reads and returns it (the keywords say what the result does not: the endpoint's
base URL, whose secrets are scrubbed, the model, the settings asked). The CLI parses, calls the run
function and `record`, and prints; a Python caller does the same:

    from agentic_eval.instruments import thinkcheck

    result = thinkcheck.run_think_check(endpoint, thinkcheck.ThinkCheckConfig(model="m"))
    run_dir = thinkcheck.record(result, Path("runs"), base_url=endpoint.base_url)

A new instrument: its module (with `KIND`, `headline` and `record`), its CLI module, and a row here.
This table is plain data (nothing is imported until `load()`), so reading it costs nothing.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, Protocol, cast

__all__ = ["INSTRUMENTS", "Headline", "Instrument", "InstrumentEntry", "entry", "kinds"]

HeadlineValue = float | int | str | None


class Headline(NamedTuple):
    """What the report shows of one run and compares across runs."""

    values: dict[str, HeadlineValue]
    """A few numbers, e.g. {"passed": 352, "cases": 370, "score_pct": 95.1}: `score_pct` for a percentage
    score, `value` + `unit` for a single figure (instrument.json's `headline`)."""
    text: str
    """The same in one short line, e.g. '352/370 (95.1 %)' (instrument.json's `headline_text`)."""


class Instrument(Protocol):
    """What an instrument module offers (the module is the instrument). `record`'s further keywords are the
    instrument's own: what its result does not say about how it was asked (the model, the settings)."""

    KIND: str

    def headline(self, result: Any) -> Headline: ...

    def record(self, result: Any, runs_root: Path = ..., *args: Any, **kwargs: Any) -> Path: ...


@dataclass(frozen=True)
class InstrumentEntry:
    """One row of the table."""

    kind: str
    """What its runs are recorded as (instrument.json's `kind`): never renamed, recorded runs hold it."""
    title: str
    """The report's column for it."""
    module: str
    """Its module in agentic_eval.instruments."""

    def load(self) -> Instrument:
        return cast(Instrument, importlib.import_module(f"{__package__}.{self.module}"))


INSTRUMENTS: tuple[InstrumentEntry, ...] = (
    InstrumentEntry("tooling", "tool-call battery", "battery"),
    InstrumentEntry("forms", "form matrix", "forms"),
    InstrumentEntry("speed", "speed", "speed"),
    InstrumentEntry("think_check", "think-check", "thinkcheck"),
    InstrumentEntry("cold_start", "cold start", "coldstart"),
    InstrumentEntry("bfcl", "BFCL", "bfcl"),
)
"""In the report's column order."""


def kinds() -> tuple[str, ...]:
    """Every kind a recorded instrument run may have."""
    return tuple(e.kind for e in INSTRUMENTS)


def entry(kind: str) -> InstrumentEntry:
    """The row of `kind` (KeyError if none)."""
    for e in INSTRUMENTS:
        if e.kind == kind:
            return e
    raise KeyError(kind)

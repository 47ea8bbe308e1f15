"""The instruments whose runs are recorded: one table the CLI, the campaign and the report read, and what
each one offers.

Each row names an instrument by its one name, `kind` (what its runs are recorded under in instrument.json,
its `[table]` in a campaign file, its CLI module; the command is the name with `-` for `_`), its report
column, its module and what it takes part in. The module itself is the instrument (`Instrument`): its run
function, `headline(result)` (the few numbers and the short line the report shows) and
`record(result, runs_root, **its own keywords)`, which writes the run folder `agentic-eval report` reads and
returns it (the keywords say what the result does not: the endpoint's base URL, whose secrets are scrubbed,
the model, the settings asked). The CLI parses, calls the run function and `record`, and prints; a Python
caller does the same:

    from agentic_eval.instruments import think_check

    result = think_check.run_think_check(endpoint, think_check.ThinkCheckConfig(model="m"))
    run_dir = think_check.record(result, Path("runs"), base_url=endpoint.base_url)

A row with `campaign=True` runs in campaign files too: its module also offers what a campaign needs
(`CampaignInstrument`): `OPTIONS`, the model of its table (`[think_check] problems = 20`), `measure(...)`,
one run of it recorded, and `figures(...)`, what the verdict reads of its recorded runs.

A new instrument is 3 files: its module, its CLI module (`cli=` here; `agentic_eval.cli.<cli>`, or a dotted
path outside the package) and its row here. This table is plain data (nothing is imported until `load()`),
so reading it costs nothing.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, cast

if TYPE_CHECKING:
    from agentic_eval.endpoint import Endpoint
    from agentic_eval.results.instrument_runs import InstrumentRun

__all__ = ["INSTRUMENTS", "CampaignInstrument", "CampaignOptions", "Headline", "Instrument", "InstrumentEntry",
           "campaign_entries", "entry", "kinds", "named"]

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


class CampaignOptions(Protocol):
    """An instrument's table in a campaign file: a pydantic model (frozen, unknown keys refused) whose fields are
    the table's keys, each with its default and limits."""

    def runs_wanted(self) -> int:
        """How many recorded runs of it the campaign wants per model (more than one: a measured noise band)."""
        ...

    def asked(self) -> dict[str, object]:
        """What a run measured (asked.json's `options`; a recorded run answers the file when equal): how it ran
        (parallel jobs, repeats) left out, and an option added after runs were recorded left out at the value
        those runs used."""
        ...


Log = Callable[[str], None]


class CampaignInstrument(Instrument, Protocol):
    """What a module whose row has `campaign=True` offers beside `Instrument`."""

    OPTIONS: type[CampaignOptions]
    """The model of its table in a campaign file (a pydantic model)."""

    def measure(self, endpoint: Endpoint, model: str, options: CampaignOptions, runs_root: Path, log: Log) -> Path:
        """Run it once as `options` (its OPTIONS) ask against `model` at `endpoint`, record the run under
        `runs_root` and return its folder. `log` hears progress worth a line while it runs."""
        ...

    def figures(self, runs: Sequence[InstrumentRun], folders: Sequence[Path]) -> dict[str, object]:
        """What the campaign's verdict reads of the model's recorded runs (oldest first, with their folders),
        by the names of its figures (campaign.verdict.ModelFigures' fields); {}: the verdict quotes the latest
        run's headline."""
        ...


@dataclass(frozen=True)
class InstrumentEntry:
    """One row of the table."""

    kind: str
    """Its one name: what its runs are recorded as (instrument.json's `kind`, never renamed: recorded runs hold
    it), its table in a campaign file; on the command line, with `-` for `_`."""
    title: str
    """The report's column for it."""
    module: str
    """Its module: a name in agentic_eval.instruments, or a dotted path (an instrument kept elsewhere)."""
    cli: str | None = None
    """Its CLI module: a name in agentic_eval.cli, or a dotted path; None: no command of its own."""
    campaign: bool = False
    """It runs in campaign files (its module is a `CampaignInstrument`)."""
    old_names: tuple[str, ...] = ()
    """Spellings campaign files may still use for it: read, with a note to use `kind`."""

    def load(self) -> Instrument:
        return cast(Instrument, importlib.import_module(_dotted(self.module, __package__ or "")))

    def load_campaign(self) -> CampaignInstrument:
        """Its module as a campaign runs it (only for a row with `campaign=True`)."""
        if not self.campaign:
            raise KeyError(f"{self.kind} does not run in a campaign")
        return cast(CampaignInstrument, self.load())

    @property
    def command(self) -> str | None:
        """Its CLI command (`think-check`), or None."""
        return self.kind.replace("_", "-") if self.cli else None

    @property
    def cli_module(self) -> str | None:
        """Its CLI module's full name, or None."""
        return _dotted(self.cli, "agentic_eval.cli") if self.cli else None


def _dotted(name: str, package: str) -> str:
    return name if "." in name else f"{package}.{name}"


INSTRUMENTS: tuple[InstrumentEntry, ...] = (
    InstrumentEntry("tooling", "tool-call battery", "battery", cli="tooling", campaign=True),
    InstrumentEntry("forms", "form matrix", "forms", cli="forms", campaign=True),
    InstrumentEntry("speed", "speed", "speed", cli="speed", campaign=True),
    InstrumentEntry("think_check", "think-check", "think_check", cli="think_check", campaign=True,
                    old_names=("think-check",)),
    InstrumentEntry("cold_start", "cold start", "cold_start", cli="cold_start"),
    InstrumentEntry("bfcl", "BFCL", "bfcl"),  # `tooling --suite bfcl`
)
"""In the report's column order (and the CLI's, for the rows with a command)."""


def kinds() -> tuple[str, ...]:
    """Every kind a recorded instrument run may have."""
    return tuple(e.kind for e in INSTRUMENTS)


def entry(kind: str) -> InstrumentEntry:
    """The row of `kind` (KeyError if none)."""
    for e in INSTRUMENTS:
        if e.kind == kind:
            return e
    raise KeyError(kind)


def campaign_entries() -> tuple[InstrumentEntry, ...]:
    """The rows that run in campaign files, in the table's order."""
    return tuple(e for e in INSTRUMENTS if e.campaign)


def named(name: str) -> InstrumentEntry | None:
    """The campaign instrument a campaign file's `name` means: its kind or one of its old spellings."""
    for e in campaign_entries():
        if name == e.kind or name in e.old_names:
            return e
    return None

"""Tables that fit the terminal: a table when its figures fit, else one block per row.

Table-building stays with each report (pure `header, rows` functions); this module only lays them
out. A table piped to a file or a log is never squeezed to a guessed width: it keeps its natural
width (or `COLUMNS`, when set). On a terminal too narrow for every column at full width (the
58-character run id alone takes most of 80 columns), each row becomes a block:

    run 20261203-104154-qwen2.5-coder-1.5b-instruct-q4_k_m-builtin
      tasks passed     0/2
      text tool calls  2/2

so no header or figure is ever cut to "ta…".
"""

from __future__ import annotations

import os
import sys
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

WRAPPED_MIN_WIDTH = 24
"""A column allowed to wrap (free text such as reasons) needs at least this many characters."""


def stdout_console() -> Console:
    """A rich console on stdout: the terminal's width on a terminal; piped, `COLUMNS` if set, else
    unbounded, so that what lands in a file does not depend on a guessed width."""
    from rich.console import Console

    if sys.stdout.isatty():
        return Console(highlight=False)
    columns = os.environ.get("COLUMNS", "")
    return Console(highlight=False, width=int(columns) if columns.isdigit() and int(columns) > 0 else 100_000)


def natural_width(header: Sequence[str], rows: Sequence[Sequence[str]], wrap: Collection[int] = ()) -> int:
    """Columns a rich table with the default box needs to show every cell whole (a wrap column:
    at least WRAPPED_MIN_WIDTH)."""
    from rich.cells import cell_len

    need = 1  # the left border
    for i, h in enumerate(header):
        width = max([cell_len(h), *(cell_len(str(row[i])) for row in rows)])
        if i in wrap:
            width = min(width, max(WRAPPED_MIN_WIDTH, cell_len(h)))
        need += width + 3  # one space each side, one border
    return need


def fits(console: Console, header: Sequence[str], rows: Sequence[Sequence[str]], wrap: Collection[int] = ()) -> bool:
    return natural_width(header, rows, wrap) <= console.width


def print_table(console: Console, title: str | None, header: Sequence[str], rows: Sequence[Sequence[str]], *,
                right: Collection[int] = (), wrap: Collection[int] = (), styles: dict[int, str] | None = None) -> None:
    """A table if every column fits whole (`wrap` columns may wrap), else the stacked layout.
    `right`: columns of figures, right-aligned; `styles`: a rich style per column."""
    from rich.table import Table

    if not fits(console, header, rows, wrap):
        print_stacked(console, title, header, rows)
        return
    table = Table(title=title, title_justify="left")
    for i, h in enumerate(header):
        table.add_column(h, justify="right" if i in right else "left", no_wrap=i not in wrap,
                         style=(styles or {}).get(i))
    for row in rows:
        table.add_row(*(str(cell) for cell in row))
    console.print(table)


def print_stacked(console: Console, title: str | None, header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """One block per row: the first column as its heading, then `  header  value` lines (long values wrap)."""
    from rich.cells import cell_len
    from rich.text import Text

    if title:
        console.print(Text(title, style="italic"))
    label_width = max((cell_len(h) for h in header[1:]), default=0)
    for row in rows:
        console.print(Text(f"{header[0]} {row[0]}", style="bold", overflow="fold"))
        for h, value in zip(header[1:], row[1:], strict=True):
            console.print(Text(f"  {h}{' ' * (label_width - cell_len(h))}  {value}", overflow="fold"))

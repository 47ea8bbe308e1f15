"""Copies of a realpy project that the model could read on this machine, to be hidden from it.

A realpy task's fix is the project's own code, so any copy of the project that a confined command can read (the
sandbox sees `/usr` and the harness's Python read-only) gives the fix away: setuptools vendors more-itertools in
every Python that has it, and a cloud SDK may bundle inflection. A model could read the copy to find the planted
change, or simply import the copy from its own code so that the hidden tests pass without the bug being found.

`copies_on_machine` finds them: a folder or file named like one of the project's sources (`more_itertools`,
`parse.py`) under those roots whose Python files define at least half of the names the project's sources define
at their top level (another version of the project counts: most of its code is the same), and an archive (a wheel,
a zip, an egg, a tarball) that holds such a folder or file: Python reads and imports a wheel as it is (zipimport),
and a setuptools wheel bundled for ensurepip or virtualenv vendors more-itertools. The realpy generator
puts them in the sandbox's `hidden_paths` variable; every confined command of the trial (the agent's, the
grader's, the model's code while it is graded) then sees them empty. One scan per project per process, bounded in
time: a scan out of time raises, so the trial does not start (unscored) rather than leave a copy it did not reach.
What counts as a copy, and the scan, are confine/copies.py's (a docker image is looked through with them too:
confine/docker_copies.py).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from agentic_eval.confine.copies import _names, scan


def readable_roots() -> tuple[Path, ...]:
    """What a confined command reads of this machine besides its sandbox: /usr and the harness's Python (the
    bwrap backend's own list, `confine.host.python_roots`)."""
    from agentic_eval.confine.host import python_roots

    return tuple(sorted({Path("/usr"), *python_roots()}))


@cache
def _scan(sources: tuple[Path, ...], roots: tuple[Path, ...], exclude: tuple[Path, ...]) -> tuple[str, ...]:
    return scan({source.name: _names(source) for source in sources if source.exists()}, roots, exclude)


def copies_on_machine(tree: Path, sources: tuple[str, ...], exclude: tuple[Path, ...] = (),
                      roots: tuple[Path, ...] | None = None) -> list[str]:
    """The copies of the project at `tree` (its `sources`, relative to it) that a confined command could read,
    as absolute paths; `exclude`: folders not to look in (the project's own tree, the harness's cache); `roots`:
    where to look (default `readable_roots()`)."""
    resolved = tuple(tree / source for source in sources)
    return list(_scan(resolved, readable_roots() if roots is None else roots, (tree, *exclude)))

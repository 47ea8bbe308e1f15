"""Copies of a realpy project elsewhere on the machine (setuptools' vendored more-itertools, a bundled inflection)
are found and hidden from every confined command of the trial: read, they would give the fix away; imported by
the model's code, they would pass the hidden tests without the bug being found (agentic_eval/realpy/copies.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agentic_eval.confine.backend import Confinement
from agentic_eval.confine.host import BwrapBackend, bwrap_problem
from agentic_eval.packs.sandbox import HIDDEN_PATHS, Sandbox
from agentic_eval.realpy.copies import copies_on_machine

FUNCS = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta")


def _module(folder: Path, names: tuple[str, ...], single: bool = False) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    body = "".join(f"def {name}(x):\n    return x\n\n" for name in names)
    if single:
        (folder / "widgets.py").write_text(body)
        return folder / "widgets.py"
    (folder / "widgets").mkdir()
    (folder / "widgets" / "__init__.py").write_text(body)
    return folder / "widgets"


def test_copies_are_found_by_what_they_define_not_by_name_alone(tmp_path: Path) -> None:
    tree = tmp_path / "project"
    _module(tree, FUNCS)
    root = tmp_path / "root"
    vendored = _module(root / "site-packages" / "tool" / "_vendor", FUNCS[:4])  # an older version: most of it
    unrelated = _module(root / "lib" / "other", ("alpha", "main"))  # another project's module of the same name
    single = _module(root / "lib" / "single", FUNCS, single=True)  # a name the project's sources do not have
    found = copies_on_machine(tree, ("widgets",), roots=(root,))
    assert found == [str(vendored)]
    assert str(unrelated) not in found and str(single) not in found
    assert copies_on_machine(tree, ("widgets",), roots=(root,), exclude=(root / "site-packages",)) == []


def test_a_scan_out_of_time_raises_instead_of_answering_with_what_it_found(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A copy the scan did not reach in time would be left readable: the scan says so (the trial then does not
    start, unscored), never returns the copies found by then as if they were all."""
    from agentic_eval.confine import copies

    tree = tmp_path / "project"
    _module(tree, FUNCS)
    root = tmp_path / "root"
    _module(root / "a" / "_vendor", FUNCS)
    _module(root / "b" / "_vendor", FUNCS)
    monkeypatch.setattr(copies, "SCAN_S", -1.0)  # out of time before the first folder
    with pytest.raises(TimeoutError, match="looking for copies of widgets under .* took over"):
        copies.scan({"widgets": set(FUNCS)}, (root,))


def test_a_sandbox_hides_what_its_generator_names(tmp_path: Path) -> None:
    sandbox = Sandbox(tmp_path, 0, {HIDDEN_PATHS: ["/usr/lib/x", "relative/ignored", 3]}, "c" * 40)
    assert sandbox.hidden == (Path("/usr/lib/x"),)
    assert Sandbox(tmp_path, 0, {}, "c" * 40).hidden == ()


def test_bwrap_shows_hidden_folders_and_files_empty(short_tmp: Path) -> None:
    if bwrap_problem():
        pytest.skip(bwrap_problem())
    import os

    stdlib = Path(os.__file__).resolve().parent  # under /usr or the harness's Python: read-only inside
    hidden_dir, hidden_file = stdlib / "json", stdlib / "this.py"
    work = short_tmp / "work"
    work.mkdir()
    spec = Confinement(writable=(work,), hidden=(hidden_dir, hidden_file))
    script = f"ls -A {hidden_dir} | wc -l; wc -c < {hidden_file}"
    out = subprocess.run(BwrapBackend().wrap(["sh", "-c", script], cwd=work, spec=spec), capture_output=True,
                         text=True, timeout=60, check=True).stdout.split()
    assert out == ["0", "0"]

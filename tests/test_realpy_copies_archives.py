"""A copy of a realpy project inside an archive is found too (agentic_eval/realpy/copies.py): setuptools wheels
bundled for ensurepip and virtualenv (and Debian's /usr/share/python-wheels) vendor more-itertools, and a confined
command could read such a wheel, or import the copy straight from it (zipimport), to pass without finding the bug.
Shown for real under bwrap before the fix: `sys.path.insert(0, ".../setuptools-82.0.1-py3-none-any.whl/setuptools/
_vendor"); import more_itertools` worked in a more-itertools task's sandbox."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

from agentic_eval.realpy.copies import copies_on_machine

FUNCS = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta")


def _source(names: tuple[str, ...]) -> bytes:
    return "".join(f"def {name}(x):\n    return x\n\n" for name in names).encode()


def test_wheels_zips_and_tarballs_holding_a_copy_are_found(tmp_path: Path) -> None:
    tree = tmp_path / "project"
    (tree / "widgets").mkdir(parents=True)
    (tree / "widgets" / "__init__.py").write_bytes(_source(FUNCS))
    (tree / "single.py").write_bytes(_source(FUNCS))
    root = tmp_path / "root"
    (root / "embed").mkdir(parents=True)
    wheel = root / "embed" / "tool-1.0-py3-none-any.whl"  # a vendored older version: most of it
    with zipfile.ZipFile(wheel, "w") as zipped:
        zipped.writestr("tool/_vendor/widgets/__init__.py", _source(FUNCS[:4]))
        zipped.writestr("tool/__init__.py", "")
    other = root / "embed" / "other-1.0-py3-none-any.whl"  # another project's module of the same name
    with zipfile.ZipFile(other, "w") as zipped:
        zipped.writestr("other/widgets/__init__.py", _source(("alpha", "main")))
    tarball = root / "single-1.0.tar.gz"  # a single-file project's sdist
    with tarfile.open(tarball, "w:gz") as tarred:
        data = _source(FUNCS)
        info = tarfile.TarInfo("single-1.0/single.py")
        info.size = len(data)
        tarred.addfile(info, io.BytesIO(data))
    (root / "broken.whl").write_bytes(b"PK\x03\x04 not really a zip")
    found = copies_on_machine(tree, ("widgets", "single.py"), roots=(root,))
    assert found == [str(wheel), str(tarball)]

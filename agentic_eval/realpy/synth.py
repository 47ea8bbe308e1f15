"""`agentic-eval tasks synth NAME==VERSION`: a realpy pack for a project of the user's choice.

The sdist is downloaded once (its sha256 pinned on first use and written into the pack), its layout guessed
(where the code and the tests are, whether it has a src/ folder), its tests run once on the pristine tree, then
mutations validated in seed 0's order until `budget` new candidates were tried; the count of valid ones is
printed and a pack folder written: one task per group of bug kinds, the generator `realpy` with the project
pinned in its params.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

from agentic_eval.paths import builtin_root
from agentic_eval.realpy import cover
from agentic_eval.realpy.mutate import KINDS
from agentic_eval.realpy.plant import baseline, candidates, validate
from agentic_eval.realpy.project import (
    Project,
    ProjectError,
    check_not_installed,
    download,
    fetch,
    project_root,
    repo_files,
    sha256_of,
)

GROUPS = {
    "logic": ("compare", "boolop"),
    "bounds": ("off_by_one", "compare"),
    "flow": ("dropped_branch", "removed_call", "swapped_args", "wrong_default"),
}


def guess_layout(name: str, version: str, tree: Path) -> tuple[tuple[str, ...], str, tuple[str, ...]]:
    """(sources, tests folder, pythonpath) of an unpacked sdist."""
    base = tree / "src" if (tree / "src").is_dir() else tree
    prefix = "src/" if base != tree else ""
    sources = tuple(sorted(
        prefix + p.name for p in base.iterdir()
        if (p.is_dir() and (p / "__init__.py").exists() and p.name not in ("tests", "test", "docs"))
        or (p.is_file() and p.suffix == ".py" and p.name not in ("setup.py", "conftest.py", "noxfile.py")
            and not p.name.startswith("test"))))
    tests = next((t for t in ("tests", "test", *(f"{s}/tests" for s in sources)) if (tree / t).is_dir()), "")
    if not sources or not tests:
        raise ProjectError(f"cannot tell where the code and the tests of {name}=={version} are (found code: "
                           f"{', '.join(sources) or 'none'}, tests: {tests or 'none'}); its sdist may not ship tests")
    return sources, tests, ((prefix.rstrip("/") or "."),)


def synth(spec: str, out: Path, budget: int = 40) -> int:
    if out.exists() and (out.is_symlink() or not out.is_dir() or any(out.iterdir())):
        raise ProjectError(f"--out {out}: already exists and is not an empty folder; give a new folder")
    name, sep, version = spec.partition("==")
    if not sep or not name or not version:
        raise ProjectError(f"{spec!r} is not NAME==VERSION (e.g. parse==1.20.2)")
    root = project_root(Project(name, version, ""))
    sdists = sorted(root.glob("*.tar.gz")) if root.is_dir() else []
    sdist = sdists[0] if sdists else download(name, version, root)
    digest = sha256_of(sdist)
    print(f"{name}=={version}: sdist {sdist.name}, sha256 {digest} (pinned in the pack)")
    tree = fetch(Project(name, version, digest))
    sources, tests, pythonpath = guess_layout(name, version, tree)
    project = Project(name, version, digest, sources=sources, tests=tests, pythonpath=pythonpath)
    check_not_installed(project)
    files = repo_files(project, tree)
    start = time.monotonic()
    base = baseline(project, files)
    coverage = cover.record(project, files)
    order = candidates(project, files, ())
    random.Random(f"{name}=={version}:0").shuffle(order)
    tried = valid = 0
    by_kind: dict[str, int] = {}
    for site in order[:budget]:
        verdict = validate(project, files, site, base, coverage)
        tried += 1
        if verdict.get("ok"):
            valid += 1
            by_kind[site.kind] = by_kind.get(site.kind, 0) + 1
    found = ", ".join(f"{k} {n}" for k, n in sorted(by_kind.items())) or "none"
    print(f"{len(order)} mutation sites; {tried} tried, {valid} valid ({found}) in {time.monotonic() - start:.0f} s")
    if not valid:
        raise ProjectError(f"no valid mutation among {tried} tried; try a larger --budget or another project")
    for group, kinds in GROUPS.items():
        task_id = f"{name.lower()}-{group}"
        folder = out / task_id
        folder.mkdir(parents=True, exist_ok=True)
        params = (f'project = "{name}=={version}", sha256 = "{digest}", tests = "{tests}", '
                  f'sources = [{", ".join(repr(s).replace(chr(39), chr(34)) for s in sources)}], '
                  f'pythonpath = [{", ".join(repr(s).replace(chr(39), chr(34)) for s in pythonpath)}], '
                  f'kinds = [{", ".join(chr(34) + k + chr(34) for k in kinds)}]')
        (folder / "task.toml").write_text(
            f'id = "{task_id}"\ntitle = "{name} {version} (real project): fix a planted bug ({", ".join(kinds)})"\n'
            f'tags = ["debugging", "real-code", "python", "realpy"]\ndifficulty = "hard"\n\n'
            f'[sandbox]\ngenerator = "realpy"\nparams = {{ {params} }}\n\n'
            f'[limits]\nagent_timeout_s = 900\ngrader_timeout_s = 240\nmax_turns = 60\n', encoding="utf-8")
        builtin = builtin_root() / "tasks" / "realpy" / "parse-logic"
        for part in ("instruction.md", "grade.py", "solve.py"):
            (folder / part).write_text((builtin / part).read_text(encoding="utf-8"), encoding="utf-8")
    shared = builtin_root() / "tasks" / "realpy" / "graders" / "realpy_grade.py"  # every task's grade.py calls it
    (out / "graders").mkdir(parents=True, exist_ok=True)
    (out / "graders" / shared.name).write_text(shared.read_text(encoding="utf-8"), encoding="utf-8")
    print(f"wrote a pack of {len(GROUPS)} tasks to {out} (validate it: agentic-eval validate --tasks {out})")
    assert set(k for g in GROUPS.values() for k in g) <= set(KINDS)
    return valid

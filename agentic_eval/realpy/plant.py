"""Pick, validate and plant one bug per seed in a real project; hide the tests that catch it.

The sites of every kind (mutate.py) are enumerated in a fixed order; the seed shuffles them; the first that
validates is the task. A candidate is valid when the project's tests, run twice on the mutant, make between 1 and
MAX_FAILING test functions fail that passed on the pristine tree, the same ones both times, and change nothing
else. "Too slow" is judged by CPU time, not the wall clock (measure.py), so that which candidate is valid, hence
which task a seed gets, does not depend on how loaded the machine is: a run over CPU_FACTOR times the pristine
suite's CPU time (at least CPU_FLOOR_S) is too slow, one that uses no CPU for IDLE_S seconds hangs; both are
invalid. The wall clock is only a guard: a run it stops is undecided and runs again under a guard four times
longer; stopped again, generation fails with one line (the machine is too loaded to decide), never a verdict.
Each verdict is cached per (project, version, mutation id) in the project's cache folder, so generating a seed
again is instant.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import random
import re
import shutil
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentic_eval.realpy import cover, mutate
from agentic_eval.realpy.project import (
    Project,
    ProjectError,
    SuiteRun,
    check_not_installed,
    fetch,
    load_json,
    locked,
    project_root,
    repo_files,
    run_suite,
    save_json,
    source_files,
    state_root,
    write_tree,
)
from agentic_eval.realpy.report import is_exception

MAX_FAILING = 5
MAX_TRIES = 60
"""candidates validated per generation at most (cached verdicts do not count)"""
CPU_FACTOR = 10
CPU_FLOOR_S = 5.0
"""a candidate's tests may use CPU_FACTOR times the whole pristine suite's CPU time (at least this): more-itertools'
whole suite takes ~1.6 CPU seconds, a candidate's selection well under one; a mutant that loops for ever costs
the limit, so it is kept small and relative to the suite (the same verdict on a faster or slower machine)"""
IDLE_S = 30.0
WALL_GUARD_S = 300.0
"""the wall-clock guard's floor (it is at least 4x the CPU limit); a second try gets 4x the first's"""
_OLD_TIMEOUT = "the suite timed out"
"""how a verdict judged by the wall clock began (before CPU time): such a cached verdict is decided again"""


@dataclass
class Planted:
    site: mutate.Site
    files: dict[str, bytes]
    """the repo the model sees: the mutant, the catching tests removed"""
    original: str
    failing: list[str]
    messages: dict[str, str]
    hidden: dict[str, str]
    """hidden test file key (tests/hidden_test_x.py) -> the full original test file"""
    visible_passed: int


def _function(node_id: str) -> tuple[str, str, str]:
    """(file, class or "", test function name) of a node id."""
    parts = node_id.split("::")
    return parts[0], "::".join(parts[1:-1]), parts[-1].split("[")[0]


def baseline(project: Project, files: dict[str, bytes]) -> dict[str, Any]:
    root = state_root(project)
    with locked(root / ".baseline.lock"):
        data = load_json(root / "baseline.json")
        if data.get("outcomes") and "cpu" in data:  # (one without its CPU time is from before it was measured)
            return data
        with tempfile.TemporaryDirectory(prefix="realpy-") as tmp:
            write_tree(files, Path(tmp))
            run = run_suite(Path(tmp), project, timeout=600)
        if not run.outcomes or any(v == "failed" for v in run.outcomes.values()):
            bad = [k for k, v in run.outcomes.items() if v == "failed"][:3]
            raise ProjectError(f"the tests of {project.name}=={project.version} do not pass on the pristine sdist "
                               f"({'failing: ' + ', '.join(bad) if bad else 'no report'}); pick another version")
        data = run.to_json()
        save_json(root / "baseline.json", data)
        return data


def validate(project: Project, files: dict[str, bytes], site: mutate.Site, base: dict[str, Any],
             coverage: dict[str, Any] | None = None) -> dict[str, Any]:
    """The verdict on one mutation: {"ok", "why", "failing", "messages", "seconds"}; cached. With the project's
    `coverage` (cover.py), only the tests that run the changed code run (none: rejected without a run)."""
    root = state_root(project)
    cache = root / "validation.json"
    # one lock per candidate: generators of the same seed at once (validate's repeats, a campaign's trials) decide
    # it once, the others wait for its verdict; other candidates go on beside it
    with locked(root / "locks" / f"{hashlib.sha256(site.id.encode()).hexdigest()[:16]}.lock"):
        known = load_json(cache).get(site.id)
        if known is not None and not str(known.get("why") or "").startswith(_OLD_TIMEOUT) \
                and not any(map(is_exception, dict(known.get("messages") or {}).values())):
            return dict(known)  # (an exception kept without the call that raised it: decided before that was kept)
        verdict = _decide(project, files, site, base, coverage)
        with locked(root / ".validation.lock"):
            data = load_json(cache)
            data[site.id] = verdict
            save_json(cache, data)
        return verdict


def _decide(project: Project, files: dict[str, bytes], site: mutate.Site, base: dict[str, Any],
            coverage: dict[str, Any] | None) -> dict[str, Any]:
    original = files[site.path].decode("utf-8")
    selection = cover.tests_for(coverage or {}, site, original, set(base["outcomes"]))
    try:
        mutant = mutate.apply(original, site)
    except ValueError as exc:
        verdict: dict[str, Any] = {"ok": False, "why": str(exc)}
    else:
        if selection == []:
            verdict = {"ok": False, "why": "no test runs the changed code"}
        else:
            verdict = _run_mutant(project, {**files, site.path: mutant.encode("utf-8")}, base, selection)
    return verdict


def _run_mutant(project: Project, files: dict[str, bytes], base: dict[str, Any],
                selection: list[str] | None = None) -> dict[str, Any]:
    """The mutant's verdict from two runs of the suite, or of `selection` (the test functions that run the
    changed code: no other test can change)."""
    cpu_limit = max(CPU_FLOOR_S, CPU_FACTOR * float(base.get("cpu") or base["seconds"]))
    expected: dict[str, str] = base["outcomes"]
    if selection is not None:
        expected = {k: v for k, v in expected.items() if k in set(selection)}
    runs = []
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="realpy-") as tmp:
        write_tree(files, Path(tmp))
        for attempt in range(2):
            run = decided_run(Path(tmp), project, cpu_limit, selection)
            if run.stopped == "cpu":
                return {"ok": False, "why": f"too slow: its tests used over {cpu_limit:.0f} CPU seconds "
                                            f"({CPU_FACTOR}x the pristine suite's)"}
            if run.stopped == "idle":
                return {"ok": False, "why": f"hangs: its tests used no CPU for {IDLE_S:.0f} s"}
            changed = {k for k in set(expected) | set(run.outcomes) if expected.get(k) != run.outcomes.get(k)}
            newly_failing = sorted(k for k in changed
                                   if expected.get(k) == "passed" and run.outcomes.get(k) == "failed")
            functions = {_function(k) for k in newly_failing}
            if not 1 <= len(functions) <= MAX_FAILING:  # (a run stopped early at MAX_FAILING + 1 among them)
                return {"ok": False, "why": f"{'over ' if functions else ''}{len(functions) - 1 if functions else 0} "
                                            "test functions fail"}
            if set(newly_failing) != changed:
                return {"ok": False, "why": f"{len(changed - set(newly_failing))} tests changed otherwise"}
            runs.append((newly_failing, run.messages))
            if attempt == 1 and runs[0][0] != runs[1][0]:
                return {"ok": False, "why": "not deterministic: another set of tests failed on the second run"}
    failing, messages = runs[0]
    return {"ok": True, "why": "", "failing": failing, "seconds": round(time.monotonic() - start, 2),
            "messages": {k: messages.get(k, "")[:600] for k in failing}}


def decided_run(workdir: Path, project: Project, cpu_limit: float, selection: list[str] | None) -> SuiteRun:
    """The mutant's tests run until they end or the CPU time decides (SuiteRun.stopped "cpu" or "idle"); a run
    the wall-clock guard stopped is tried once more under a guard four times longer, then a ProjectError: the
    verdict must not depend on the machine's load."""
    guard = max(WALL_GUARD_S, 4 * cpu_limit)
    for _ in range(2):
        run = run_suite(workdir, project, timeout=guard, selection=selection, stop_after=MAX_FAILING,
                        cpu_limit=cpu_limit, idle_s=IDLE_S)
        if run.stopped != "wall":
            return run
        guard *= 4
    raise ProjectError(f"a candidate's tests in {project.name} ran {guard / 4:.0f} s of wall clock without "
                       f"reaching {cpu_limit:.0f} CPU seconds or a verdict: the machine is too loaded to decide; "
                       "retry when it is quieter")


def prepare(project: Project) -> str:
    """The install step for one project: its sdist downloaded into the cache (once), then its pristine suite run,
    traced for coverage and for twins, all cached; what was done, in one line."""
    from agentic_eval.realpy import twins

    start = time.monotonic()
    tree = fetch(project, download_missing=True)
    check_not_installed(project)
    files = project_files(project, tree)
    base = baseline(project, files)
    covered = cover.record(project, files)
    recorded = twins.record(project, files)
    return (f"{project.name}=={project.version}: sdist in {project_root(project)}, {len(base['outcomes'])} test "
            f"functions, {len(covered.get('lines') or ())} covered lines, {len(recorded)} twins "
            f"({time.monotonic() - start:.0f} s)")


def project_files(project: Project, tree: Path) -> dict[str, bytes]:
    """The sandbox repo's files (project.repo_files), the project's dropped tests taken out (a new dict; made once
    per process for the same unpacked sdist)."""
    try:
        digest = (tree / ".complete").read_text()
    except OSError:
        digest = ""
    return dict(_project_files(project, str(tree), digest))


@functools.lru_cache(maxsize=16)
def _project_files(project: Project, tree_path: str, digest: str) -> dict[str, bytes]:
    tree = Path(tree_path)
    files = repo_files(project, tree)
    drop: dict[str, set[tuple[str, str]]] = {}
    for node in project.drop_tests:
        file, cls, name = _function(node)
        drop.setdefault(file, set()).add((cls, name))
    for file, names in drop.items():
        if file in files:
            files[file] = strip_tests(files[file].decode("utf-8"), names).encode("utf-8")
    return files


def candidates(project: Project, files: dict[str, bytes], kinds: tuple[str, ...]) -> list[mutate.Site]:
    """Every site of the wanted kinds in the project's code, in a fixed order (a new list; the sites are found
    once per process for the same sources)."""
    sources = tuple((rel, files[rel]) for rel in source_files(project, files))
    key = (project, hashlib.sha256(repr(sources).encode()).hexdigest(), kinds)
    with _LOCK:
        known = _CANDIDATES.get(key)
    if known is None:
        known = _candidates(project, files, kinds)
        with _LOCK:
            _CANDIDATES[key] = known
            while len(_CANDIDATES) > 32:
                del _CANDIDATES[next(iter(_CANDIDATES))]
    return list(known)


_CANDIDATES: dict[tuple[Project, str, tuple[str, ...]], list[mutate.Site]] = {}
_LOCK = threading.Lock()


def _candidates(project: Project, files: dict[str, bytes], kinds: tuple[str, ...]) -> list[mutate.Site]:
    found = []
    for rel in source_files(project, files):
        try:
            found += mutate.sites(files[rel].decode("utf-8"), rel)
        except (SyntaxError, UnicodeDecodeError):
            continue
    return [s for s in found if not kinds or s.kind in kinds]


def plant(project: Project, seed: int, kinds: tuple[str, ...] = ()) -> Planted:
    """The task for `seed`: the first valid mutation in the seed's order of the sites."""
    check_not_installed(project)
    tree = fetch(project)
    files = project_files(project, tree)
    base = baseline(project, files)
    coverage = cover.record(project, files)
    order = candidates(project, files, kinds)
    random.Random(f"{project.name}=={project.version}:{seed}").shuffle(order)
    tried = 0
    for site in order:
        cached = site.id in load_json(state_root(project) / "validation.json")
        verdict = validate(project, files, site, base, coverage)
        tried += 0 if cached else 1
        if verdict.get("ok"):
            return _hide(project, files, site, verdict, base)
        if tried >= MAX_TRIES:
            break
    raise ProjectError(f"no valid mutation of kinds {', '.join(kinds) or 'any'} in {project.name}=={project.version} "
                       f"for seed {seed} after {tried} new candidates; widen the kinds")


def strip_tests(source: str, names: set[tuple[str, str]]) -> str:
    """`source` without the test functions `names` ((class or "", function)); a class left empty gets `pass`."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    cut: list[tuple[int, int, str]] = []

    def visit(body: list[ast.stmt], cls: str) -> None:
        gone = [n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and (cls, n.name) in names]
        emptied = all(n in gone or isinstance(n, ast.Pass) for n in body)
        for node in body:
            if isinstance(node, ast.ClassDef):
                visit(node.body, f"{cls}::{node.name}" if cls else node.name)
            elif node in gone:
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                keep = " " * node.col_offset + "pass\n" if emptied and node is gone[0] else ""
                cut.append((first, node.end_lineno or node.lineno, keep))

    visit(tree.body, "")
    for first, last, keep in sorted(cut, reverse=True):
        lines[first - 1:last] = [keep] if keep else []
    result = "".join(lines)
    ast.parse(result)
    return result


def only_tests(source: str, keep: set[str]) -> str:
    """`source` with only the test functions named in `keep` (in any class: a test may be inherited) among its
    tests: the grader runs only those, and a test file of thousands of lines costs seconds to import on every
    grading. Module-level code, fixtures, helpers and classes stay; a test whose name appears elsewhere in the
    file (called, referred to) stays too."""
    tree = ast.parse(source)
    drop: set[tuple[str, str]] = set()
    words = Counter(re.findall(r"\w+", source))
    defined = Counter(re.findall(r"\bdef\s+(\w+)", source))

    def visit(body: list[ast.stmt], cls: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                visit(node.body, f"{cls}::{node.name}" if cls else node.name)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test") \
                    and node.name not in keep and words[node.name] <= defined[node.name]:  # not referred to
                drop.add((cls, node.name))

    visit(tree.body, "")
    return strip_tests(source, drop) if drop else source


def _hide(project: Project, files: dict[str, bytes], site: mutate.Site, verdict: dict[str, Any],
          base: dict[str, Any]) -> Planted:
    original = files[site.path].decode("utf-8")
    failing: list[str] = verdict["failing"]
    by_file: dict[str, set[tuple[str, str]]] = {}
    for node in failing:
        file, cls, name = _function(node)
        by_file.setdefault(file, set()).add((cls, name))
    visible = dict(files)
    visible[site.path] = mutate.apply(original, site).encode("utf-8")
    hidden: dict[str, str] = {}
    for file, names in sorted(by_file.items()):
        source = files[file].decode("utf-8")
        visible[file] = strip_tests(source, names).encode("utf-8")
        hidden[str(Path(file).parent / f"hidden_{Path(file).name}")] = only_tests(source, {n for _, n in names})
    removed = {(f, c, n) for f, names in by_file.items() for c, n in names}
    visible_passed = sum(base["cases"].get(k, 1) for k, v in base["outcomes"].items()
                         if v == "passed" and _function(k) not in removed)
    return Planted(site, visible, original, failing, verdict.get("messages", {}), hidden, visible_passed)


def scratch_copy(files: dict[str, bytes]) -> Path:
    root = Path(tempfile.mkdtemp(prefix="realpy-"))
    write_tree(files, root)
    return root


def remove(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)

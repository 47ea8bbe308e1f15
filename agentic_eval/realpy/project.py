"""Real projects for the `realpy` generator: pinned sdists fetched once into the cache, their test suites run.

A project is pinned by name, version and the sdist's sha256 (PROJECTS, or a user's own through `tasks synth`).
`fetch(download_missing=True)` (the install step: `agentic-eval tasks fetch`, which scripts/install.sh runs)
downloads the sdist once with pip (`pip download --no-deps --no-binary :all:`) into
`cache_dir()/realpy/NAME-VERSION/`, checks its sha256 and unpacks it beside (`tree/`); the generator only reads
the cache (a missing sdist is a one-line error naming the command), so nothing is downloaded at trial time.
`run_suite` runs the project's tests the way gradelib's `pytest_passes` does (no conftest, no plugins,
importlib mode, an empty ini) and reads the JUnit report.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentic_eval.paths import cache_dir
from agentic_eval.realpy import measure
from agentic_eval.realpy.report import failure_message


class ProjectError(RuntimeError):
    """A project cannot be fetched or laid out; the message is one line saying how to fix it."""


@dataclass(frozen=True)
class Project:
    name: str
    version: str
    sha256: str
    kind: str = ""
    licence: str = ""
    sources: tuple[str, ...] = ()
    """where the code lives (files or folders, relative to the sdist's top): what mutations may touch"""
    tests: str = "tests"
    pythonpath: tuple[str, ...] = (".",)
    exclude: tuple[str, ...] = field(default=())
    """source files never mutated (generated version files, compatibility shims)"""
    drop_tests: tuple[str, ...] = field(default=())
    """test functions ("file::[Class::]name") taken out of the repo for good: ones that time the machine (flaky
    when it is loaded, so a right fix could fail) or take seconds alone (every grading runs the suite)"""


PROJECTS: dict[str, Project] = {p.name: p for p in (
    Project("more-itertools", "10.5.0", "5482bfef7849c25dc3c6dd53a6173ae4795da2a41a80faea6700d9f5846c5da6",
            "data structures / iteration", "MIT", ("more_itertools",), "tests", drop_tests=(
                *(f"tests/test_more.py::TimeLimitedTests::{t}" for t in ("test_basic", "test_complete")),
                *(f"tests/test_more.py::CallbackIterTests::{t}" for t in (
                    "test_basic", "test_callback_kwd", "test_partial_consumption", "test_abort", "test_no_result",
                    "test_exception")),
                "tests/test_more.py::DiscreteFourierTransformTests::test_roundtrip",
                "tests/test_more.py::DistinctPermutationsTests::test_r",
                "tests/test_more.py::IsliceExtendedTests::test_all",
                "tests/test_recipes.py::FactorTests::test_cross_check")),
    Project("inflection", "0.5.1", "1a29730d366e996aaacffb2f1f1cb9593dc38e2ddd30c91250c6dde09ea9b417",
            "text (word forms and case styles)", "MIT", ("inflection",), "test_inflection.py"),
    Project("isodate", "0.7.2", "4cd1aa0f43ca76f4a6c6c0292a85f40b35ec2e43e315b59f06e6d32171a953e6",
            "dates and durations", "BSD-3-Clause", ("src/isodate",), "tests", ("src",),
            ("src/isodate/version.py", "src/isodate/_version.py")),
    Project("parse", "1.20.2", "b41d604d16503c79d81af5165155c0b20f6c8d6c559efa66b4b695c3e5a0a0ce",
            "parsing", "MIT", ("parse.py",), "tests"),
)}


def project_of(params: dict[str, Any]) -> Project:
    """The project a realpy task's sandbox params name."""
    name = str(params.get("project") or "")
    if name in PROJECTS:
        return PROJECTS[name]
    if "==" in name and params.get("sha256"):
        pkg, _, version = name.partition("==")
        return Project(pkg, version, str(params["sha256"]), sources=tuple(params.get("sources") or ()),
                       tests=str(params.get("tests") or "tests"),
                       pythonpath=tuple(params.get("pythonpath") or (".",)))
    raise ProjectError(f"unknown realpy project {name!r}: use one of {', '.join(sorted(PROJECTS))}, "
                       "or NAME==VERSION with sha256, sources, tests and pythonpath")


def module_names(project: Project) -> list[str]:
    """The top-level modules the project's sources define (src/pkg -> pkg, mod.py -> mod)."""
    return sorted({Path(s).stem if s.endswith(".py") else Path(s).name for s in project.sources})


def check_not_installed(project: Project) -> None:
    """ProjectError when this Python can import the project already: the grader's pytest would find that copy
    before the sandbox's (the sandbox's folders come after site-packages), and the model could read it."""
    import importlib.util

    for name in module_names(project):
        spec = importlib.util.find_spec(name)
        if spec is not None:
            raise ProjectError(f"{name} is installed in {sys.executable} ({spec.origin}): the grader would test that "
                               f"copy, not the sandbox's; uninstall it or pick another project")


def project_root(project: Project) -> Path:
    """The project's cache folder: its sdist and the unpacked tree."""
    return cache_dir() / "realpy" / f"{project.name}-{project.version}"


STATE = 2
"""bumped when what the cached runs depend on changes (the repo's files, how a suite is run)"""


def state_root(project: Project) -> Path:
    """Where the runs of the project's repo are cached (baseline, coverage, twins, verdicts): one folder per
    layout of the repo (sources, tests, dropped tests), so a changed layout never reads another's results."""
    key = json.dumps([STATE, project.sources, project.tests, project.pythonpath, project.drop_tests])
    return project_root(project) / f"state-{hashlib.sha256(key.encode()).hexdigest()[:12]}"


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """An exclusive lock on `path` (created): generators of several tasks share a project's cache."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def download(name: str, version: str, dest: Path) -> Path:
    """The sdist of NAME==VERSION downloaded by pip into `dest`; ProjectError (one line) when pip cannot."""
    dest.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
            f"{name}=={version}", "-d", str(dest)]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
    except subprocess.TimeoutExpired:
        raise ProjectError(f"pip download {name}=={version} took over 300 s; check the network and retry") from None
    found = sorted(p for p in dest.glob("*.tar.gz") if p.name.lower().replace("_", "-").startswith(name.lower()))
    if done.returncode != 0 or not found:
        said = [x.strip() for x in done.stderr.splitlines()
                if x.strip() and not x.strip().startswith(("hint", "WARNING"))]
        last = (said or ["no sdist"])[-1][:200]
        raise ProjectError(f"cannot download the sdist of {name}=={version} (offline? pip said: {last}); "
                           "connect to the package index once, the sdist is cached after that")
    return found[-1]


def fetch(project: Project, download_missing: bool = False) -> Path:
    """The unpacked sdist of `project` (its top folder), its sha256 checked. Only `download_missing` (the install
    step, `agentic-eval tasks fetch`) downloads it; otherwise a missing sdist is a ProjectError saying so."""
    root = project_root(project)
    tree = root / "tree"
    with locked(root / ".lock"):
        if (tree / ".complete").exists():
            return tree
        sdists = [p for p in root.glob("*.tar.gz")] if root.is_dir() else []
        if not sdists and not download_missing:
            raise ProjectError(f"the sdist of {project.name}=={project.version} is not in the cache ({root}); fetch "
                               "it once: agentic-eval tasks fetch --tasks PACK (scripts/install.sh does it for realpy)")
        sdist = sdists[0] if sdists else download(project.name, project.version, root)
        digest = sha256_of(sdist)
        if digest != project.sha256:
            sdist.unlink()
            raise ProjectError(f"the sdist of {project.name}=={project.version} has sha256 {digest}, not the pinned "
                               f"{project.sha256}: the index serves another file; pin the new hash if you trust it")
        if tree.exists():
            shutil.rmtree(tree)
        with tempfile.TemporaryDirectory(dir=root) as tmp, tarfile.open(sdist) as archive:
            archive.extractall(tmp, filter="data")
            tops = [p for p in Path(tmp).iterdir() if p.is_dir()]
            if len(tops) != 1:
                raise ProjectError(f"the sdist of {project.name} does not hold one top folder")
            tops[0].rename(tree)
        (tree / ".complete").write_text(digest + "\n")
    return tree


def repo_files(project: Project, tree: Path) -> dict[str, bytes]:
    """The files of the sandbox repo: the sdist's source and tests (build leftovers, caches and metadata out)."""
    files: dict[str, bytes] = {}
    for dirpath, dirnames, filenames in os.walk(tree):
        dirnames[:] = sorted(d for d in dirnames if d not in ("__pycache__", ".pytest_cache", ".git")
                             and not d.endswith(".egg-info"))
        for name in sorted(filenames):
            rel = os.path.relpath(os.path.join(dirpath, name), tree)
            if rel in (".complete", "PKG-INFO", "setup.cfg.orig") or name.endswith((".pyc", ".pyo")):
                continue
            files[rel] = Path(dirpath, name).read_bytes()
    files[".gitignore"] = b"__pycache__/\n*.pyc\n.pytest_cache/\n*.egg-info/\nbuild/\ndist/\n"
    return files


def source_files(project: Project, files: dict[str, bytes]) -> list[str]:
    """The project's Python modules that mutations may touch (tests and excluded files out), sorted."""
    chosen = []
    for rel in sorted(files):
        if not rel.endswith(".py") or rel in project.exclude or rel == project.tests \
                or rel.startswith(project.tests.rstrip("/") + "/"):
            continue
        if any(rel == s or rel.startswith(s.rstrip("/") + "/") for s in project.sources):
            if "/tests/" not in "/" + rel:
                chosen.append(rel)
    return chosen


@dataclass
class SuiteRun:
    outcomes: dict[str, str]
    """test function (file::[Class::]name) -> failed (any case failed) / passed (else any passed) / skipped"""
    messages: dict[str, str]
    seconds: float
    stopped: str = ""
    """why the run was stopped before it ended (measure.Measured.stopped: "cpu", "idle", "wall"), or "" """
    cases: dict[str, int] = field(default_factory=dict)
    """test function -> how many of its cases (its parameters) passed"""
    cpu: float = 0.0
    """CPU seconds its process tree used (the same on a loaded machine, unlike `seconds`)"""

    @property
    def timed_out(self) -> bool:
        return bool(self.stopped)

    def to_json(self) -> dict[str, Any]:
        return {"outcomes": self.outcomes, "messages": self.messages, "seconds": self.seconds, "cases": self.cases,
                "cpu": self.cpu}


def _node_id(case: ET.Element) -> str:
    file = case.get("file") or ""
    classname = case.get("classname") or ""
    stem = Path(file).stem
    parts = classname.split(".")
    cls = ".".join(parts[parts.index(stem) + 1:]) if stem in parts else ""
    return "::".join(x for x in (file, cls.replace(".", "::"), case.get("name") or "") if x)


_STOP = """
import os

_LIMIT = int(os.environ["REALPY_STOP_AFTER"])
_FAILED = set()
_SESSION = []


def pytest_sessionstart(session):
    _SESSION.append(session)


def pytest_runtest_logreport(report):
    if report.failed:
        _FAILED.add(report.nodeid.split("[")[0])
        if len(_FAILED) > _LIMIT and _SESSION:
            _SESSION[0].shouldstop = "realpy: more test functions fail than a task may hide"
"""


def run_suite(workdir: Path, project: Project, timeout: float, selection: list[str] | None = None,
              stop_after: int | None = None, cpu_limit: float | None = None, idle_s: float | None = None) -> SuiteRun:
    """pytest on the project's tests in `workdir`, as the grader runs it; outcomes per test. `stop_after`: stop
    once more test functions than that failed (the outcomes are then partial). `timeout` is a wall-clock guard;
    `cpu_limit` and `idle_s` stop it by the CPU time it uses (measure.run): `stopped` says which, if any."""
    report = Path(tempfile.mkdtemp(prefix="realpy-report-"))
    (report / "pytest.ini").write_text("[pytest]\n")
    stop = ["-p", "realpy_stop"] if stop_after is not None else []
    if stop:
        (report / "realpy_stop.py").write_text(_STOP)
    # -l --tb=long: every frame's locals in a failure's traceback, for the call that raised (report.failure_message)
    argv = [sys.executable, "-B", "-m", "pytest", "-q", "-l", "--tb=long", "-p", "no:cacheprovider", *stop,
            "--noconftest",
            "--import-mode=importlib", "-c", str(report / "pytest.ini"), "--rootdir", str(workdir),
            "--junitxml", str(report / "r.xml"), "-o", "junit_family=xunit1", *(selection or [project.tests])]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PYTEST"))}
    env.update(PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", PYTHONHASHSEED="0",
               PYTHONPATH=os.pathsep.join([*(str(workdir / p) for p in project.pythonpath),
                                           *([str(report)] if stop else [])]),
               REALPY_STOP_AFTER=str(stop_after or 0))
    done = measure.run(argv, cwd=workdir, env=env, wall_limit=timeout, cpu_limit=cpu_limit, idle_s=idle_s)
    if done.stopped:
        shutil.rmtree(report, ignore_errors=True)
        return SuiteRun({}, {}, done.wall_s, stopped=done.stopped, cpu=done.cpu_s)
    seconds = done.wall_s
    outcomes: dict[str, str] = {}
    messages: dict[str, str] = {}
    cases: dict[str, int] = {}
    try:
        root = ET.parse(report / "r.xml").getroot()
    except (OSError, ET.ParseError):
        root = ET.Element("none")
    finally:
        shutil.rmtree(report, ignore_errors=True)
    for case in root.iter("testcase"):
        node = _node_id(case)
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed"
                message = (child.get("message") or child.text or "").strip()
                messages.setdefault(node.split("[")[0], failure_message(message, child.text or "", node.split("::")[0]))
            elif child.tag == "skipped":
                outcome = "skipped"
        node = node.split("[")[0]  # per test function: parameter ids need not be stable between runs
        cases[node] = cases.get(node, 0) + (outcome == "passed")
        before = outcomes.get(node)
        outcomes[node] = "failed" if "failed" in (before, outcome) else "passed" if "passed" in (before, outcome) \
            else outcome
    return SuiteRun(outcomes, messages, seconds, cases=cases, cpu=done.cpu_s)


def write_tree(files: dict[str, bytes], root: Path) -> None:
    for rel in sorted(files):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(files[rel])


@dataclass(frozen=True)
class TracedSuite:
    """Where a traced run of a project's suite ran: the project's tree, our folder beside it (the plugin, its
    output), and the environment it ran with."""

    work: Path
    aux: Path
    env: dict[str, str]
    path: str
    """The project's own import path (PYTHONPATH without our folder)."""


@contextlib.contextmanager
def traced_suite(project: Project, files: dict[str, bytes], plugin: str, source: str, timeout: float,
                 plugin_env: Callable[[Path, Path], dict[str, str]],
                 tests: Sequence[str] = ()) -> Iterator[TracedSuite]:
    """The project's suite (or only the test node ids `tests`) run once under pytest with a tracing plugin of ours
    (module `plugin`, its `source`), in a temporary folder removed afterwards: no conftest, none of this machine's
    plugins, hash seed 0, the project's import path first. `plugin_env(work, aux)` gives the plugin's own variables.
    `subprocess.TimeoutExpired` past `timeout`; what the plugin wrote is the caller's to read, in `aux`."""
    with tempfile.TemporaryDirectory(prefix=f"{plugin.replace('_', '-')}-") as tmp:
        work, aux = Path(tmp) / "work", Path(tmp) / "aux"
        write_tree(files, work)
        aux.mkdir()
        (aux / f"{plugin}.py").write_text(source)
        (aux / "pytest.ini").write_text("[pytest]\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PYTEST"))}
        path = os.pathsep.join(str(work / p) for p in project.pythonpath)
        env.update(PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", PYTHONHASHSEED="0", PYTHONPATH=f"{path}{os.pathsep}{aux}",
                   REALPY_SOURCES=json.dumps([str(work / s) for s in project.sources]))
        env.update(plugin_env(work, aux))
        argv = [sys.executable, "-B", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", plugin,
                "--noconftest", "--import-mode=importlib", "-c", str(aux / "pytest.ini"), "--rootdir", str(work),
                *(tests or [project.tests])]
        subprocess.run(argv, cwd=work, env=env, capture_output=True, timeout=timeout, check=False)
        yield TracedSuite(work, aux, env, path)


def load_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save_json(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
    tmp.replace(path)

"""Tests the model wrote, judged by what they catch (issue 39): mutation testing against the grader's module.

A task that asks the model for tests cannot decide from the tests' report: the process that runs them runs the
model's code and writes whatever it likes ("passed", one more PASS line), and a test that asserts nothing passes
for real. The outcome of the model's tests is model-controlled by nature; what makes it evidence is that it must
tell apart behaviours the model cannot tell apart otherwise. So the grader runs the model's test command apart
(`Grader.run`), each time on a fresh copy of the tree with the module under test replaced by text the grader
holds (the pristine commit's, or the grader's reference where the model writes the module):

- on the reference module and on an equivalent rewrite of it, the tests must pass (a "test" that pins the
  module's text, or that notices it runs on a copy, fails there; every text run gets a comment line no one can
  predict, and the module is rewritten at random keeping its behaviour (graders/disguise.py), with dead copies of
  every version of what the grade's texts differ in (graders/decoys.py: each version occurs once in every text,
  live or not), so neither a list of the known texts nor a search or a count of a mutation's known text gets
  past);
- on each named mutant (a subtly broken copy), they must fail. A hang is a failing run; a run that could not
  start (the grader's time was up) is no evidence and fails the check with its cause.

    import mutation
    reference = mutation.edited(pristine_text, ("return 0;", "return 1;"))   # raises when an edit does not apply
    mutation.tests_catch_mutants(g, mutation.node_tests_command(["test/x.test.js"]), "src/x.js", reference,
                                 rewrite=..., mutants={"what it breaks": text, ...})

The runs go on fresh copies of their own, as many at once as the harness runs (`gradelib.runs_apart`), in an order
drawn afresh for each grade (a "test" that counts the runs before it, through the page cache or any other state the
machine shares, learns nothing of which text it runs on from its place); they are judged in the order they ran, no
run is started after the first that fails, and the checks are recorded in their own order. The module must be what
the tests import: put it where the tests import it from (`path`), with `files` for any other file the runs need in
place.

Not closed: the mutants are public with our source. Each run's text is disguised afresh and holds every version;
graders/disguise.py says what a reader of the module in the test's own process still tells: which copy is live
(in Python one line per mutant on the live function's code object, `__code__.co_names`; from the text some 20 lines
in Python and in JavaScript), then the mutation in it. The tests run in the module's process, so only a process
boundary closes it (the hidden checks still judge the model's code).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, overload

RUN_TIMEOUT = 15.0
"""Seconds one run of the tests may take (a hang is a failing run)."""


def edited(source: str, *edits: tuple[str, str]) -> str:
    """`source` with each (old, new) replaced once; RuntimeError (the grader author's fault) when `old` is not
    in it, so a mutation that no longer applies is never a silent copy of the reference."""
    for old, new in edits:
        if old not in source:
            raise RuntimeError(f"a mutation does not apply to the module: {old[:60]!r}")
        source = source.replace(old, new, 1)
    return source


def pristine_text(g: Any, path: str) -> str:
    """The text of `path` in the pristine commit (never the model's tree)."""
    from gradelib import pristine_store

    from agentic_eval.packs import pristine

    return pristine.pristine_blob(pristine_store(), g.pristine(), path).decode("utf-8")


def pristine_folder(g: Any, folder: str) -> dict[str, str]:
    """Every file under `folder` in the pristine commit, by path: put them all back (`files=`) so that the runs
    use the grader's modules only, whatever the model changed beside the one under test."""
    from gradelib import pristine_store

    from agentic_eval.packs import pristine

    store, commit = pristine_store(), g.pristine()
    return {path: pristine.pristine_blob(store, commit, path).decode("utf-8")
            for path in sorted(pristine.pristine_entries(store, commit)) if path.startswith(folder.rstrip("/") + "/")}


def written_tests(g: Any, patterns: Sequence[str], what: str = "the tests") -> list[str]:
    """The test files matching `patterns` (globs) that the model added or changed: the tests it wrote, what the runs
    need (a file as the pristine commit has it cannot catch anything new, and running only these is cheaper). None
    is a failed check."""
    from gradelib import GitError, path_matches

    try:
        changed = g.changed_paths()
    except GitError as exc:
        g.check(f"{what}: the files the model changed are known", False, str(exc))
        return []
    found = [rel for rel in changed if path_matches(rel, patterns) and g.path(rel).is_file()
             and not g.path(rel).is_symlink()]
    if not found:
        g.check(f"{what}: a test file was added or changed ({', '.join(patterns)})", False, "none was")
    return found


def outcome(g: Any, argv: Sequence[str], files: Mapping[str, str], *, pythonpath: Sequence[str] = (),
            env: Mapping[str, str] | None = None, timeout: float = RUN_TIMEOUT) -> tuple[bool | None, str]:
    """Run `argv` apart on a fresh copy of the tree with `files` in place: (True if it exits 0, False if it fails
    or hangs, None if it could not run at all; why)."""
    return _outcome(g.run(list(argv), files=dict(files), fresh=True, timeout=timeout, pythonpath=pythonpath,
                          env=dict(env or {})), timeout)


def _outcome(run: Any, timeout: float) -> tuple[bool | None, str]:
    if run.exit_code is None and run.stopped_by != f"timed out after {timeout:g}s":
        # Not run, or cut short because the grader's own time is running out: no evidence either way.
        return None, run.stopped_by or "it did not run"
    return run.exit_code == 0, run.stopped_by or f"exit {run.exit_code}"


def stamped(path: str, text: str) -> str:
    """`text` with a comment line no one can predict (after a `#!` line): a "test" that accepts only the known texts
    of the reference and the rewrite (a hash of the module) fails on both, whatever it knows of our source. A Python
    or JavaScript module is first rewritten at random keeping its behaviour (graders/disguise.py), so that one that
    strips the comments, or looks for a mutation's known text, fails too."""
    import disguise

    return _stamp(path, disguise.disguised(path, text))


def _stamp(path: str, text: str) -> str:
    """`text` (disguised already) with the comment line no one can predict, after a `#!` line."""
    import secrets

    line = f"{'//' if path.endswith(('.js', '.mjs', '.cjs', '.ts')) else '#'} {secrets.token_hex(8)}\n"
    if text.startswith("#!"):
        head, _, rest = text.partition("\n")
        return f"{head}\n{line}{rest}"
    return line + text


class _Runs(Sequence[dict[str, Any]]):
    """The runs' keyword arguments, each made when `runs_apart` first asks for it (its text stamped then), so that
    the first runs start while the later texts are still being disguised."""

    def __init__(self, count: int, make: Callable[[int], dict[str, Any]]) -> None:
        self.size, self.make, self.made = count, make, dict[int, dict[str, Any]]()

    def __len__(self) -> int:
        return self.size

    @overload
    def __getitem__(self, at: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, at: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, at: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(at, slice):
            return [self[i] for i in range(*at.indices(self.size))]
        if not -self.size <= at < self.size:
            raise IndexError(at)
        at %= self.size
        if at not in self.made:
            self.made[at] = self.make(at)
        return self.made[at]


def node_tests_command(tests: Sequence[str]) -> list[str]:
    """The command that runs the model's node:test files `tests` for a mutation run. One file runs as the program
    itself (node:test runs its tests in that process and exits 1 when one fails, as `node --test` says of it), which
    spares each run the test runner's parent process, a Node start of its own (0.1 s of CPU a run); several run under
    `node --test`, each in a process of its own as in the repo's own test run. The exit is the model's code's word
    either way: what makes it evidence is telling the disguised texts apart, not who reports it."""
    import shutil

    node = shutil.which("node") or "node"
    return [node, *tests] if len(tests) == 1 else [node, "--test", *tests]


def pytest_command(g: Any, tests: Sequence[str], *, pythonpath: Sequence[str] = ("src",)
                   ) -> tuple[list[str], dict[str, str], dict[str, str]]:
    """The grader's own pytest on the work copy's `tests`, as `pytest_passes` runs it (an isolated interpreter,
    the `pythonpath` folders after site-packages, no conftest.py, no plugins), stopping at the first failure:
    (argv, files it needs, env)."""
    import gradelib

    ini = f"{g.scratch}/mutation-pytest.ini"
    argv = [*gradelib.pytest_argv(gradelib.python_executable(), [str(g.work / p) for p in pythonpath]),
            "-q", "-x", *gradelib.PYTEST_PLUGINS_OFF,
            "--noconftest", "--import-mode=importlib", "-c", ini, "--rootdir", str(g.work), *tests]
    return argv, {ini: "[pytest]\n"}, {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


def _tail(text: str, lines: int = 6) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def tests_catch_mutants(g: Any, argv: Sequence[str], path: str, reference: str, *, rewrite: str,
                        mutants: Mapping[str, str], files: Mapping[str, str] | None = None,
                        pythonpath: Sequence[str] = (), env: Mapping[str, str] | None = None,
                        timeout: float = RUN_TIMEOUT, what: str = "the tests") -> bool:
    """Record the checks that `argv` (the model's tests) passes with `path` = `reference` and = `rewrite`, and
    fails with `path` = each of `mutants` (name -> text); each run apart, on a fresh copy, with `files` too.
    Skipped (and False) when an earlier check failed. Returns whether every check here passed."""
    if not (g.ok or g.run_all):
        print(f"· {what} against the grader's module and its mutants: skipped (an earlier check failed)", flush=True)
        return False
    if not mutants:
        raise RuntimeError("tests_catch_mutants needs at least one mutant")
    if reference == rewrite or any(text in (reference, rewrite) for text in mutants.values()):
        raise RuntimeError("the rewrite and every mutant must differ from the reference and from each other")

    import gradelib

    checks = [(f"{what} pass on the grader's {path}", reference, True),
              (f"{what} pass on an equivalent rewrite of {path}", rewrite, True),
              *((f"{what} catch a broken {path}: {name}", text, False) for name, text in mutants.items())]
    # Each run on a fresh copy of its own, as many at once as the harness runs, in an order drawn afresh: a "test"
    # that counts the runs before it (through anything the machine shares: the page cache, the kernel's key counts)
    # cannot tell the reference's and the rewrite's from the mutants' by their place. The runs are judged in the
    # order they ran; the first that fails leaves the runs not yet started unstarted; the checks are recorded in
    # their own order at the end.
    import secrets

    order = list(range(len(checks)))
    secrets.SystemRandom().shuffle(order)
    outcomes: dict[int, tuple[bool, str]] = {}

    def judged(at: int, run: gradelib.RunResult) -> bool:
        index = order[at]
        _, _, must_pass = checks[index]
        passed, why = _outcome(run, timeout)
        if must_pass and passed is False:
            why = f"they fail ({why}): they test something other than the behaviour asked for\n{_tail(run.output)}"
        elif not must_pass:
            why = "they still pass" if passed else f"they did not run: {why}"
        outcomes[index] = (passed is must_pass, why)
        g.last_run = run  # the last judged: the failing one, when one fails
        return not outcomes[index][0]

    # Every text disguised afresh, in the background, and stamped: a run is made when runs_apart starts it.
    import disguise

    texts = disguise.Disguising([(path, checks[index][1]) for index in order])
    try:
        gradelib.runs_apart(_Runs(len(checks), lambda at: dict(
            argv=[str(a) for a in argv], files={**(files or {}), path: _stamp(path, texts.get(at))}, timeout=timeout,
            pythonpath=list(pythonpath), env=dict(env or {}))), stop=judged, sandbox=g.sandbox)
    finally:
        texts.close()
    made = [g.check(checks[index][0], *outcomes[index]) for index in sorted(outcomes)]
    return len(made) == len(checks) and all(made)

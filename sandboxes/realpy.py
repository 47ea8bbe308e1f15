"""Sandbox generator `realpy`: a real Python project from its pinned sdist, one bug planted per seed (issue 43).

params:
    project   a name in agentic_eval.realpy.project.PROJECTS, or NAME==VERSION with `sha256`, `sources`,
              `tests` and `pythonpath` given (what `agentic-eval tasks synth` writes)
    kinds     the bug kinds to choose among (agentic_eval.realpy.mutate.KINDS; default all)

The repo is the sdist's source and tests with the mutation applied and the tests that catch it removed. The
variables hold what the grader and the reference fix need and the model must not see: the hidden test files,
the original module, the failing tests, and the twins: calls the suite makes into the project with their
outcomes on the pristine code, which the grader makes in the model's code and judges itself (realpy/twins.py).
See docs/realpy.md.
"""

import copy
import functools
import json
from pathlib import Path
from typing import Any

from agentic_eval.paths import cache_dir
from agentic_eval.realpy.copies import copies_on_machine
from agentic_eval.realpy.plant import plant, project_files
from agentic_eval.realpy.project import Project, fetch, project_of, state_root
from agentic_eval.realpy.report import bug_report
from agentic_eval.realpy.twins import record, record_for_tests


def generate(root: Path, seed: int, params: dict[str, Any]) -> dict[str, Any]:
    project = project_of(params)
    kinds = tuple(str(k) for k in params.get("kinds") or ())
    tree = fetch(project)  # (a missing sdist: one line, even when this process made the task before)
    files, variables = _made(project, seed, kinds, str(state_root(project)), (tree / ".complete").read_text())
    for rel in sorted(files):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(files[rel])
    # Copies of the project elsewhere on this machine (a vendored more-itertools) would give the fix away: every
    # confined command of the trial sees them empty (packs/sandbox.HIDDEN_PATHS, realpy/copies.py). The project's
    # own sources (in realpy's cache, hidden anyway) come first: what a docker image's copies are looked for by.
    own = [str(tree / source) for source in project.sources]
    return {**copy.deepcopy(variables), "hidden_paths": [*own, *copies_on_machine(tree, project.sources, (cache_dir(),))]}


@functools.lru_cache(maxsize=48)
def _made(project: Project, seed: int, kinds: tuple[str, ...], state: str,
          digest: str) -> tuple[dict[str, bytes], dict[str, Any]]:
    """The task of a seed: the repo's files and the variables. The same for the same project, seed, kinds and
    cache, so made once per process (validate makes every seed's sandbox four times or more)."""
    planted = plant(project, seed, kinds)
    pristine = project_files(project, fetch(project))
    # the catching tests' own calls first, every one (they reach the bug), then the suite's sample
    twins = record_for_tests(project, pristine, sorted(planted.failing))
    seen = {_call_key(t) for t in twins}
    twins += [t for t in record(project, pristine) if _call_key(t) not in seen]
    originals = {rel: planted.files[rel].decode("utf-8") for rel in planted.files if rel.endswith(".py")}
    test_sources = {str(Path(k).parent / Path(k).name.removeprefix("hidden_")): v for k, v in planted.hidden.items()}
    report = bug_report(project.name, project.version, project.tests, planted.failing, planted.messages,
                        test_sources, originals)
    hidden_select = []
    require = []
    for node in planted.failing:
        parts = node.split("::")
        key = str(Path(parts[0]).parent / f"hidden_{Path(parts[0]).name}")
        name = parts[-1].split("[")[0]
        hidden_select.append("::".join([key, *parts[1:-1], name]))
        require.append(f"{Path(key).stem}::{name}")
    return planted.files, {
        "project": project.name,
        "version": project.version,
        "report": report,
        "tests_dir": project.tests,
        "pythonpath": list(project.pythonpath),
        "mutation": planted.site.id,
        "kind": planted.site.kind,
        "mutated_file": planted.site.path,
        "original_source": planted.original,
        "hidden_tests": planted.hidden,
        "hidden_select": sorted(set(hidden_select)),
        "require": sorted(set(require)),
        "visible_tests": sorted({node.split("::")[0] for node in planted.failing}),
        "min_passed": planted.visible_passed + len(set(require)),
        "project_twins": twins,
    }


def _call_key(twin: dict[str, Any]) -> str:
    return json.dumps([twin["module"], twin["function"], twin["args"], twin.get("method"), twin.get("method_args")],
                      sort_keys=True)

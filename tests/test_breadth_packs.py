"""Issue 19's breadth: the node and ops packs and their generators, the Node test check in gradelib,
the reference-fix size in `tasks list`, and CI's cheaper subset of multi-seed validation
(two seeds the authors did not develop on; the full `validate` over seeds 0-9 is a release step)."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from agentic_eval.packs.builtin import builtin_packs, node_pack_dir, ops_pack_dir, sandboxes_dir
from agentic_eval.packs.task import load_tasks
from agentic_eval.validation.fixsize import FixSize, parse_numstat, reference_fix_size
from tests.helpers import NO_REDTEAM, Grader, git, write

pytestmark = pytest.mark.usefixtures("unfinished_graders_cleared")

NEW_PACKS = {"node": node_pack_dir(), "ops": ops_pack_dir()}
NODE = shutil.which("node")


def _generator(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"test_gen_{name}", sandboxes_dir() / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(f"{path.relative_to(root)}\0{path.stat().st_mode & 0o111}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


# --------------------------------------------------------------------------- the packs as a whole


def test_the_shipped_packs_meet_the_issues_numbers() -> None:
    loaded = load_tasks([str(path) for _, path in builtin_packs()])
    assert not loaded.errors
    tasks = loaded.tasks
    assert len(tasks) >= 36
    assert sum(t.meta.difficulty == "hard" for t in tasks) >= 8
    tags = {tag for t in tasks for tag in t.meta.tags}
    assert {"restraint", "ambiguous", "migration", "refactor", "logs", "javascript", "shell", "toml"} <= tags
    assert {t.meta.sandbox.generator for t in tasks} >= {"pyservice", "nodeservice", "opsrepo"}


@pytest.mark.parametrize("pack", sorted(NEW_PACKS))
def test_every_code_task_has_hidden_tests(pack: str) -> None:
    for task in load_tasks([str(NEW_PACKS[pack])]).tasks:
        grader = task.grader_path.read_text()
        hidden = any(name in grader for name in ("extra_tests", "calls_return", "make_calls"))
        if "node_tests_pass" in grader and not hidden:
            # Hidden checks: calls into the model's code whose results the grader judges (or hidden test files).
            # Restraint tasks change no code; test-writing tasks are graded by hidden mutants instead.
            assert {"restraint", "test-writing"} & set(task.meta.tags), f"{task.id} runs code but has no hidden tests"
        for name in grader.split('extra_tests=["')[1:]:
            assert (task.dir / "data" / name.split('"')[0]).is_file(), task.id


# --------------------------------------------------------------------------- generators


@pytest.mark.parametrize(
    "name, scenarios",
    [("nodeservice", ("base", "failing_test", "log_bug", "legacy_config")),
     ("opsrepo", ("base", "ci_failure", "backup_bug"))],
)
def test_generators_are_deterministic_and_vary_by_seed(name: str, scenarios: tuple[str, ...], tmp_path: Path) -> None:
    module = _generator(name)
    for scenario in scenarios:
        first, again, other = (tmp_path / f"{scenario}-{i}" for i in range(3))
        for root in (first, again, other):
            root.mkdir()
        v1 = module.generate(first, 4, {"scenario": scenario})
        assert module.generate(again, 4, {"scenario": scenario}) == v1
        assert _tree_digest(first) == _tree_digest(again)
        variables = [module.generate(other, seed, {"scenario": scenario}) for seed in (5,)]
        assert _tree_digest(other) != _tree_digest(first)
        assert json.loads(json.dumps(v1)) == v1 and variables[0] != v1  # JSON-serialisable, seed-dependent
    with pytest.raises(ValueError, match="unknown scenario"):
        module.generate(tmp_path / "x", 0, {"scenario": "nope"})


@pytest.mark.skipif(NODE is None, reason="node is not installed")
@pytest.mark.parametrize("scenario, failing", [("base", 0), ("failing_test", 2), ("log_bug", 0), ("legacy_config", 0)])
def test_the_node_service_tests_run_with_node_only(scenario: str, failing: int, tmp_path: Path) -> None:
    _generator("nodeservice").generate(tmp_path, 2, {"scenario": scenario})
    tmp = tmp_path.parent / f"{tmp_path.name}-tmp"  # the service's tests write cfg-* folders there, never removed
    tmp.mkdir()
    proc = subprocess.run([NODE, "--test", *sorted(str(p) for p in (tmp_path / "test").iterdir())],  # type: ignore[list-item]
                          cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
                          env={**os.environ, "TMPDIR": str(tmp)})
    assert f"# fail {failing}" in proc.stdout, proc.stdout[-2000:]


@pytest.mark.parametrize("scenario, failing", [("base", 0), ("ci_failure", 1), ("backup_bug", 0)])
def test_the_ops_repo_checks_and_tests_run(scenario: str, failing: int, tmp_path: Path) -> None:
    _generator("opsrepo").generate(tmp_path, 6, {"scenario": scenario})
    check = subprocess.run(["make", "check"], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)
    assert "config ok" in check.stdout, check.stdout + check.stderr
    test = subprocess.run(["make", "test"], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)
    assert f"{failing} failed" in test.stdout, test.stdout


# --------------------------------------------------------------------------- gradelib's Node check


@pytest.fixture
def node_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    repo, task = tmp_path / "repo", tmp_path / "task"
    write(repo, {
        "package.json": '{"type": "module", "scripts": {"test": "echo all passed"}}\n',
        "src/calc.js": "export const add = (a, b) => a + b;\n",
        "test/calc.test.js": 'import { test } from "node:test";\nimport assert from "node:assert/strict";\n'
                             'import { add } from "../src/calc.js";\ntest("adds", () => assert.equal(add(2, 3), 5));\n',
    })
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    (task / "data").mkdir(parents=True)
    monkeypatch.setenv("AGENTIC_EVAL_TASK_DIR", str(task))
    monkeypatch.setenv("AGENTIC_EVAL_SANDBOX", str(repo))
    return repo, task


HIDDEN = '''import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
const { add } = await import(pathToFileURL(join(process.env.AGENTIC_EVAL_SANDBOX, "src/calc.js")).href);
test("hidden adds negatives", () => assert.equal(add(-2, 2), EXPECTED));
'''


@pytest.mark.skipif(NODE is None, reason="node is not installed")
@pytest.mark.parametrize("expected, passes", [("0", True), ("1", False)])
def test_node_check_runs_hidden_tests_outside_the_sandbox(node_repo: tuple[Path, Path], expected: str,
                                                           passes: bool) -> None:
    repo, task = node_repo
    (task / "data" / "hidden.test.mjs").write_text(HIDDEN.replace("EXPECTED", expected))
    grader = Grader(repo)
    run = grader.node_tests_pass(["test"], extra_tests=["hidden.test.mjs"], min_passed=2,
                                 require=["hidden adds negatives"] if passes else ())
    assert grader.ok is passes, grader.results
    assert run is not None and run.count("passed") == (2 if passes else 1)
    assert git(repo, "status", "--porcelain", "--ignored") == ""  # nothing of the run lands in the sandbox


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_node_check_ignores_package_scripts_and_wants_real_tests(node_repo: tuple[Path, Path]) -> None:
    repo, _ = node_repo
    (repo / "test" / "calc.test.js").write_text('console.log("# pass 1\\n# fail 0\\nok 1 - adds");\n')
    grader = Grader(repo)
    grader.node_tests_pass(["test"])
    assert not grader.ok and "no tests were collected" in grader.results[0][2]


def test_ini_and_toml_readers(node_repo: tuple[Path, Path]) -> None:
    repo, _ = node_repo
    write(repo, {"a.ini": "[server]\nport = 80\n", "b.toml": "[x]\ny = 1\n", "bad.toml": "[x\n"})
    grader = Grader(repo)
    assert grader.ini_value("a.ini", "server", "port") == "80"
    assert grader.ini_value("a.ini", "server", "nope") is None and grader.ini_value("none.ini", "a", "b") is None
    assert grader.toml_data("b.toml") == ({"x": {"y": 1}}, "")
    assert grader.toml_data("bad.toml")[0] is None and grader.toml_data("none.toml") == (None, "no such file")


# --------------------------------------------------------------------------- reference-fix size


@pytest.mark.parametrize(
    "numstat, expected",
    [
        ("", FixSize()),
        ("3\t1\tsrc/a.js\0", FixSize(["src/a.js"], 3, 1)),
        ("0\t9\told.py\0" + "12\t0\tnew dir/new.py\0" + "-\t-\tlogo.png\0",
         FixSize(["logo.png", "new dir/new.py", "old.py"], 12, 9)),
    ],
)
def test_parse_numstat(numstat: str, expected: FixSize) -> None:
    assert parse_numstat(numstat) == expected


@pytest.mark.parametrize("size, label", [(FixSize(), "no change"), (FixSize(["a"], 1, 0), "1 file +1 -0"),
                                         (FixSize(["a", "b"], 4, 2), "2 files +4 -2"),
                                         (FixSize(error="the reference fix failed"), "? (the reference fix failed)")])
def test_fix_size_label(size: FixSize, label: str) -> None:
    assert size.label() == label


def test_reference_fix_size_is_measured_then_cached(tmp_path: Path) -> None:
    (task,) = [t for t in load_tasks([str(ops_pack_dir())]).tasks if t.id == "ops-change-port"]
    size = reference_fix_size(task, cache=tmp_path)
    assert size == FixSize(["Dockerfile", "config/app.ini", "config/deploy.yaml"], 3, 3)
    (cached,) = (tmp_path / "fix-size").iterdir()
    cached.write_text(json.dumps({"files": ["x"], "added": 1, "removed": 0, "error": ""}))
    assert reference_fix_size(task, cache=tmp_path).files == ["x"]  # read back, not measured again


def test_tasks_list_json_shows_fix_sizes(mini_pack: Path, tmp_path: Path) -> None:
    env = {**__import__("os").environ, "AGENTIC_EVAL_CACHE": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, "-m", "agentic_eval.cli", "tasks", "list", "--tasks", str(mini_pack),
                           "--fix-size", "--json"], capture_output=True, text=True, timeout=120, env=env, check=False)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)["tasks"]
    assert rows and all(set(r["fix_size"]) == {"files", "added", "removed", "error"} for r in rows)
    assert all(r["fix_size"]["files"] and not r["fix_size"]["error"] for r in rows)


# --------------------------------------------------------------------------- CI subset: validate on other seeds


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize(("pack", "seed"), [("node", 11), ("ops", 27)])  # one other seed each: the suite's time
def test_validate_the_new_packs_on_more_seeds(pack: str, seed: int) -> None:
    if pack == "node" and NODE is None:
        pytest.skip("node is not installed")
    proc = subprocess.run([sys.executable, "-m", "agentic_eval.cli", "validate", "--tasks", str(NEW_PACKS[pack]),
                           "--json", "--seed", str(seed), "--seeds", "1", "--repeat", "1", *NO_REDTEAM],  # one run each
                          capture_output=True, text=True, timeout=900, check=False)
    result = json.loads(proc.stdout)
    bad = [t for t in result["tasks"] if t["status"] != "ok"]
    assert proc.returncode == 0 and not bad, bad
    assert result["ok"] >= 9


# --------------------------------------------------------------------- examples/ops-pack: a pack as its own package

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "ops-pack"


def _install_example(site: Path) -> Path:
    """Lay the example out as its wheel would install it (its own force-include mapping), with its metadata."""
    import tomllib

    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text())
    shutil.copytree(EXAMPLE / "src" / "agentic_eval_ops_pack", site / "agentic_eval_ops_pack")
    for source, target in project["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"].items():
        origin, dest = (EXAMPLE / source).resolve(), site / target
        dest.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if origin.is_dir() else shutil.copyfile)(origin, dest)
    dist = site / "agentic_eval_ops_pack-0.1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: agentic-eval-ops-pack\nVersion: 0.1.0\n")
    points = project["project"]["entry-points"]["agentic_eval.packs"]
    (dist / "entry_points.txt").write_text("[agentic_eval.packs]\n"
                                           + "".join(f"{k} = {v}\n" for k, v in points.items()))
    return site / "agentic_eval_ops_pack" / "pack"


def test_the_example_package_is_found_and_replaces_the_builtin_ops_pack(tmp_path: Path) -> None:
    pack = _install_example(tmp_path / "site")
    assert (pack / "sandboxes" / "opsrepo.py").is_file()
    env = {**__import__("os").environ, "PYTHONPATH": f"{tmp_path / 'site'}:{Path(__file__).resolve().parent.parent}"}
    listed = subprocess.run([sys.executable, "-m", "agentic_eval.cli", "tasks", "list", "--json"],
                            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120, check=False)
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    assert not rows["errors"]
    ops = [r for r in rows["tasks"] if r["pack"] == "ops"]
    assert len(ops) >= 9 and all(Path(r["path"]).parent == pack.resolve() for r in ops)
    validated = subprocess.run([sys.executable, "-m", "agentic_eval.cli", "validate", "--tasks", str(pack),
                                "--task", "ops-change-port", "--json", *NO_REDTEAM],
                               capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300, check=False)
    assert json.loads(validated.stdout)["ok"] == 1, validated.stdout + validated.stderr

"""The pyservice sandbox generator: deterministic, seed-varied, and every scenario is what tasks expect."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import load_pyservice, pyservice_generate

pyservice = load_pyservice()
SCENARIOS: tuple[str, ...] = pyservice.SCENARIOS


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def run_repo_pytest(root: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHONPATH"))}
    env.update(PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rf"],
        cwd=root, env=env, capture_output=True, text=True, timeout=120, check=False,
    )


def run_cli(root: Path, pkg: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH="src", PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run(
        [sys.executable, "-m", pkg, *args], cwd=root, env=env, capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_same_seed_gives_identical_bytes(tmp_path: Path, scenario: str) -> None:
    first = pyservice_generate(tmp_path / "a", 11, scenario)
    second = pyservice_generate(tmp_path / "b", 11, scenario)
    assert first == second
    assert tree_bytes(tmp_path / "a") == tree_bytes(tmp_path / "b")


def test_different_seeds_give_different_variables(tmp_path: Path) -> None:
    variables = [pyservice_generate(tmp_path / str(seed), seed) for seed in range(12)]
    for key in ("port", "legacy_value", "invoice_output"):
        assert len({str(v[key]) for v in variables}) >= 10, key
    for key in ("pkg", "legacy_const", "charge_fn", "new_module", "prorate_fn", "spec_module"):
        assert len({v[key] for v in variables}) >= 2, key
    assert all(a != b for i, a in enumerate(variables) for b in variables[i + 1:])


def test_unknown_scenario_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown scenario"):
        pyservice_generate(tmp_path, 0, "nope")


@pytest.mark.parametrize("seed", range(40))
def test_fresh_names_never_occur_in_any_scenario(tmp_path: Path, seed: int) -> None:
    # generate() itself refuses to write a repo that already holds a name a task asks the agent to introduce.
    for scenario in SCENARIOS:
        variables = pyservice_generate(tmp_path / scenario, seed, scenario)
        assert json.loads(json.dumps(variables)) == variables


@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if s != "failing_test"])
def test_scenario_test_suite_passes(tmp_path: Path, scenario: str) -> None:
    variables = pyservice_generate(tmp_path, 3, scenario)
    proc = run_repo_pytest(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{variables['test_count']} passed" in proc.stdout


def _seed_planting(failing_test: str) -> int:
    """The first seed whose failing_test scenario plants the bug behind `failing_test`."""
    for seed in range(100):
        if pyservice._choose(seed, "failing_test").failing_variant == failing_test:
            return seed
    raise AssertionError(f"no seed plants {failing_test}")


@pytest.mark.parametrize("variant", sorted(pyservice.FAILING_VARIANTS))
def test_failing_test_scenario_fails_the_named_test(tmp_path: Path, variant: str) -> None:
    variables = pyservice_generate(tmp_path, _seed_planting(variant), "failing_test")
    proc = run_repo_pytest(tmp_path)
    assert proc.returncode == 1
    assert f"FAILED {variables['failing_test']}" in proc.stdout


@pytest.mark.parametrize("seed", [0, 7])
def test_base_invoice_output_is_what_the_cli_prints(tmp_path: Path, seed: int) -> None:
    variables = pyservice_generate(tmp_path, seed)
    proc = run_cli(tmp_path, variables["pkg"], "invoice", variables["usage_file"])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == variables["invoice_output"]
    totals = variables["usage_totals"]
    assert variables["total_cents"] == sum(variables["charges"].values())
    assert f"{sum(totals.values()):>10} requests" in proc.stdout.splitlines()[-1]


def test_traceback_is_the_real_crash(tmp_path: Path) -> None:
    variables = pyservice_generate(tmp_path, 4, "traceback")
    proc = run_cli(tmp_path, variables["pkg"], "invoice", variables["usage_file"])
    assert proc.returncode == 1
    quoted = variables["traceback"].splitlines()
    assert quoted[-1] == proc.stderr.strip().splitlines()[-1]
    # Every frame the instruction quotes points at that very line of the generated source.
    frames = re.findall(r'File "[^"]*/src/[^/]+/(\w+\.py)", line (\d+), in \S+\n    (.+)', variables["traceback"])
    assert len(frames) == 4
    for module, number, statement in frames:
        source = (tmp_path / variables["src_dir"] / module).read_text().splitlines()
        assert source[int(number) - 1].strip() == statement
    # The real traceback holds the same frames, carets included.
    real = proc.stderr.replace(str(tmp_path.resolve()), "").replace(str(tmp_path), "")
    for line in quoted[3:]:
        if not line.startswith('  File "'):
            assert line in real


def test_stale_docs_differ_from_code_only_where_intended(tmp_path: Path) -> None:
    variables = pyservice_generate(tmp_path, 9, "stale_docs")
    configuration = (tmp_path / "docs" / "configuration.md").read_text()
    cli_doc = (tmp_path / "docs" / "cli.md").read_text()
    for stale in (variables["stale_port"], variables["stale_rpm"]):
        hits = [p for p, data in tree_bytes(tmp_path).items() if re.search(rf"\b{stale}\b".encode(), data)]
        assert hits == ["docs/configuration.md"]
    assert f"`{variables['port']}`" not in configuration
    assert "--free-requests" not in cli_doc and "`--free N`" in cli_doc
    base = tmp_path / "base"
    pyservice_generate(base, 9)
    for option in variables["cli_options"]:
        assert option in (base / "docs" / "cli.md").read_text()


def test_dead_code_is_really_unused_by_the_live_code(tmp_path: Path) -> None:
    variables = pyservice_generate(tmp_path, 2, "dead_code")
    dead, helper = variables["dead_module"], variables["dead_helper"]
    users = [p for p, data in tree_bytes(tmp_path).items() if dead.encode() in data]
    assert sorted(users) == [f"tests/test_{dead}.py"]
    helper_users = [p for p, data in tree_bytes(tmp_path).items() if helper.encode() in data]
    assert sorted(helper_users) == [f"{variables['src_dir']}/billing.py", f"{variables['src_dir']}/{dead}.py"]

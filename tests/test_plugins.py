"""Plugins: the entry-point groups in agentic_eval.plugins, docs/plugins.md's example plugin actually working
(written out from the page, its entry points installed, its own test run), the test kit's docstring example,
and the tests' own layout (no test module imports another)."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from agentic_eval import plugins

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "plugins.md"
FILE_BLOCK = re.compile(r"^```\w* file=(\S+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def test_the_groups_are_the_ones_pyproject_registers_in() -> None:
    registered = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    assert set(registered) <= set(plugins.GROUPS)
    assert plugins.GROUPS == ("agentic_eval.agents", "agentic_eval.packs", "agentic_eval.generators",
                              "agentic_eval.sandboxes", "agentic_eval.redteam", "agentic_eval.backends")
    assert {"builtin", "oracle", "nop"} <= set(plugins.agent_entry_points())
    assert {"core", "node", "ops"} <= {name for name, _ in plugins.pack_dirs()}
    assert plugins.sandbox_generator("no-such-generator") is None


def _doc_files() -> dict[str, str]:
    files = {path: body for path, body in FILE_BLOCK.findall(DOC.read_text(encoding="utf-8"))}
    assert {"pyproject.toml", "my_plugin/agent.py", "my_plugin/cli.py", "my_plugin/cli_agent.py",
            "my_plugin/generator.py", "my_plugin/pack.py", "my_plugin/redteam.py", "my_plugin/backend.py",
            "tests/test_plugin.py"} <= set(files)
    return files


@pytest.fixture(scope="module")
def doc_plugin(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """docs/plugins.md's package written out, and installed the way pip would make its entry points visible
    (a .dist-info folder on the path), without touching the environment: (its folder, the env to run in)."""
    base = tmp_path_factory.mktemp("doc-plugin")
    project = base / "my-agentic-plugin"
    for rel, body in _doc_files().items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(body, encoding="utf-8")
    (project / "my_plugin" / "__init__.py").write_text("", encoding="utf-8")
    meta = tomllib.loads((project / "pyproject.toml").read_text())["project"]
    dist = base / "site" / f"{meta['name'].replace('-', '_')}-{meta['version']}.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {meta['name']}\nVersion: {meta['version']}\n")
    (dist / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{name} = {value}\n" for name, value in entries.items()) + "\n"
        for group, entries in meta["entry-points"].items()))
    # The console script, as one self-contained file (confined, the CLI cannot see the project folder).
    script = base / "bin" / "my-agent-cli"
    script.parent.mkdir()
    script.write_text(f"#!{sys.executable}\n" + (project / "my_plugin" / "cli.py").read_text(), encoding="utf-8")
    script.chmod(0o755)
    path = [str(project), str(base / "site"), str(ROOT), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in path if p),
           "PATH": os.pathsep.join([str(script.parent), os.environ.get("PATH", os.defpath)])}
    return project, env


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentic_eval.cli", *args], capture_output=True, text=True,
                          env=env, timeout=300, check=False)


def test_the_doc_pack_and_generator_are_found_and_valid(doc_plugin: tuple[Path, dict[str, str]],
                                                        tmp_path: Path) -> None:
    """The pack comes from its entry point, its generator from the sandboxes group (the pack has no
    sandboxes/ folder), and `validate` finds the grader failing on the pristine repo and passing after the fix."""
    _, env = doc_plugin
    probe = ("from agentic_eval.packs.task import default_packs; from agentic_eval.packs.sandbox import "
             f"find_generator; import json, pathlib; root = pathlib.Path({str(tmp_path)!r}); "
             "variables = find_generator('greeting-repo')(root, 7, {}); "
             "print(json.dumps([dict(default_packs())['greetings'].name, variables]))")
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120,
                           check=False)
    assert found.returncode == 0, found.stderr
    pack_folder, variables = json.loads(found.stdout)
    assert pack_folder == "pack" and re.fullmatch(r"(Ada|Grace|Alan|Edsger)\d\d", variables["name"])
    done = _cli(env, "validate", "--task", "greet", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] == 1
    # The page's red-team attempt came from its entry point, ran on the task, and the grader failed it.
    assert "truncate-files" in report["redteam"]
    (greet,) = report["tasks"]
    assert {(a["attempt"], a["verdict"]) for a in greet["redteam"]} >= {("truncate-files", "fail")}
    listed = _cli(env, "validate", "--redteam", "list")
    assert listed.returncode == 0 and "truncate-files  [any]" in listed.stdout, listed.stdout + listed.stderr


def test_the_doc_agent_passes_a_trial_in_the_doc_test(doc_plugin: tuple[Path, dict[str, str]]) -> None:
    """The page's own test: one real trial of its agent, on its task, against the scripted endpoint."""
    project, env = doc_plugin
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_plugin.py"],
                          cwd=project, capture_output=True, text=True, env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "3 passed" in done.stdout


def test_the_test_kit_docstring_example_runs() -> None:
    import agentic_eval.testing

    doc = agentic_eval.testing.__doc__ or ""
    start = doc.index("    import json")
    code = textwrap.dedent(doc[start:doc.index("\n\n`fake.base_url`", start)])
    namespace: dict[str, object] = {}
    exec(compile(code, "agentic_eval.testing docstring", "exec"), namespace)
    test = namespace["test_the_reply_carries_the_tool_call"]
    assert callable(test)
    test()


def test_no_test_module_imports_another() -> None:
    """Shared helpers are in tests/helpers.py and conftest.py, the scripted endpoint in agentic_eval.testing."""
    offenders = []
    for path in [*sorted((ROOT / "tests").glob("*.py")), *sorted((ROOT / "benchmarks").glob("*.py"))]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                last = name.rsplit(".", 1)[-1]
                if last.startswith("test_") or last in ("fake_endpoint", "conftest"):
                    offenders.append(f"{path.relative_to(ROOT)}: {name}")
    assert offenders == []


def test_a_generator_registered_under_the_old_group_name_is_still_found(tmp_path: Path) -> None:
    """`agentic_eval.sandboxes` was the generators' group before "sandbox" came to mean only the backend:
    a third-party pack that registered there keeps working."""
    (tmp_path / "old_gen.py").write_text("def generate(root, seed, params):\n    return {'seed': seed}\n")
    dist = tmp_path / "old_gen-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: old-gen\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[agentic_eval.sandboxes]\nold-gen = old_gen:generate\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    (tmp_path / "repo").mkdir()
    probe = ("from agentic_eval.packs.sandbox import find_generator; import pathlib; "
             f"print(find_generator('old-gen')(pathlib.Path({str(tmp_path / 'repo')!r}), 7, {{}}))")
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120,
                           check=False)
    assert found.returncode == 0 and found.stdout.strip() == "{'seed': 7}", found.stderr


def test_the_doc_backend_takes_its_option_from_the_cli_and_from_a_campaign_file(
        doc_plugin: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    """A plugin backend with options is its module and its entry point: `--sandbox-opt KEY=VALUE` and a campaign
    file's `[sandbox]` table reach its own options model, and a bad key or value is one line naming it. (The
    page's own test runs a trial with `--sandbox-opt niceness=10`.)"""
    _, env = doc_plugin
    body = '[sandbox]\nname = "nice"\noptions = { niceness = N }\n\n[[models]]\nname = "m"\n'
    (tmp_path / "good.toml").write_text(body.replace("N", "7"))
    (tmp_path / "bad.toml").write_text(body.replace("N", "40"))
    probe = textwrap.dedent("""
        import sys
        from agentic_eval.campaign.spec import load_campaign
        from agentic_eval.cli import build_parser
        from agentic_eval.cli.args import sandbox_choice
        from agentic_eval.confine import get_backend
        from agentic_eval.errors import AgenticEvalError
        choice = sandbox_choice(build_parser().parse_args(["run", "--sandbox", "nice", "--sandbox-opt", "niceness=3"]))
        backend = get_backend(choice.name, choice.options)
        print(type(backend).__name__, backend.niceness)
        choice = load_campaign(sys.argv[1]).sandbox_choice()
        print(choice.name, get_backend(choice.name, choice.options).niceness)
        try:
            load_campaign(sys.argv[2])
        except AgenticEvalError as exc:
            print(exc)
    """)
    found = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "good.toml"), str(tmp_path / "bad.toml")],
                           capture_output=True, text=True, env=env, timeout=120, check=False)
    assert found.returncode == 0, found.stderr
    lines = found.stdout.splitlines()
    assert lines[:2] == ["NiceBackend 3", "nice 7"]
    assert lines[2].endswith("bad.toml: sandbox: option niceness: Input should be less than or equal to 19 "
                             "(it takes: niceness)"), lines
    bad = _cli(env, "run", "--sandbox", "nice", "--sandbox-opt", "colour=red", "--model", "m", "--base-url",
               "http://127.0.0.1:9/v1")
    assert bad.returncode != 0
    assert bad.stderr.strip().splitlines()[-1].endswith(
        "--sandbox nice: unknown option 'colour' (it takes: niceness); give --sandbox-opt KEY=VALUE"), bad.stderr


def test_a_runs_backend_is_closed_when_the_run_ends(tmp_path: Path, mini_pack: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Campaign.execute calls the backend's close_all (its containers, threads and connections go when the run
    ends, not at exit): a backend plugin that counts its calls, installed as pip would (a .dist-info folder)."""
    from agentic_eval.runner.api import start_run

    dist = tmp_path / "site" / "closing_backend-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: closing-backend\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[agentic_eval.backends]\nclosing = closing_backend:ClosingBackend\n")
    (tmp_path / "site" / "closing_backend.py").write_text(
        "from agentic_eval.confine.host import LocalBackend\n\n\n"
        "class ClosingBackend(LocalBackend):\n    closed = 0\n    name = 'closing'\n\n"
        "    def close_all(self):\n        type(self).closed += 1\n        super().close_all()\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    done = start_run(agent="nop", tasks=[mini_pack], sandbox="closing", runs_root=tmp_path / "runs")
    import closing_backend  # type: ignore[import-not-found]

    assert [t.outcome for t in done.trials_run] == ["fail"] and closing_backend.ClosingBackend.closed == 1

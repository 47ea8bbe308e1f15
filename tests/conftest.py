"""Shared fixtures: the harness's own mini pack, copied so tests can break it freely; scripted endpoints;
gradelib's unfinished graders cleared. Shared plain helpers are in tests/helpers.py."""

from __future__ import annotations

import shutil
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from agentic_eval.testing import FakeEndpoint, ReceivedRequest, ScriptedReply

if TYPE_CHECKING:
    from agentic_eval.agents.base import AgentOutcome
    from agentic_eval.packs.sandbox import Sandbox
    from agentic_eval.packs.task import Task

MINI_PACK = Path(__file__).parent / "packs" / "mini"

collect_ignore = ["packs"]
"""tests/packs/ holds task packs: their own verifier tests (a Harbor task's tests/test_outputs.py) run in the task's
sandbox against the agent's work, never as this suite's tests."""

# A shell starts background jobs (`pytest ... &`) with SIGINT ignored, and exec'd children inherit
# that: the CLI processes the Ctrl-C tests interrupt would never see the signal. Take Python's own
# handler back, so that children start with SIGINT at its default, as in a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


FIRST_FILES = ("test_redteam.py", "test_docker_backend.py", "test_relay_origin.py", "test_cli_agents.py",
               "test_ray_cluster.py", "test_core_pack.py", "test_breadth_packs.py", "test_claude_code.py",
               "test_grading_integrity.py", "test_hostile_flags.py")
"""Started first, longest first: under `-n 2 --dist loadfile` (scripts/test.sh) each worker takes whole files in
this order, so the short files fill in at the end instead of one long file being the tail of the run."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(FIRST_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the order within a file is kept


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A folder of the test's own with a short path (under /tmp), removed after the test: a temp folder for trials
    whose mounts the test looks for in /proc/mounts (a long one works too: tests/test_long_tmpdir.py)."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="ae-t-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def mini_pack(tmp_path: Path) -> Path:
    """A writable copy of tests/packs/mini (one good task, generator 'tiny')."""
    dest = tmp_path / "mini"
    shutil.copytree(MINI_PACK, dest)
    return dest


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads or writes the user's git config or home, nor takes the width of the terminal the suite
    was started in (a test that needs a width sets COLUMNS itself): output is captured, as when piped."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)


@pytest.fixture
def scripted() -> Iterator[Callable[[Callable[[ReceivedRequest], ScriptedReply]], FakeEndpoint]]:
    """Start scripted endpoints on 127.0.0.1 (`scripted(responder)`), all stopped after the test."""
    started: list[FakeEndpoint] = []

    def start(responder: Callable[[ReceivedRequest], ScriptedReply]) -> FakeEndpoint:
        fake = FakeEndpoint(responder=responder)
        fake.start()
        started.append(fake)
        return fake

    yield start
    for fake in started:
        fake.stop()


@pytest.fixture
def unfinished_graders_cleared() -> Iterator[None]:
    """For tests that make gradelib Graders and never finish them: gradelib would otherwise exit 3 at
    interpreter exit (use with `pytestmark = pytest.mark.usefixtures("unfinished_graders_cleared")`). The code
    hosts of graders run by hand (one per sandbox, kept until exit) are closed too: a socket, a thread and a folder
    each, which a test worker would otherwise hold to its end."""
    yield
    from tests.helpers import gradelib

    gradelib._unfinished.clear()
    hosts = list(gradelib._local_hosts.values())
    gradelib._local_hosts.clear()
    for host in hosts:
        host.close()
        shutil.rmtree(host.folder, ignore_errors=True)


# ---- the built-in agent on the mini task against a scripted endpoint (tests/test_builtin_agent.py,
# test_review_deep_text.py)

@pytest.fixture
def task() -> Task:
    from agentic_eval.packs.task import load_task
    from tests.helpers import MINI_TASK

    return load_task(MINI_TASK)


@pytest.fixture
def sandbox(task: Task, tmp_path: Path) -> Sandbox:
    from agentic_eval.packs.sandbox import materialize_sandbox

    return materialize_sandbox(task, 7, tmp_path / "sandbox")


@pytest.fixture
def fake() -> Iterator[FakeEndpoint]:
    with FakeEndpoint() as endpoint:
        yield endpoint


@pytest.fixture
def run_agent(task: Task, sandbox: Sandbox, fake: FakeEndpoint, tmp_path: Path) -> Callable[..., AgentOutcome]:
    """Run the built-in agent on the mini task against `fake`; keyword arguments override the context."""
    import threading

    from agentic_eval.agents.base import AgentContext, AgentOptions
    from agentic_eval.agents.builtin.loop import BuiltinAgent

    def run(*, base_url: str | None = None, timeout_s: float = 10, max_turns: int = 5,
            cancel: threading.Event | None = None, **options: Any) -> AgentOutcome:
        options.setdefault("extra", {"max_retries": "0"})
        ctx = AgentContext(task=task, sandbox=sandbox, instruction=task.render_instruction(sandbox.variables),
                           base_url=base_url or fake.base_url, api_key="test-key", model="fake-model",
                           timeout_s=timeout_s, max_turns=max_turns, trial_dir=tmp_path / "trial",
                           options=AgentOptions(**options), cancel=cancel or threading.Event())
        return BuiltinAgent().run(ctx)

    return run


# ---- tasks that bring their own environment, on a private Docker engine (tests/test_environment_tasks.py,
# test_verifier_control.py, test_review_verifier_sabotage.py)

@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from tests.helpers import docker_engine

    yield from docker_engine("envd")


@pytest.fixture
def docker_env(engine: str, monkeypatch: pytest.MonkeyPatch) -> str:
    from tests.helpers import IMAGE_CACHE

    monkeypatch.setenv("DOCKER_HOST", engine)
    monkeypatch.setenv("AGENTIC_EVAL_CACHE", IMAGE_CACHE)
    return engine

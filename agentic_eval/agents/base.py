"""What an agent is: the contract every agent (built-in loop, CLI adapter, oracle, nop) meets.

An agent gets an `AgentContext` (the sandbox, the instruction, the endpoint as
seen through the wire recorder, its limits) and returns an `AgentOutcome`. It
never raises for a problem of the model, the endpoint or the CLI it drives:
those are outcomes. Agents are found by name in one registry, the
`agentic_eval.agents` entry-point group, built-ins included.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

from agentic_eval.errors import AgenticEvalError
from agentic_eval.packs.sandbox import Sandbox
from agentic_eval.packs.task import Task
from agentic_eval.plugins import AGENTS_GROUP

if TYPE_CHECKING:
    from agentic_eval.agents.adapters.install import CliTool
    from agentic_eval.confine.backend import SandboxBackend

AGENT_ENTRY_POINT_GROUP = AGENTS_GROUP  # the group is named in agentic_eval.plugins

AgentStatus = Literal["completed", "timeout", "agent_error", "endpoint_error", "cancelled"]


AGENT_VERSION_FILE = "agent_version.txt"
"""An agent that drives a versioned program writes its version line here, in the trial folder."""

NO_TOOL_CALLS_BY_DESIGN = "no_tool_calls_by_design"
"""Stop reason of an agent that never uses API tool calls (aider): the report shows n/a, not 0."""


@dataclass(frozen=True)
class AgentOptions:
    """Options of a run that agents may read (each agent uses what applies to it)."""

    system_prompt_tokens: int | None = None
    """Built-in agent: pad the system prompt with realistic agent guidance to about this many tokens."""
    lenient_text_calls: bool = False
    """Built-in agent: also execute tool calls the model wrote as text."""
    stream: bool = False
    """Built-in agent: request streamed completions."""
    emulate_parser: str | None = None
    """Every agent: the wire recorder emulates this engine tool parser ('vllm:hermes', ...), handing the agent
    the calls it would read in the endpoint's text as structured calls (a what-if run)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Agent-specific settings (`--agent-opt KEY=VALUE`)."""
    agent_timeout_s: float | None = None
    """The agent's time limit in seconds, in place of each task's `limits.agent_timeout_s` (`run --agent-timeout`);
    None: the task's. How a run runs, not what it measures: a resume may change it."""


@dataclass
class AgentContext:
    """Everything one trial's agent needs."""

    task: Task
    sandbox: Sandbox
    instruction: str
    """The task's instruction rendered for this sandbox's seed, exactly as the agent is told it."""
    base_url: str
    """The OpenAI-compatible base URL to call (the wire recorder's, ending in /v1)."""
    api_key: str
    model: str
    timeout_s: float
    """Wall time for the whole agent run; the agent must stop (and kill what it started) by then."""
    max_turns: int
    trial_dir: Path
    """A folder for the agent's own files (transcript, CLI output); outside the sandbox."""
    options: AgentOptions = field(default_factory=AgentOptions)
    cancel: threading.Event = field(default_factory=threading.Event)
    """Set when the run is interrupted: stop as soon as possible and kill child processes."""
    backend: SandboxBackend | None = None
    """The `SandboxBackend` every command the model controls runs through (None: the default one)."""


@dataclass
class AgentOutcome:
    """How the agent's run ended. `completed` means it stopped by itself (not that it succeeded)."""

    status: AgentStatus
    turns: int = 0
    """Model turns taken (requests the agent made), as far as the agent knows."""
    detail: str = ""
    """Why it ended, for anything but `completed`: one line."""
    transcript: Path | None = None
    """The agent's transcript or output file in the trial folder, if any."""
    stop_reason: str = ""
    """For `completed`: e.g. 'no_tool_call', 'max_turns'."""
    waiting_for_endpoint: bool | None = None
    """For `timeout`: True when the time ran out while a request to the endpoint was in flight (the endpoint's
    time: unscored), False when it ran out in the model's own tool calls or CLI (the model's doing: the tree is
    graded), None when the agent cannot tell (the runner then asks the wire recorder, at `timed_out_at`)."""
    timed_out_at: float | None = None
    """For `timeout`: when the time ran out, on the `time.monotonic()` clock (None: the agent's deadline)."""
    signal: int | None = None
    """For `agent_error`: the signal that ended the agent's program when the harness sent none (the model's own
    commands sent it, e.g. `kill -9 $PPID`): the model's doing, so the tree is graded."""


class Agent:
    """What every agent is: subclass it, set `name`, implement `run`. Every other member is a capability
    (a class attribute) or an optional hook with a documented default, so the runner and the backends read
    and call each one on any agent and probe for none.

    A run's life, as the harness calls an agent:

        agent = load_agent(name)              # the registered class (or factory), made once per run
        agent.check_options(extra)            # once, before any trial: the run's --agent-opt values
        backend refuses agent.program?        # once: a backend may not run this CLI (docker: PyPI CLIs)
        agent.wire_api(base_url, key, opts)   # per trial, before the wire recorder starts (uses_model only)
        agent.run(ctx)                        # per trial: drive the model in the sandbox, return how it ended
    """

    name: str = ""
    """The name it is registered under (`--agent NAME`)."""
    uses_model: bool = True
    """False for agents that never call the endpoint (oracle, nop): no preflight, no wire log."""
    program: ClassVar[CliTool | None] = None
    """The CLI this agent drives (a `CliAgent`), else None. A CLI brings its own program and home from this
    machine: a backend may refuse it (docker runs npm CLIs only), and tasks with their own environment refuse
    every CLI."""

    def run(self, ctx: AgentContext) -> AgentOutcome:
        """Drive the model (or not) in `ctx.sandbox` until done, out of time or cancelled; return how it
        ended. Never raise for a problem of the model, the endpoint or the CLI: those are outcomes."""
        raise NotImplementedError(f"agent {self.name!r} does not implement run")

    def check_options(self, extra: dict[str, object]) -> None:
        """Called once before any trial with the run's `--agent-opt` values (`AgentOptions.extra`): raise
        AgenticEvalError with one line saying how to fix a bad value, rather than failing every trial. The
        default takes anything."""
        return None

    def wire_api(self, base_url: str, api_key: str, options: AgentOptions) -> str | None:
        """For an agent that speaks the Anthropic Messages API (claude-code): 'native' (the wire recorder passes
        `/v1/messages` through to the endpoint) or 'translate' (it translates to the endpoint's chat
        completions); the trial records the choice as `wire_api`. The default, None: requests are passed
        through as sent, nothing recorded."""
        return None


class _OlderAgent(Protocol):
    """A plugin agent of the older protocol, as far as the harness relies on it: its `run`."""

    def run(self, ctx: AgentContext) -> AgentOutcome: ...


class _ForeignAgent(Agent):
    """A plugin agent written to the older protocol (an object with `name`, `uses_model`, `run`, and the hooks
    it has), wrapped so that the harness calls the `Agent` contract on it directly."""

    def __init__(self, inner: _OlderAgent) -> None:
        self.inner = inner  # the plugin's own object: only its `run` is known to be there
        self.name = str(getattr(inner, "name", ""))
        self.uses_model = bool(getattr(inner, "uses_model", True))

    def run(self, ctx: AgentContext) -> AgentOutcome:
        outcome: AgentOutcome = self.inner.run(ctx)
        return outcome

    def check_options(self, extra: dict[str, object]) -> None:
        hook = getattr(self.inner, "check_options", None)
        if callable(hook):
            hook(extra)

    def wire_api(self, base_url: str, api_key: str, options: AgentOptions) -> str | None:
        hook = getattr(self.inner, "wire_api", None)
        return str(hook(base_url, api_key, options)) if callable(hook) else None


def available_agents() -> dict[str, Any]:
    """Name -> entry point of every registered agent (read in agentic_eval.plugins)."""
    from agentic_eval.plugins import agent_entry_points

    return agent_entry_points()


def load_agent(name: str) -> Agent:
    """Instantiate the agent registered as `name`."""
    eps = available_agents()
    if name not in eps:
        known = ", ".join(sorted(eps)) or "none"
        raise AgenticEvalError(f"unknown agent {name!r} (available: {known})")
    factory = eps[name].load()
    agent = factory()
    if isinstance(agent, Agent):
        return agent
    if callable(getattr(agent, "run", None)) and isinstance(getattr(agent, "name", None), str):
        return _ForeignAgent(agent)
    raise AgenticEvalError(f"agent {name!r} ({eps[name].value}) is not an agent: subclass agentic_eval.agents.Agent "
                           "(a `name` and a `run(ctx)` method)")

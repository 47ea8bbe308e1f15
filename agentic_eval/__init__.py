"""agentic-eval: will this model work as a coding agent's brain, and how fast?

The public face is the dozen names below (loaded on first use, so `agentic-eval --help` stays fast):

    from agentic_eval import Endpoint, load_tasks, start_run, summarize_run

    done = start_run(model="qwen3-coder", base_url="http://localhost:8000/v1", attempts=3)
    summary = summarize_run(done.run_dir)
    print(summary.passed_trials, "of", summary.scored_trials, "scored trials passed")

The parts, one subpackage each (every `__init__` lists its modules):

    packs        the task model, generated repos and their pristine store, scaffolding
    grading      what decides a verdict: running graders, the model's code apart, the final snapshot
    validation   checking graders before use (`validate`): pristine fails, fix passes, red team, leak scan
    agents       the Agent contract, the built-in loop (builtin/), the agent CLI adapters (adapters/)
    runner       runs: settings, planning and resume rules, a trial's life, start_run/resume_run
    results      what is written under runs/: record schemas, the trial log, the run folder and plan, instrument runs
    wire         the wire recorder and its log
    classify     real versus text-written tool calls, per model turn
    instruments  battery, form matrix, BFCL, probe, speed, think-check, cold start
    confine      the confinement: the sandbox-backend contract, and the local, bwrap and docker backends
    local        a small model served on 127.0.0.1 by llama.cpp
    report       reports from recorded runs: terminal, Markdown, JSON, HTML
    export       recorded runs for the field's tools: ATIF trajectories (Harbor), Inspect eval logs
    realpy       tasks planted in real Python projects: fetch, mutate, validate, hide the catching tests
    campaign     several models, agents and instruments from one TOML file, resumable, with a verdict per model
    cli          the command line, one module per command

and beside them: `endpoint` (the model endpoint), `faults` (which ends of an agent's run are the model's
doing, and whose fault the rest are),
`leftovers` (cleaning up after dead runs), `errors` (the exception tree), `inputs` (files an operator
names, read with a size cap and never a FIFO or a device), `plugins` (the entry-point groups), `testing`
(a scripted endpoint for plugin authors' tests), `paths` (cache and tool folders), `trees` (copy, walk and
remove a tree at any depth, never following links), `runfiles` (a run folder's files read safely),
`plural` ("1 trial", "2 trials").

Glossary: three things were all called "sandbox"; in code and docs they are now

    repo        the generated repository a trial's agent works in (`packs/sandbox.py`'s `Sandbox`, a
                generator from the `agentic_eval.generators` group, a task.toml's `[sandbox]` section)
    backend     the confinement every command of the model runs under (`--sandbox NAME`, a
                `SandboxBackend` from the `agentic_eval.backends` group, a trial record's `sandbox` field)
    image       the docker backend's container image (`agentic-eval sandbox build`)

The old spellings stay where recorded runs, task files and third-party packs use them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentic_eval._lazy import lazy_face
from agentic_eval._version import __version__ as __version__

if TYPE_CHECKING:
    from agentic_eval.agents import Agent as Agent
    from agentic_eval.agents import AgentContext as AgentContext
    from agentic_eval.agents import AgentOutcome as AgentOutcome
    from agentic_eval.agents import CliAgent as CliAgent
    from agentic_eval.classify import classify_turn as classify_turn
    from agentic_eval.endpoint import Endpoint as Endpoint
    from agentic_eval.errors import AgenticEvalError as AgenticEvalError
    from agentic_eval.local import LocalServer as LocalServer
    from agentic_eval.packs import Task as Task
    from agentic_eval.packs import load_tasks as load_tasks
    from agentic_eval.report import summarize_run as summarize_run
    from agentic_eval.runner import resume_run as resume_run
    from agentic_eval.runner import start_run as start_run
    from agentic_eval.validation import validate_tasks as validate_tasks

_EXPORTS = {
    "AgenticEvalError": "agentic_eval.errors",
    "Endpoint": "agentic_eval.endpoint",
    "Task": "agentic_eval.packs",
    "load_tasks": "agentic_eval.packs",
    "validate_tasks": "agentic_eval.validation",
    "Agent": "agentic_eval.agents",
    "AgentContext": "agentic_eval.agents",
    "AgentOutcome": "agentic_eval.agents",
    "CliAgent": "agentic_eval.agents",
    "start_run": "agentic_eval.runner",
    "resume_run": "agentic_eval.runner",
    "summarize_run": "agentic_eval.report",
    "classify_turn": "agentic_eval.classify",
    "LocalServer": "agentic_eval.local",
}
__all__ = [  # the public face; tests/test_layout.py checks it against _EXPORTS
    "Agent",
    "AgentContext",
    "AgentOutcome",
    "AgenticEvalError",
    "CliAgent",
    "Endpoint",
    "LocalServer",
    "Task",
    "__version__",
    "classify_turn",
    "load_tasks",
    "resume_run",
    "start_run",
    "summarize_run",
    "validate_tasks",
]
__getattr__, __dir__ = lazy_face(__name__, _EXPORTS)

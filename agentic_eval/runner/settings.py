"""A run's settings as one frozen object, from the CLI (or a Python caller) through planning, resume and
the trial runner.

Two kinds of setting: what a run *measures* (model, agent and its options, tasks, seed, attempts, the
sandbox backend's name) is recorded in run.json and kept by `--resume`, which refuses to change it; *how*
it runs (the endpoint's URL and key, `-j`, where runs go, the backend's own options such as docker's
engines, keeping sandboxes) may change between sessions. A backend's and an agent's own options travel
inside the settings as theirs (`SandboxChoice.options`, `AgentOptions`), never as keywords of every
function.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentic_eval.agents.base import AgentOptions
from agentic_eval.errors import AgenticEvalError

if TYPE_CHECKING:
    from agentic_eval.results.records import RunConfig


DOCKER_ALIASES = ("hosts", "image", "base_image", "base_image_packages")
"""docker's options that have flags of their own (`--docker-host`, `--image`, `--base-image`,
`--base-image-packages`) and campaign-file keys (`base_image`, `base_image_packages`): aliases of
`--sandbox-opt KEY=VALUE` that name the docker sandbox when no other is named."""


@dataclass(frozen=True)
class SandboxChoice:
    """Which backend confines a run's commands (None: bwrap where it works, else local, with a warning),
    and that backend's own options (checked by its `Options` when it is made)."""

    name: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, name: str | None, options: Mapping[str, Any] | None = None, **docker: Any) -> SandboxChoice:
        """The one place docker's aliases become its options: `options` (`--sandbox-opt`, a `[sandbox]` table)
        with the `DOCKER_ALIASES` given (a value that is not None or empty) added, which name docker when
        `name` is None. An alias and the same `--sandbox-opt` key both given is one line of error."""
        unknown = sorted(set(docker) - set(DOCKER_ALIASES))
        if unknown:
            raise TypeError(f"unknown docker alias {', '.join(unknown)}")
        given = {k: (tuple(v) if isinstance(v, list | tuple) else v) for k, v in docker.items() if v}
        twice = sorted(set(given) & set(options or {}))
        if twice:
            raise AgenticEvalError(f"docker's {twice[0]} is given twice (its flag and --sandbox-opt {twice[0]}=): give "
                                   "it once")
        merged = {**(options or {}), **given}
        return cls("docker" if given and name is None else name, merged)


def _kept(flag: str, normal: Any = None) -> Any:
    """Field metadata: a setting the run records and `--resume` keeps; `flag` names it in errors; `normal`
    puts a value in the form two values are compared in."""
    return {"kept": flag, "normal": normal or (lambda value: value)}


@dataclass(frozen=True)
class RunSettings:
    """Everything a run is started or resumed with. Build one from keywords with `RunSettings.of`."""

    # what the run measures: recorded, and kept by --resume
    model: str | None = field(default=None, metadata=_kept("--model"))
    agent: str = field(default="builtin", metadata=_kept("--agent"))
    seed: int = field(default=0, metadata=_kept("--seed"))
    attempts: int = field(default=1, metadata=_kept("--attempts"))
    agent_options: AgentOptions = field(default_factory=AgentOptions, metadata=_kept("(see AGENT_OPTION_FLAGS)"))
    """The agent's options: the builtin agent's padding, lenient text calls and streaming, and `--agent-opt`."""
    task_ids: tuple[str, ...] = field(default=(), metadata=_kept("--task", lambda ids: sorted(ids)))
    sandbox: SandboxChoice = field(default_factory=SandboxChoice,
                                   metadata=_kept("--sandbox", lambda choice: choice.name))
    # how it runs: may change on resume
    tasks: tuple[str, ...] | None = None
    """Pack (or task) folders, resolved (a pack's name becomes its folder); None: the built-in and installed
    packs."""
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    jobs: int = 1
    runs_root: Path = Path("runs")
    keep_sandboxes: bool = False
    ray_address: str | None = None
    """`--ray`: run each trial as a task on this Ray cluster (agentic_eval.runner.cluster); None: here."""
    agent_timeout_s: float | None = None
    """`--agent-timeout`: the agent's time limit in seconds for every task, in place of the task's own."""

    @classmethod
    def of(cls, *, system_prompt_tokens: int | None = None, lenient_text_calls: bool = False, stream: bool = False,
           emulate_parser: str | None = None, agent_options: Mapping[str, Any] | AgentOptions | None = None,
           sandbox: str | SandboxChoice | None = None,
           docker_hosts: Sequence[str] = (), image: str | None = None, tasks: Sequence[str | Path] | None = None,
           task_ids: Sequence[str] = (), runs_root: str | Path = "runs", **plain: Any) -> RunSettings:
        """Settings from the flat keywords `start_run` has always taken: the builtin agent's options and
        `agent_options` (a dict of `--agent-opt` values) become an `AgentOptions`; `sandbox` (a name or a
        `SandboxChoice` with the backend's own options), with `docker_hosts` and `image` (docker's aliases), a
        `SandboxChoice`; the rest are fields of their own name."""
        from agentic_eval.packs.task import pack_folder

        if isinstance(agent_options, AgentOptions):
            options = agent_options
        else:
            if emulate_parser:
                from agentic_eval.classify.diagnosis import resolve_parser

                emulate_parser = resolve_parser(emulate_parser)
            options = AgentOptions(system_prompt_tokens=system_prompt_tokens, lenient_text_calls=lenient_text_calls,
                                   stream=stream, emulate_parser=emulate_parser or None,
                                   extra=dict(agent_options or {}))
        choice = sandbox if isinstance(sandbox, SandboxChoice) else SandboxChoice.of(sandbox, hosts=docker_hosts,
                                                                                     image=image)
        unknown = sorted(set(plain) - {f.name for f in fields(cls)})
        if unknown:
            raise TypeError(f"unknown run setting {', '.join(unknown)}")
        return cls(agent_options=options, sandbox=choice, runs_root=Path(runs_root), task_ids=tuple(task_ids),
                   tasks=tuple(str(pack_folder(p)) for p in tasks) if tasks else None, **plain)

    @classmethod
    def recorded(cls, config: RunConfig) -> RunSettings:
        """What a recorded run measures (its run.json), as settings; how it ran is left at the defaults."""
        return cls(model=config.model, agent=config.agent, task_ids=tuple(config.task_ids), seed=config.seed,
                   attempts=config.attempts, sandbox=SandboxChoice(config.sandbox or None),
                   agent_options=AgentOptions(system_prompt_tokens=config.system_prompt_tokens,
                                              lenient_text_calls=config.lenient_text_calls, stream=config.stream,
                                              emulate_parser=config.emulate_parser,
                                              extra=dict(config.agent_options)),
                   tasks=tuple(config.task_paths) or None)

    def changes(self, other: RunSettings) -> list[str]:
        """The flags of the kept settings that differ between the two (what a resume may not change)."""
        changed = []
        for f in fields(self):
            if "kept" not in f.metadata:
                continue
            mine, theirs = getattr(self, f.name), getattr(other, f.name)
            if f.name == "agent_options":
                changed += [flag for name, flag in AGENT_OPTION_FLAGS.items()
                            if getattr(mine, name) != getattr(theirs, name)]
            elif f.metadata["normal"](mine) != f.metadata["normal"](theirs):
                changed.append(f.metadata["kept"])
        return changed

    def resumed_with(self, given: Mapping[str, Any]) -> RunSettings:
        """A recorded run's settings (`self`) with what a resume was given (`RunSettings.of` keywords): a
        setting it measures must equal the recorded one (an error naming the flags otherwise; a flag left
        unset, None, False or empty, is not given); how it runs is taken as given."""
        asked = RunSettings.of(**given)
        if asked.model and asked.model != self.model:
            raise AgenticEvalError(f"--resume: this run is for model {self.model!r}, not {asked.model!r}")
        requested = {name: getattr(asked, name) for name in ("agent", "seed", "attempts")
                     if given.get(name) is not None}
        mine, theirs = self.agent_options, asked.agent_options
        requested["agent_options"] = replace(mine, **{
            name: getattr(theirs, name) for name in AGENT_OPTION_FLAGS if getattr(theirs, name)})
        if asked.task_ids:
            requested["task_ids"] = asked.task_ids
        if asked.sandbox.name is not None and self.sandbox.name is not None:  # older runs recorded none
            requested["sandbox"] = asked.sandbox
        if changed := self.changes(replace(self, **requested)):
            raise AgenticEvalError(f"--resume keeps the run's settings; drop {', '.join(changed)} (to change them, "
                                   "start a new run)")
        how = {f.name: getattr(asked, f.name) for f in fields(self)
               if "kept" not in f.metadata and given.get(f.name) is not None}
        how["sandbox"] = SandboxChoice(self.sandbox.name or asked.sandbox.name, asked.sandbox.options)
        return replace(self, **how)


AGENT_OPTION_FLAGS = {"system_prompt_tokens": "--system-prompt-tokens", "lenient_text_calls": "--lenient-text-calls",
                      "stream": "--stream", "emulate_parser": "--emulate-parser", "extra": "--agent-opt"}
"""The flag of each `AgentOptions` field, for resume's errors."""

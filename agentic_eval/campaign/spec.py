"""A campaign file (TOML) read into a `CampaignSpec`, and every mistake in it as one line naming the file and key.

    tasks = ["json-set-port"]            # or packs = ["core", "./mypack"]; default: every built-in task
    agents = ["builtin", "opencode"]
    attempts = 1
    system_prompt_tokens = [0, 9300]     # the built-in agent's padding, one run each (0: none)
    instruments = ["tooling", "forms", "speed", "think_check"]

    [[models]]
    name = "qwen3-coder"
    base_url = "http://gpu-box:8000/v1"
    api_key_env = "VLLM_KEY"             # or api_key_file; never the key itself

Instruments are named as the instrument registry names them (`agentic_eval.instruments.registry`; an old
spelling such as "think-check" is still read, with a note), and each has a table of its own, its module's
OPTIONS (`[tooling] cases = 370`, `[speed] reps = 5`, ...): `spec_model()` is CampaignSpec with those tables.
Reading a file checks its shape only; `campaign.execute.plan_campaign` checks what needs the world (endpoints,
tasks).
"""

from __future__ import annotations

import difflib
import functools
import re
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    create_model,
    field_validator,
    model_validator,
)

from agentic_eval.errors import AgenticEvalError
from agentic_eval.inputs import given_value

if TYPE_CHECKING:
    from agentic_eval.instruments.registry import CampaignOptions, InstrumentEntry
    from agentic_eval.runner.settings import SandboxChoice

MAX_FILE_BYTES = 1_000_000

_STRICT = ConfigDict(extra="forbid", frozen=True)


def _campaign_kinds() -> list[str]:
    from agentic_eval.instruments.registry import campaign_entries

    return [e.kind for e in campaign_entries()]


class ModelSpec(BaseModel):
    """One `[[models]]` entry: a model an endpoint serves, or `local = true` for the packaged small model."""

    model_config = _STRICT
    name: str = Field(min_length=1, max_length=200)
    """What the endpoint serves (with `local`: the label the report shows)."""
    base_url: str | None = None
    api_key_env: str | None = Field(default=None, min_length=1, max_length=200)
    api_key_file: str | None = Field(default=None, min_length=1, max_length=4096)
    local: bool = False
    gguf: str | None = None
    """With `local`: serve this GGUF instead of the packaged model."""
    ctx: int = Field(default=16384, ge=512, le=2_000_000)
    """With `local`: the context size."""
    jobs: int = Field(default=1, ge=1, le=256)
    """Trials run in parallel against this model's endpoint (`run -j`)."""

    @model_validator(mode="after")
    def _one_endpoint(self) -> ModelSpec:
        if self.local and self.base_url:
            raise ValueError("local = true serves its own model on 127.0.0.1: drop base_url (or drop local)")
        if self.api_key_env and self.api_key_file:
            raise ValueError("give the key once: api_key_env or api_key_file, not both")
        if not self.local and self.gguf:
            raise ValueError("gguf is for local = true")
        return self


class SandboxTable(BaseModel):
    """`[sandbox]`: the backend (`run --sandbox`) and its own options (`run --sandbox-opt KEY=VALUE`), e.g.
    `name = "docker"` and `options = { hosts = ["unix:///run/docker.sock"] }`; checked by the backend's options
    model when the file is read."""

    model_config = _STRICT
    name: str | None = Field(default=None, min_length=1, max_length=100)
    """The backend's registered name (bwrap, docker, local, or a plugin's); unset: bwrap where it works."""
    options: dict[str, Any] = {}
    """The backend's own options (docs/sandboxes.md lists each backend's)."""

    @model_validator(mode="after")
    def _its_options(self) -> SandboxTable:
        """A named backend's options, checked by its own model now rather than at the first run."""
        if self.name is not None and self.options:
            from agentic_eval.confine.registry import backend_class

            try:
                backend_class(self.name).check_options(self.options)
            except AgenticEvalError as exc:
                raise ValueError(str(exc).replace(f"--sandbox {self.name}: ", "").replace(
                    "; give --sandbox-opt KEY=VALUE", "")) from None
        return self


class CampaignSpec(BaseModel):
    """What a campaign measures. Paths in it (packs, api_key_file, gguf) are relative to the file."""

    model_config = _STRICT
    tasks: list[str] = []
    """Task ids (default: every task of the packs)."""
    packs: list[str] = []
    """Pack folders, or a built-in or installed pack's name (default: the built-in and installed packs)."""
    agents: list[str] = Field(default=["builtin"], max_length=50)
    attempts: int = Field(default=1, ge=1, le=1000)
    seed: int = Field(default=0, ge=0, le=2**31 - 1)
    system_prompt_tokens: list[int] = Field(default=[0], min_length=1, max_length=20)
    """The built-in agent's padding, one run each (0: no padding); other agents run once."""
    instruments: list[str] = Field(default_factory=_campaign_kinds)
    """By their names in the instrument registry (default: every one that runs in a campaign)."""
    sandbox: SandboxTable | None = None
    """The sandbox backend's name (`sandbox = "docker"`), or a `[sandbox]` table with its options."""
    base_image: str | None = Field(default=None, min_length=1, max_length=300)
    """For tasks that bring their own Dockerfile: build every outside FROM on this image (`suite`: the suite's
    own), as `run --base-image`; it implies `sandbox = "docker"`."""
    base_image_packages: list[str] = Field(default=[], max_length=100)
    """With base_image = "suite": Debian packages added to the stand-in image (e.g. ["python3-pip", "gcc",
    "curl"]), as `run --base-image-packages`."""
    agent_timeout_s: float | None = Field(default=None, ge=1, le=7 * 24 * 3600)
    """The agent's time limit in seconds for every task, in place of the task's own (`run --agent-timeout`)."""
    ray_address: str | None = Field(default=None, min_length=1, max_length=300)
    """Run every agent run's trials on this Ray cluster (`run --ray`); unset: on this machine."""
    agent_options: dict[str, dict[str, str | int | float | bool]] = {}
    """Per agent, its `--agent-opt` values: `[agent_options.builtin] max_turns = 30`."""
    emulate_parser: str | None = Field(default=None, min_length=1, max_length=100)
    """An engine tool parser ('hermes', 'vllm:qwen3_coder', 'sglang:qwen25', ...): every agent run is made twice,
    plain and with the parser emulated by the wire recorder (`run --emulate-parser`), so the verdict can say what
    fixing the server would change. Unset: plain runs only."""
    models: list[ModelSpec] = Field(min_length=1, max_length=100)
    _notes: list[str] = PrivateAttr(default_factory=list)

    @field_validator("instruments")
    @classmethod
    def _known_instruments(cls, value: list[str]) -> list[str]:
        from agentic_eval.instruments.registry import named

        kinds = _campaign_kinds()
        for name in value:
            if named(name) is None:
                hint = _did_you_mean(name, kinds)
                raise ValueError(f"unknown instrument {name!r}{hint}; choose from {', '.join(kinds)}")
        return list(dict.fromkeys(e.kind for name in value if (e := named(name)) is not None))

    @field_validator("sandbox", mode="before")
    @classmethod
    def _sandbox_by_name(cls, value: Any) -> Any:
        return {"name": value} if isinstance(value, str) else value

    @field_validator("emulate_parser")
    @classmethod
    def _known_parser(cls, value: str | None) -> str | None:
        if value is None:
            return value
        from agentic_eval.classify.diagnosis import resolve_parser

        try:
            return resolve_parser(value)
        except AgenticEvalError as exc:
            raise ValueError(str(exc).removeprefix("--emulate-parser ")) from None

    @field_validator("base_image")
    @classmethod
    def _base_image(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return value
        if value.split() != [value]:
            raise ValueError(f"{value!r} is not an image name: give one without spaces (\"suite\": the suite's own "
                             "image; or one the Docker engine has, e.g. \"python:3.12-slim\")")
        table = info.data.get("sandbox")
        sandbox = table.name if isinstance(table, SandboxTable) else None
        if sandbox not in (None, "docker"):
            raise ValueError(f"it is for the docker sandbox, not sandbox = {sandbox!r}: drop sandbox (base_image "
                             "implies docker) or base_image")
        return value

    @field_validator("base_image_packages")
    @classmethod
    def _packages(cls, value: list[str], info: ValidationInfo) -> list[str]:
        from agentic_eval.confine.docker_image import check_packages

        try:
            check_packages(value, info.data.get("base_image"))
        except AgenticEvalError as exc:
            raise ValueError(str(exc).replace("--base-image-packages", "base_image_packages").replace(
                "pass --base-image suite", 'set base_image = "suite"')) from None
        return value

    @field_validator("system_prompt_tokens")
    @classmethod
    def _tokens(cls, value: list[int]) -> list[int]:
        if any(not 0 <= v <= 2_000_000 for v in value):
            raise ValueError("each size is between 0 (no padding) and 2,000,000 tokens")
        return list(dict.fromkeys(value))

    @model_validator(mode="after")
    def _distinct(self) -> CampaignSpec:
        names = [m.name for m in self.models]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"model {twice[0]!r} is listed twice; give each [[models]] its own name")
        return self

    @model_validator(mode="after")
    def _one_sandbox(self) -> CampaignSpec:
        try:
            self.sandbox_choice()
        except AgenticEvalError as exc:  # a key of the table given again as base_image
            raise ValueError(str(exc).replace("its flag and --sandbox-opt", "its key and [sandbox] options")) from None
        return self

    def sandbox_choice(self) -> SandboxChoice:
        """The sandbox backend and its options: the `[sandbox]` table (or `sandbox = NAME`) with the file's
        base_image keys, docker's aliases (they name docker when no sandbox is named, as `run --base-image`)."""
        from agentic_eval.runner.settings import SandboxChoice

        table = self.sandbox or SandboxTable()
        return SandboxChoice.of(table.name, table.options, base_image=self.base_image,
                                base_image_packages=self.base_image_packages)

    def sandbox_options(self) -> dict[str, Any]:
        """The sandbox backend's own options the file gives."""
        return dict(self.sandbox_choice().options)

    def sandbox_name(self) -> str | None:
        """The sandbox backend: as given, else docker when base_image asks for it (as `run --base-image` does)."""
        return self.sandbox_choice().name

    def kinds(self) -> list[str]:
        """The instruments to run, by their names (the kinds their runs are recorded under)."""
        return list(self.instruments)

    def options(self, kind: str) -> CampaignOptions:
        """The instrument's table in the file (its defaults when the file has none); KeyError for a name that is no
        campaign instrument's."""
        if kind not in type(self).model_fields or kind in CampaignSpec.model_fields:
            raise KeyError(f"{kind!r} is not an instrument a campaign runs")
        return cast("CampaignOptions", getattr(self, kind))

    @property
    def notes(self) -> list[str]:
        """What the file should say otherwise, though it is read (an instrument's old spelling), one line each."""
        return list(self._notes)

    @model_validator(mode="wrap")  # type: ignore[arg-type]  # mypy infers Never beside the after-validators
    @classmethod
    def _old_spellings(cls, data: object, handler: ModelWrapValidatorHandler[CampaignSpec]) -> CampaignSpec:
        """A note for each instrument name or table the file spells the old way (read as the new one)."""
        spec = handler(data)
        if isinstance(data, dict):
            spec._notes[:] = deprecated_spellings(data)
        return spec

    def options_of(self, agent: str) -> dict[str, str]:
        """The agent's options as `--agent-opt` gives them (text)."""
        return {k: str(v).lower() if isinstance(v, bool) else str(v)
                for k, v in self.agent_options.get(agent, {}).items()}

    def paddings(self, agent: str) -> list[int]:
        return self.system_prompt_tokens if agent == "builtin" else [0]


def _did_you_mean(word: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def deprecated_spellings(data: dict[str, object]) -> list[str]:
    """A line for each instrument the file `data` names by an old spelling (in `instruments` or as a table)."""
    from agentic_eval.instruments.registry import named

    listed = data.get("instruments")
    names = [n for n in listed if isinstance(n, str)] if isinstance(listed, list) else []
    notes = []
    for name in dict.fromkeys([*names, *data]):
        found = named(name)
        if found is not None and name != found.kind:
            notes.append(f"{name!r} is the old spelling of the instrument {found.kind!r}: write {found.kind!r} "
                         f"(in instruments, and [{found.kind}] for its table); the old one is still read")
    return notes


@functools.cache
def _spec_model(entries: tuple[InstrumentEntry, ...]) -> type[CampaignSpec]:
    fields: dict[str, Any] = {}
    for e in entries:
        if clash := {e.kind, *e.old_names} & set(CampaignSpec.model_fields):
            raise ValueError(f"the instrument {e.kind!r} is named as a campaign file's own key {clash.pop()!r}")
        options = cast("type[BaseModel]", e.load_campaign().OPTIONS)
        fields[e.kind] = (options, Field(default_factory=options,
                                         validation_alias=AliasChoices(e.kind, *e.old_names)))
    return create_model("CampaignSpec", __base__=CampaignSpec, __module__=__name__, **fields)


def spec_model() -> type[CampaignSpec]:
    """The campaign file's model: CampaignSpec with a table per instrument of the registry that runs in a campaign
    (`[tooling]`, `[think_check]`, ...), each its instrument's OPTIONS."""
    from agentic_eval.instruments.registry import campaign_entries

    return _spec_model(campaign_entries())


def _keys_at(loc: tuple[Any, ...]) -> list[str]:
    """The keys a table at `loc` may hold (for did-you-mean)."""
    if not loc:
        return list(spec_model().model_fields)
    if loc[0] == "models":
        return list(ModelSpec.model_fields)
    from agentic_eval.instruments.registry import named

    found = named(str(loc[0]))
    return list(cast("type[BaseModel]", found.load_campaign().OPTIONS).model_fields) if found else []


def _where(loc: tuple[Any, ...], data: dict[str, Any]) -> str:
    """`models[2] (name 'x').base_url` for an error's location (models counted from 1, as a reader counts)."""
    parts: list[str] = []
    for i, part in enumerate(loc):
        if isinstance(part, int) and i and loc[i - 1] == "models":
            entry = (data.get("models") or [None] * (part + 1))[part]
            name = entry.get("name") if isinstance(entry, dict) else None
            parts[-1] += f"[{part + 1}]" + (f" (name {name!r})" if isinstance(name, str) else "")
        elif isinstance(part, int):
            parts[-1] += f"[{part + 1}]"
        else:
            parts.append(str(part))
    return ".".join(parts)


def _one_line(path: Path, exc: ValidationError, data: dict[str, Any]) -> str:
    error = exc.errors()[0]
    loc = tuple(error.get("loc", ()))
    if error["type"] == "extra_forbidden":
        key, parent = str(loc[-1]), loc[:-1]
        if key in ("api_key", "key", "token"):
            return (f"{path}: {_where(loc, data)}: a campaign file never holds a key; name the variable that holds "
                    "it (api_key_env = \"VLLM_KEY\") or a file (api_key_file = \"~/.vllm-key\")")
        hint = _did_you_mean(key, _keys_at(tuple(p for p in parent if not isinstance(p, int))))
        return f"{path}: unknown key {_where(loc, data)}{hint}"
    if error["type"] == "missing":
        if loc == ("models",):
            return f"{path}: no [[models]]: add at least one ([[models]] name = ... base_url = ...)"
        return f"{path}: {_where(loc, data)} is missing"
    message = re.sub(r"^(Value|Assertion) error, ", "", str(error["msg"]))
    return f"{path}: {_where(loc, data) or 'file'}: {message}{given_value(error)}"


def parse_campaign(text: str, path: Path) -> CampaignSpec:
    """The campaign in `text` (the contents of `path`, named in errors)."""
    from agentic_eval.inputs import loads_toml

    try:
        data = loads_toml(text)
    except tomllib.TOMLDecodeError as exc:
        raise AgenticEvalError(f"{path}: not valid TOML ({exc})") from None
    try:
        return spec_model().model_validate(data)
    except ValidationError as exc:
        raise AgenticEvalError(_one_line(path, exc, data)) from None


def load_campaign(path: str | Path) -> CampaignSpec:
    """Read and check a campaign file (a regular UTF-8 file of at most a megabyte)."""
    from agentic_eval.inputs import read_data_text

    path = Path(path)
    return parse_campaign(read_data_text(path, what=str(path), limit=MAX_FILE_BYTES), path)

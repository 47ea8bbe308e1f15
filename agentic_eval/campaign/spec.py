"""A campaign file (TOML) read into a `CampaignSpec`, and every mistake in it as one line naming the file and key.

    tasks = ["json-set-port"]            # or packs = ["core", "./mypack"]; default: every built-in task
    agents = ["builtin", "opencode"]
    attempts = 1
    system_prompt_tokens = [0, 9300]     # the built-in agent's padding, one run each (0: none)
    instruments = ["tooling", "forms", "speed", "think-check"]

    [[models]]
    name = "qwen3-coder"
    base_url = "http://gpu-box:8000/v1"
    api_key_env = "VLLM_KEY"             # or api_key_file; never the key itself

Instrument settings have tables of their own (`[tooling] cases = 370`, `[speed] reps = 5`, ...). Reading a
file checks its shape only; `campaign.execute.check_campaign` checks what needs the world (endpoints, tasks).
"""

from __future__ import annotations

import difflib
import re
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from agentic_eval.errors import AgenticEvalError

if TYPE_CHECKING:
    from agentic_eval.runner.settings import SandboxChoice

MAX_FILE_BYTES = 1_000_000
INSTRUMENT_KINDS = {"tooling": "tooling", "forms": "forms", "speed": "speed", "think-check": "think_check"}
"""The instruments a campaign runs, as the file names them -> the kind they are recorded under."""

_STRICT = ConfigDict(extra="forbid", frozen=True)


class ToolingOptions(BaseModel):
    model_config = _STRICT
    seed: int = Field(default=45739, ge=0, le=2**31 - 1)
    cases: int | None = Field(default=None, ge=1, le=100_000)
    """Total cases (default 370, the published battery)."""
    runs: int = Field(default=1, ge=1, le=20)
    """Runs of the battery per model: with two or more, the noise band is their measured spread."""
    jobs: int = Field(default=4, ge=1, le=256)


class FormsOptions(BaseModel):
    model_config = _STRICT
    tools: int = Field(default=500, ge=1, le=5000)
    max_tokens: int = Field(default=4096, ge=16, le=1_000_000)
    """Output cap per shape; lower it on a CPU-served model (15 shapes run one after another)."""
    timeout_s: float = Field(default=600.0, gt=0, le=86_400)
    """Time limit per shape: the matrix takes at most 15 times this."""


class SpeedOptions(BaseModel):
    model_config = _STRICT
    workloads: list[Literal["code_edit", "free_gen", "long_ctx"]] = ["code_edit", "free_gen", "long_ctx"]
    reps: int = Field(default=5, ge=1, le=1000)
    warmup: int = Field(default=1, ge=0, le=1000)
    max_tokens: int = Field(default=256, ge=2, le=2_000_000)
    long_ctx_tokens: int = Field(default=50000, ge=256, le=2_000_000)


class ThinkCheckOptions(BaseModel):
    model_config = _STRICT
    problems: int = Field(default=20, ge=1, le=10_000)
    seed: int = Field(default=0, ge=0, le=2**31 - 1)


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
    instruments: list[str] = list(INSTRUMENT_KINDS)
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
    tooling: ToolingOptions = ToolingOptions()
    forms: FormsOptions = FormsOptions()
    speed: SpeedOptions = SpeedOptions()
    think_check: ThinkCheckOptions = Field(default=ThinkCheckOptions(), alias="think-check")

    @field_validator("instruments")
    @classmethod
    def _known_instruments(cls, value: list[str]) -> list[str]:
        for name in value:
            if name not in INSTRUMENT_KINDS:
                hint = _did_you_mean(name, list(INSTRUMENT_KINDS))
                raise ValueError(f"unknown instrument {name!r}{hint}; choose from {', '.join(INSTRUMENT_KINDS)}")
        return list(dict.fromkeys(value))

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
        """The instruments to run, as recorded kinds."""
        return [INSTRUMENT_KINDS[name] for name in self.instruments]

    def options_of(self, agent: str) -> dict[str, str]:
        """The agent's options as `--agent-opt` gives them (text)."""
        return {k: str(v).lower() if isinstance(v, bool) else str(v)
                for k, v in self.agent_options.get(agent, {}).items()}

    def paddings(self, agent: str) -> list[int]:
        return self.system_prompt_tokens if agent == "builtin" else [0]


def _did_you_mean(word: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


_SECTIONS: dict[str, type[BaseModel]] = {"tooling": ToolingOptions, "forms": FormsOptions, "speed": SpeedOptions,
                                        "think-check": ThinkCheckOptions}


def _keys_at(loc: tuple[Any, ...]) -> list[str]:
    """The keys a table at `loc` may hold (for did-you-mean)."""
    if not loc:
        return [f.alias or name for name, f in CampaignSpec.model_fields.items()]
    if loc[0] == "models":
        return list(ModelSpec.model_fields)
    model = _SECTIONS.get(str(loc[0]))
    return list(model.model_fields) if model else []


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
    return f"{path}: {_where(loc, data) or 'file'}: {message}"


def parse_campaign(text: str, path: Path) -> CampaignSpec:
    """The campaign in `text` (the contents of `path`, named in errors)."""
    from agentic_eval.inputs import loads_toml

    try:
        data = loads_toml(text)
    except tomllib.TOMLDecodeError as exc:
        raise AgenticEvalError(f"{path}: not valid TOML ({exc})") from None
    try:
        return CampaignSpec.model_validate(data)
    except ValidationError as exc:
        raise AgenticEvalError(_one_line(path, exc, data)) from None


def load_campaign(path: str | Path) -> CampaignSpec:
    """Read and check a campaign file (a regular UTF-8 file of at most a megabyte)."""
    from agentic_eval.inputs import read_data_text

    path = Path(path)
    return parse_campaign(read_data_text(path, what=str(path), limit=MAX_FILE_BYTES), path)

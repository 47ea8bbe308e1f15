"""A sandbox backend's own options: a pydantic model per backend (`SandboxBackend.Options`), filled from
`--sandbox-opt KEY=VALUE` (text), a campaign file's `[sandbox]` table (TOML values) or Python, and checked when
the backend is made, so a bad key or value is one line naming it and what the backend takes."""

from __future__ import annotations

import typing
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from agentic_eval.errors import AgenticEvalError

Opts = TypeVar("Opts", bound="BackendOptions")


class BackendOptions(BaseModel):
    """The options of a backend that takes none. A backend with options subclasses this with one field per option
    (a docstring under each: `--help`-like text for docs) and names the subclass as its `Options`. Text from the
    command line is read as the field's type: a whole number, true/false, and a comma-separated list (or the key
    given again) for a list field."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _lists_from_text(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        out = dict(data)
        for key, value in data.items():
            field = cls.model_fields.get(key)
            if field is not None and isinstance(value, str) and _is_sequence(field.annotation):
                out[key] = [part.strip() for part in value.split(",") if part.strip()]
        return out

    @classmethod
    def of(cls: type[Opts], given: Mapping[str, Any] | None, backend: str) -> Opts:
        """The options `given` (None: none) checked; `AgenticEvalError`, one line, for an unknown key or a bad
        value, naming the keys the backend takes."""
        try:
            return cls.model_validate(dict(given or {}))
        except ValidationError as exc:
            raise AgenticEvalError(options_problem(exc, cls, backend)) from None


def _is_sequence(annotation: Any) -> bool:
    kinds = [annotation, *typing.get_args(annotation)]
    return any(typing.get_origin(kind) in (list, tuple, set, frozenset) for kind in kinds)


def options_problem(exc: ValidationError, model: type[BaseModel], backend: str) -> str:
    """A pydantic error on a backend's options as one line: the key, what is wrong, what the backend takes."""
    takes = ", ".join(model.model_fields) or "no options"
    first = exc.errors()[0]
    key = ".".join(str(p) for p in first.get("loc", ())) or "?"
    if first.get("type") == "extra_forbidden" and not model.model_fields:
        return f"--sandbox {backend}: unknown option {key!r}: this backend takes no options; drop --sandbox-opt"
    if first.get("type") == "extra_forbidden":
        return f"--sandbox {backend}: unknown option {key!r} (it takes: {takes}); give --sandbox-opt KEY=VALUE"
    message = str(first.get("msg", "invalid")).removeprefix("Value error, ")
    return f"--sandbox {backend}: option {key}: {message} (it takes: {takes})"

"""Backend-owned options: each backend's pydantic model, filled from text (`--sandbox-opt`), TOML or Python, checked
when the backend is made; docker's flags as aliases filled in one place (`SandboxChoice.of`); capabilities as
class attributes."""

from __future__ import annotations

import argparse

import pytest

from agentic_eval.cli.args import sandbox_choice
from agentic_eval.confine.docker import DockerBackend, DockerOptions
from agentic_eval.confine.host import BwrapBackend, LocalBackend
from agentic_eval.confine.registry import get_backend
from agentic_eval.errors import AgenticEvalError
from agentic_eval.runner.settings import RunSettings, SandboxChoice


def _args(*argv: str) -> argparse.Namespace:
    from agentic_eval.cli import build_parser

    return build_parser().parse_args(["run", *argv])


@pytest.mark.parametrize(("argv", "expected"), [
    ((), SandboxChoice(None, {})),
    (("--sandbox", "local"), SandboxChoice("local", {})),
    (("--sandbox-opt", "image=mine", "--sandbox", "docker"), SandboxChoice("docker", {"image": "mine"})),
    (("--docker-host", "unix:///a.sock", "--docker-host", "unix:///b.sock"),
     SandboxChoice("docker", {"hosts": ("unix:///a.sock", "unix:///b.sock")})),
    (("--sandbox", "docker", "--sandbox-opt", "hosts=unix:///a.sock", "--sandbox-opt", "hosts=unix:///b.sock"),
     SandboxChoice("docker", {"hosts": ["unix:///a.sock", "unix:///b.sock"]})),
    (("--base-image", "suite", "--base-image-packages", "gcc,curl"),
     SandboxChoice("docker", {"base_image": "suite", "base_image_packages": ("gcc", "curl")})),
])
def test_the_cli_fills_the_choice_and_docker_flags_are_aliases(argv: tuple[str, ...], expected: SandboxChoice) -> None:
    assert sandbox_choice(_args(*argv)) == expected


def test_an_alias_and_its_sandbox_opt_together_are_one_line() -> None:
    with pytest.raises(AgenticEvalError, match="docker's image is given twice"):
        sandbox_choice(_args("--image", "a", "--sandbox-opt", "image=b"))
    with pytest.raises(AgenticEvalError, match="--sandbox-opt 'image': use KEY=VALUE"):
        sandbox_choice(_args("--sandbox-opt", "image"))


def test_python_callers_keep_docker_hosts_and_image() -> None:
    settings = RunSettings.of(model="m", docker_hosts=["unix:///a.sock"], image="mine")
    assert settings.sandbox == SandboxChoice("docker", {"hosts": ("unix:///a.sock",), "image": "mine"})


@pytest.mark.parametrize(("given", "expected"), [
    ({"hosts": "unix:///a.sock,unix:///b.sock"}, DockerOptions(hosts=("unix:///a.sock", "unix:///b.sock"))),
    ({"hosts": ["unix:///a.sock"], "image": "mine"}, DockerOptions(hosts=("unix:///a.sock",), image="mine")),
    ({"colour": "red"}, "--sandbox docker: unknown option 'colour' (it takes: hosts, image, base_image, "
                        "base_image_packages); give --sandbox-opt KEY=VALUE"),
    ({"image": "two words"}, "--sandbox docker: option image: 'two words' is not an image name"),
    ({"base_image_packages": "gcc"}, "--base-image-packages adds Debian packages to the suite's stand-in base image"),
])
def test_docker_options_are_its_own_model(given: dict[str, object], expected: DockerOptions | str) -> None:
    if isinstance(expected, str):
        with pytest.raises(AgenticEvalError) as caught:
            DockerOptions.of(given, "docker")
        assert str(caught.value).startswith(expected) and "\n" not in str(caught.value)
    else:
        assert DockerOptions.of(given, "docker") == expected


def test_a_backend_without_options_names_the_bad_key() -> None:
    said = r"^--sandbox local: unknown option 'image': this backend takes no options; drop --sandbox-opt$"
    with pytest.raises(AgenticEvalError, match=said):
        get_backend("local", {"image": "x"})


def test_capabilities_are_class_attributes() -> None:
    assert (LocalBackend.file_tool_worker, BwrapBackend.file_tool_worker, DockerBackend.file_tool_worker) == \
        (True, True, False)
    assert (LocalBackend.host_process, DockerBackend.host_process) == (True, False)
    assert (LocalBackend.disk_cap, DockerBackend.disk_cap) == (False, True)


def test_the_contract_module_stays_standard_library_only() -> None:
    """The sealed grader imports confine/backend.py (through grading/sealed.py) inside the sandbox image, which has no
    pydantic: the options model is imported only when options are checked."""
    import subprocess
    import sys

    code = ("import sys; sys.modules['pydantic'] = None; "
            "import agentic_eval.grading.sealed, agentic_eval.confine.backend")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-2000:]

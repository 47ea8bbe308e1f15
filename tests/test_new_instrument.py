"""A new instrument is 3 files: its module, its CLI module and its row in the instrument registry, and with them
it runs from a campaign file (its table, resumed runs, the verdict) and as its own command. Proved by adding a
tiny one outside the package (`echo_check`: does the model repeat a word?) and running it against the scripted
endpoint; and the old spelling of an instrument's name still reads, with a note."""

from __future__ import annotations

import contextlib
import io
import json
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentic_eval.cli import main
from agentic_eval.instruments import registry
from agentic_eval.testing import FakeEndpoint, ReceivedRequest, ScriptedReply
from tests.helpers import answer

MODULE = '''
"""echo-check: does the model repeat the words it is asked to repeat?"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from agentic_eval.endpoint import Endpoint, http_client
from agentic_eval.instruments.registry import Headline, Log
from agentic_eval.results.instrument_runs import InstrumentRun, save_instrument_run

KIND = "echo_check"
WORDS = ("apple", "birch", "cedar", "delta", "ember", "fjord")


def run_echo(endpoint: Endpoint, model: str, words: int) -> dict[str, int]:
    repeated = 0
    with http_client(endpoint, timeout=30) as client:
        for word in WORDS[:words]:
            body = {"model": model, "messages": [{"role": "user", "content": f"Repeat: {word}"}]}
            reply = client.post("/chat/completions", json=body).json()
            repeated += word in (reply["choices"][0]["message"].get("content") or "")
    return {"repeated": repeated, "asked": words}


def headline(result: dict[str, int]) -> Headline:
    return Headline(dict(result), f"{result['repeated']}/{result['asked']} words repeated")


def record(result: dict[str, int], runs_root: Path = Path("runs"), *, base_url: str, model: str) -> Path:
    shown = headline(result)
    return save_instrument_run(KIND, model=model, base_url=base_url, result=result, headline=shown.values,
                               headline_text=shown.text, settings={"asked": result["asked"]}, runs_root=runs_root)


class EchoOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    words: int = Field(default=3, ge=1, le=len(WORDS))
    runs: int = Field(default=1, ge=1, le=5)

    def runs_wanted(self) -> int:
        return self.runs

    def asked(self) -> dict[str, object]:
        return self.model_dump(exclude={"runs"})


OPTIONS = EchoOptions


def measure(endpoint: Endpoint, model: str, options: EchoOptions, runs_root: Path, log: Log) -> Path:
    return record(run_echo(endpoint, model, options.words), runs_root, base_url=endpoint.base_url, model=model)


def figures(runs: Sequence[InstrumentRun], folders: Sequence[Path]) -> dict[str, object]:
    return {}
'''

CLI_MODULE = '''
"""CLI command `echo-check`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from agentic_eval.cli.args import add_endpoint_args, add_run_dir_arg


def register(sub: Any) -> None:
    p = sub.add_parser("echo-check", help="does the model repeat a word?")
    add_endpoint_args(p)
    p.add_argument("--words", type=int, default=3)
    add_run_dir_arg(p)
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from agentic_eval.endpoint import resolve_endpoint
    from tinyext.echo import record, run_echo

    endpoint = resolve_endpoint(args.base_url, args.api_key)
    result = run_echo(endpoint, args.model, args.words)
    print(record(result, Path(args.run_dir), base_url=endpoint.base_url, model=args.model))
    return 0
'''

ROW = registry.InstrumentEntry("echo_check", "echo check", "tinyext.echo", cli="tinyext.echo_cli", campaign=True)


@pytest.fixture
def echo_instrument(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The three files: tinyext/echo.py, tinyext/echo_cli.py (a namespace package on sys.path) and the row."""
    package = tmp_path / "ext" / "tinyext"
    package.mkdir(parents=True)
    (package / "echo.py").write_text(textwrap.dedent(MODULE))
    (package / "echo_cli.py").write_text(textwrap.dedent(CLI_MODULE))
    monkeypatch.syspath_prepend(str(tmp_path / "ext"))
    monkeypatch.setattr(registry, "INSTRUMENTS", (*registry.INSTRUMENTS, ROW))
    yield
    for name in [m for m in sys.modules if m == "tinyext" or m.startswith("tinyext.")]:
        del sys.modules[name]


def parrot(request: ReceivedRequest) -> ScriptedReply:
    """Repeats every word but 'birch'."""
    said = str((request.body or {})["messages"][-1]["content"]).removeprefix("Repeat: ")
    return answer("hmm" if said == "birch" else said)


def cli(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(args))
    return code, out.getvalue()


def test_a_three_file_instrument_runs_in_a_campaign_and_as_a_command(echo_instrument: None, tmp_path: Path) -> None:
    file, runs = tmp_path / "echo.toml", tmp_path / "runs"
    with FakeEndpoint(model="parrot", responder=parrot) as fake:
        file.write_text(f'tasks = ["json-set-port"]\nagents = []\ninstruments = ["echo_check"]\n'
                        '[echo_check]\nwords = 4\nruns = 2\n'
                        f'[[models]]\nname = "parrot"\nbase_url = "{fake.base_url}"\n')
        code, out = cli("campaign", str(file), "--run-dir", str(runs), "--json")
        assert code == 0, out
        report = json.loads(out)
        asked = [r for r in fake.requests if r.method == "POST"]
        assert len(asked) == 8  # two runs (`runs = 2`) of four words each

        # The same file again: both runs are recorded with these options, nothing is asked.
        assert cli("campaign", str(file), "--run-dir", str(runs), "--json")[0] == 0
        assert len([r for r in fake.requests if r.method == "POST"]) == 8

        code, out = cli("echo-check", "--model", "parrot", "--base-url", fake.base_url, "--words", "2",
                        "--run-dir", str(tmp_path / "alone"))
        assert code == 0, out
    (row,) = report["rows"]
    assert row["instruments"] == {"echo_check": "3/4 words repeated"}
    verdict = report["verdicts"]["parrot"]
    assert "echo check: 3/4 words repeated" in verdict["text"] and "echo check" in verdict["rests_on"]
    folders = sorted((runs / "echo" / "parrot" / "instruments" / "echo_check").glob("*/asked.json"))
    assert len(folders) == 2 and json.loads(folders[0].read_text()) == {"kind": "echo_check",
                                                                         "options": {"words": 4}}
    code, md = cli("campaign", str(file), "--run-dir", str(runs), "--report", "--format", "md", "--html",
                   str(tmp_path / "echo.html"))
    assert code == 0 and "echo check: 3/4 words repeated" in md and (tmp_path / "echo.html").is_file()
    (alone,) = (tmp_path / "alone").glob("*/instrument.json")
    assert json.loads(alone.read_text())["headline_text"] == "1/2 words repeated"  # birch is never repeated


def test_its_table_is_checked_like_any_other(echo_instrument: None, tmp_path: Path) -> None:
    from agentic_eval.campaign.spec import parse_campaign
    from agentic_eval.errors import AgenticEvalError

    head = 'instruments = ["echo_check"]\n[[models]]\nname = "m"\nbase_url = "http://127.0.0.1:9/v1"\n'
    with pytest.raises(AgenticEvalError, match=r"unknown key echo_check\.wrods \(did you mean 'words'\?\)"):
        parse_campaign(head + "[echo_check]\nwrods = 2\n", Path("c.toml"))
    with pytest.raises(AgenticEvalError, match=r"echo_check\.words: .*less than or equal to 6"):
        parse_campaign(head + "[echo_check]\nwords = 60\n", Path("c.toml"))
    assert parse_campaign(head, Path("c.toml")).options("echo_check").asked() == {"words": 3}


def test_the_old_spelling_of_an_instrument_still_reads_with_a_note() -> None:
    from agentic_eval.campaign.spec import parse_campaign

    head = '[[models]]\nname = "m"\nbase_url = "http://127.0.0.1:9/v1"\n'
    old = parse_campaign('instruments = ["think-check"]\n[think-check]\nproblems = 4\n' + head, Path("c.toml"))
    new = parse_campaign('instruments = ["think_check"]\n[think_check]\nproblems = 4\n' + head, Path("c.toml"))
    assert old.kinds() == new.kinds() == ["think_check"]
    assert old.options("think_check") == new.options("think_check") and new.notes == []
    assert len(old.notes) == 1 and "'think-check' is the old spelling of the instrument 'think_check'" in old.notes[0]
    # campaign.json holds the one name; a folder recorded with the old one still reads.
    dumped = old.model_dump(mode="json", by_alias=True)
    assert dumped["instruments"] == ["think_check"] and dumped["think_check"] == {"problems": 4, "seed": 0}
    assert "think-check" not in dumped

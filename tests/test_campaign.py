"""`agentic-eval campaign FILE.toml` end to end: three scripted models on 127.0.0.1 at once (one that calls
tools, one that writes them as text, one whose server dies mid-campaign and is resumed), the instruments,
the headline table and the verdicts; and the one-line errors before anything starts."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.cli import main
from agentic_eval.endpoint import not_served, resolve_endpoint
from agentic_eval.instruments.battery import case_key, generate_cases
from agentic_eval.testing import FakeEndpoint, ReceivedRequest, ScriptedReply
from tests.helpers import (
    SEED_XML,
    SolverThatDies,
    answer,
    battery_model,
    forms_model,
    interrupted_cli,
    make_pack,
    solver,
)

CASES = 8
CASE_LIST = generate_cases(45739, CASES)
BATTERY_KEYS = {case_key(c) for c in CASE_LIST}


def model(agent: Any, battery: str, forms_quirk: str = "") -> Any:
    """A scripted model: the battery's and the form matrix's requests answered by their scripted models, the
    built-in agent's by `agent`."""
    battery_reply, forms_reply = battery_model(CASE_LIST, battery), forms_model(forms_quirk)

    def respond(request: ReceivedRequest) -> ScriptedReply:
        body = request.body or {}
        users = [m["content"] for m in body.get("messages", []) if m.get("role") == "user"]
        names = tuple(t.get("function", {}).get("name") for t in body.get("tools", []))
        if users and (users[0], names) in BATTERY_KEYS:
            return battery_reply(request.path, body)
        if request.path.endswith("/responses") or "get_forecast" in json.dumps(body.get("tools", [])):
            return forms_reply(request.path, body)
        return agent(request)

    return respond


def xml_writer(request: ReceivedRequest) -> ScriptedReply:
    return answer(SEED_XML)


def write_file(path: Path, pack: Path, endpoints: dict[str, str], instruments: str = '["tooling", "forms"]') -> None:
    models = "".join(f'\n[[models]]\nname = "{name}"\nbase_url = "{url}"\n' for name, url in endpoints.items())
    path.write_text(f"""
packs = ["{pack}"]
agents = ["builtin"]
attempts = 1
system_prompt_tokens = [0]
instruments = {instruments}

[agent_options.builtin]
max_retries = 0

[tooling]
cases = {CASES}

[forms]
tools = 5
{models}""")


def cli(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(args))
    return code, out.getvalue()


def test_three_models_side_by_side_then_resume_after_a_death(mini_pack: Path, tmp_path: Path) -> None:
    pack = make_pack(mini_pack, 3)
    dying = SolverThatDies(turns=4)  # t0 passes (3 turns), then its server dies during the next task
    fakes = {"tools-model": FakeEndpoint(model="tools-model", responder=model(solver, "oracle")),
             "text-model": FakeEndpoint(model="text-model", responder=model(xml_writer, "oracle", "ignore_required")),
             "dying-model": FakeEndpoint(model="dying-model", responder=model(dying, "oracle"))}
    dying.fake = fakes["dying-model"]  # type: ignore[assignment]
    for fake in fakes.values():
        fake.start()
    file, runs = tmp_path / "spark.toml", tmp_path / "runs"
    try:
        urls = {name: f.base_url for name, f in fakes.items()}
        write_file(file, pack, urls)
        code, out = cli("campaign", str(file), "--run-dir", str(runs), "--json")
        assert code == 1  # the dying model's trials are unscored: the same command finishes them
        first = json.loads(out)
        rows = {r["model"]: r for r in first["rows"]}
        assert (rows["tools-model"]["tasks_passed"], rows["tools-model"]["tool_call_tasks"]) == (3, 3)
        assert (rows["text-model"]["tasks_passed"], rows["text-model"]["text_tool_call_tasks"]) == (0, 3)
        assert rows["tools-model"]["synthetic_pct"] == 100.0 and rows["tools-model"]["forms"] == [15, 15]
        assert rows["text-model"]["forms"][0] < 15
        assert rows["dying-model"]["tasks_passed"] == 1 and rows["dying-model"]["unscored_trials"] == 2
        text_verdict = first["verdicts"]["text-model"]["text"]
        assert "high synthetic score" in text_verdict and "not usable under this agent" in text_verdict
        assert "tool calls written as text in 3/3 tasks" in text_verdict
        assert "synthetic score" in first["verdicts"]["text-model"]["rests_on"]
        assert first["pick"].startswith("Pick tools-model")

        # The server comes back on another port: the file says so, and the same command resumes.
        fakes["dying-model"] = FakeEndpoint(model="dying-model", responder=model(solver, "oracle")).__enter__()
        urls["dying-model"] = fakes["dying-model"].base_url
        fakes["tools-model"].stop()  # finished models are not asked again
        write_file(file, pack, urls)
        code, out = cli("campaign", str(file), "--run-dir", str(runs), "--json")
        assert code == 0, out
        second = json.loads(out)
        rows = {r["model"]: r for r in second["rows"]}
        assert rows["dying-model"]["tasks_passed"] == 3 and rows["dying-model"]["unscored_trials"] == 0
        posts = [r for r in fakes["dying-model"].requests if r.method == "POST"]
        assert len(posts) == 6  # t1 and t2, three turns each: t0 and the instruments were kept
        verdicts = second["verdicts"]
        assert "tied with dying-model" in verdicts["tools-model"]["text"]  # 3/3 and 3/3: the same
        assert "the only model that holds" not in verdicts["tools-model"]["text"]
        assert second["pick"].startswith("Pick tools-model or dying-model")

        # Nothing left: the report only, from the folder; Markdown and HTML too.
        code, out = cli("campaign", str(file), "--run-dir", str(runs), "--format", "md", "--report",
                        "--html", str(tmp_path / "c.html"))
        assert code == 0 and "| tools-model" in out and "## Verdicts" in out
        assert "Verdicts" in (tmp_path / "c.html").read_text()
        # A model added to the file runs alone; the others are kept.
        fakes["new-model"] = FakeEndpoint(model="new-model", responder=model(solver, "text")).__enter__()
        urls["new-model"] = fakes["new-model"].base_url
        write_file(file, pack, urls)
        code, out = cli("campaign", str(file), "--run-dir", str(runs), "--json")
        assert code == 0
        third = json.loads(out)
        new = next(r for r in third["rows"] if r["model"] == "new-model")
        assert new["tasks_passed"] == 3 and new["synthetic_pct"] < 100
        assert len([r for r in fakes["dying-model"].requests if r.method == "POST"]) == 6
    finally:
        for fake in fakes.values():
            fake.stop()


def _error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(list(args)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


def test_mistakes_are_one_line_before_anything_starts(mini_pack: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    file, runs = tmp_path / "c.toml", tmp_path / "runs"
    with FakeEndpoint(model="served") as fake:
        url = fake.base_url
        file.write_text(f'packs = ["{mini_pack}"]\ninstrumnets = []\n[[models]]\nname = "served"\nbase_url = "{url}"\n')
        err = _error(capsys, "campaign", str(file), "--run-dir", str(runs))
        assert "unknown key instrumnets" in err and "did you mean 'instruments'" in err and str(file) in err
        file.write_text(f'packs = ["{mini_pack}"]\n[[models]]\nname = "servd"\nbase_url = "{url}"\n')
        err = _error(capsys, "campaign", str(file), "--run-dir", str(runs))
        assert "models[1] (name 'servd').name" in err and "did you mean 'served'" in err
        assert err.endswith(f"name: {not_served(resolve_endpoint(url), 'servd', ['served'])}")  # run's own line
        file.write_text(f'packs = ["{mini_pack}"]\ntasks = ["answer-fil"]\n[[models]]\nname = "served"\n'
                        f'base_url = "{url}"\n')
        err = _error(capsys, "campaign", str(file), "--run-dir", str(runs))
        assert "tasks: unknown task 'answer-fil'" in err and "did you mean 'answer-file'" in err
        file.write_text(f'packs = ["{mini_pack}"]\n[[models]]\nname = "served"\nbase_url = "{url}"\napi_key = "sk-x"\n')
        err = _error(capsys, "campaign", str(file), "--run-dir", str(runs))
        assert "never holds a key" in err and "sk-x" not in err
        file.write_text(f'packs = ["{mini_pack}"]\n[[models]]\nname = "served"\nbase_url = "{url}"\n'
                        'api_key_env = "AGENTIC_EVAL_TEST_NO_SUCH_VAR"\n')
        err = _error(capsys, "campaign", str(file), "--run-dir", str(runs))
        assert "AGENTIC_EVAL_TEST_NO_SUCH_VAR is not set" in err
        import importlib.util
        import socket

        with socket.socket() as free:
            free.bind(("127.0.0.1", 0))
            port = free.getsockname()[1]
        if importlib.util.find_spec("ray") is not None:  # a cluster where nothing answers: one line, at once
            file.write_text(f'packs = ["{mini_pack}"]\nray_address = "ray://127.0.0.1:{port}"\n[[models]]\n'
                            f'name = "served"\nbase_url = "{url}"\n')
            err = _error(capsys, "campaign", str(file), "--run-dir", str(runs))
            assert f"ray_address: --ray ray://127.0.0.1:{port}: cannot connect to 127.0.0.1:{port}" in err
    file.write_text(f'packs = ["{mini_pack}"]\n[[models]]\nname = "served"\nbase_url = "{url}"\n')
    err = _error(capsys, "campaign", str(file), "--run-dir", str(runs))  # the server is gone
    assert "models[1] (name 'served').base_url" in err and "cannot reach" in err
    assert not list(runs.glob("**/trials.jsonl"))


def test_report_reads_a_campaigns_folder_and_names_it_when_given_the_folder_above(
        mini_pack: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`report runs/NAME` and `report --run-dir runs/NAME` print the campaign's report (its runs sit deeper,
    one folder per model); `report --run-dir runs`, which holds only campaigns, is one line naming the command."""
    file, runs = tmp_path / "two.toml", tmp_path / "runs"
    with FakeEndpoint(model="served") as fake:
        file.write_text(f'packs = ["{mini_pack}"]\nagents = ["oracle"]\ninstruments = []\n[[models]]\n'
                        f'name = "served"\nbase_url = "{fake.base_url}"\n')
        assert cli("campaign", str(file), "--run-dir", str(runs))[0] == 0
    capsys.readouterr()
    code, recorded = cli("campaign", str(file), "--run-dir", str(runs), "--report", "--json")
    assert code == 0 and json.loads(recorded)["rows"][0]["tasks_passed"] == 1
    assert cli("report", str(runs / "two"), "--json") == (0, recorded)
    assert cli("report", "two", "--run-dir", str(runs), "--json") == (0, recorded)
    code, table = cli("report", "--run-dir", str(runs / "two"))
    assert code == 0 and "served" in table and f"report again with: agentic-eval report {runs / 'two'}" in table
    err = _error(capsys, "report", "--run-dir", str(runs))
    assert "holds no runs of its own but campaign folders (two)" in err
    assert err.endswith(f"report one with: agentic-eval report {runs / 'two'}")
    err = _error(capsys, "report", str(runs / "two"), str(runs / "two"), "--compare")
    assert "is a campaign's folder, reported on its own" in err


@pytest.mark.parametrize(("head", "expected"), [
    ('base_image = "suite"\n', ("docker", {"base_image": "suite"})),
    ('sandbox = "docker"\nbase_image = "python:3.12-slim"\n', ("docker", {"base_image": "python:3.12-slim"})),
    ('sandbox = "bwrap"\n', ("bwrap", {})),
    ('sandbox = "bwrap"\nbase_image = "suite"\n', "c.toml: base_image: it is for the docker sandbox, not sandbox = "
     "'bwrap': drop sandbox (base_image implies docker) or base_image"),
    ('base_image = "suite\\nRUN true"\n', "c.toml: base_image: 'suite\\nRUN true' is not an image name"),
    ('base_image = ""\n', "c.toml: base_image: String should have at least 1 character"),
    ('base-image = "suite"\n', "c.toml: unknown key base-image (did you mean 'base_image'?)"),
])
def test_base_image_is_a_sandbox_setting_of_the_file(head: str, expected: tuple[str, dict] | str) -> None:
    """`base_image` is `run --base-image`: it implies the docker sandbox; a bad value is one line naming the key."""
    from agentic_eval.campaign.spec import parse_campaign
    from agentic_eval.errors import AgenticEvalError

    text = head + '[[models]]\nname = "m"\nbase_url = "http://127.0.0.1:9/v1"\n'
    if isinstance(expected, tuple):
        spec = parse_campaign(text, Path("c.toml"))
        assert (spec.sandbox_name(), spec.sandbox_options()) == expected
        return
    with pytest.raises(AgenticEvalError) as caught:
        parse_campaign(text, Path("c.toml"))
    assert str(caught.value).startswith(expected) and "\n" not in str(caught.value)


def test_the_example_file_is_a_valid_campaign() -> None:
    from agentic_eval.campaign import load_campaign

    spec = load_campaign(Path(__file__).resolve().parents[1] / "examples" / "campaign.toml")
    assert len(spec.models) == 4 and spec.system_prompt_tokens == [0, 9300]
    assert spec.agents == ["builtin", "opencode"] and spec.kinds() == ["tooling", "forms", "speed", "think_check"]


def test_ctrl_c_stops_cleanly_and_the_resume_line_is_the_same_command(mini_pack: Path, tmp_path: Path) -> None:
    def slow_solver(request: ReceivedRequest) -> ScriptedReply:
        reply = solver(request)
        reply.delay_s = 0.5
        return reply

    pack = make_pack(mini_pack, 3)
    file, runs = tmp_path / "c.toml", tmp_path / "runs"
    with FakeEndpoint(model="slow", responder=slow_solver) as fake:
        write_file(file, pack, {"slow": fake.base_url}, instruments="[]")
        code, err = interrupted_cli("campaign", str(file), "--run-dir", str(runs),
                                    until=lambda line: ": t0 a1:" in line)  # the first trial has finished
    assert code == 130, err
    assert f"resume with: agentic-eval campaign {file} --run-dir {runs}" in err
    records = [json.loads(line) for p in runs.glob("**/trials.jsonl") for line in p.read_text().splitlines()]
    assert any(r["task_id"] == "t0" and r["outcome"] == "pass" for r in records)


def test_instruments_only_show_decode_speed_per_workload(tmp_path: Path) -> None:
    from tests.fake_vllm import FakeVllm, FakeVllmConfig

    file, runs = tmp_path / "speed.toml", tmp_path / "runs"
    with FakeVllm(FakeVllmConfig(decode_tok_s=400)) as fake:
        file.write_text(f'tasks = ["json-set-port"]\nagents = []\ninstruments = ["speed"]\n'
                        '[speed]\nworkloads = ["code_edit"]\nreps = 1\nwarmup = 0\nmax_tokens = 16\n'
                        f'[[models]]\nname = "{fake.config.model}"\nbase_url = "{fake.base_url}"\n')
        code, out = cli("campaign", str(file), "--run-dir", str(runs), "--json")
    assert code == 0, out
    (row,) = json.loads(out)["rows"]
    assert row["agent"] == "-" and set(row["decode_tok_s"]) == {"code_edit"} and row["decode_tok_s"]["code_edit"] > 0
    assert "decodes at" in json.loads(out)["verdicts"][fake.config.model]["text"]


def test_forms_caps_from_the_file_reach_every_shape_and_each_shape_is_a_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`[forms] max_tokens timeout_s` cap each of the 15 requests, and the campaign says each shape as it ends
    (on a CPU-served model a shape takes minutes: a silent hour is no way to learn that)."""
    seen: list[dict[str, Any]] = []
    forms_reply = forms_model()

    def respond(request: ReceivedRequest) -> ScriptedReply:
        seen.append(request.body or {})
        return forms_reply(request.path, request.body or {})

    file, runs = tmp_path / "forms.toml", tmp_path / "runs"
    with FakeEndpoint(model="m", responder=respond) as fake:
        file.write_text(f'tasks = ["json-set-port"]\nagents = []\ninstruments = ["forms"]\n'
                        '[forms]\ntools = 5\nmax_tokens = 64\ntimeout_s = 30\n'
                        f'[[models]]\nname = "m"\nbase_url = "{fake.base_url}"\n')
        code, out = cli("campaign", str(file), "--run-dir", str(runs), "--json")
    assert code == 0, out
    caps = {body.get("max_tokens", body.get("max_output_tokens")) for body in seen}
    assert len(seen) == 15 and caps == {64}
    err = capsys.readouterr().err
    assert "forms 1/15 chat-auto: pass" in err and "forms 15/15 messages-named-stream: pass" in err


def test_the_campaign_page_shows_the_speed_it_quotes_and_only_the_models_the_file_runs(tmp_path: Path) -> None:
    """The HTML page's speed table has the figures the verdict quotes (it had only its headers: the page looked
    for instrument results among the agent runs' folders), and a model dropped from the file leaves the page."""
    from tests.fake_vllm import FakeVllm, FakeVllmConfig

    file, runs, page = tmp_path / "speed.toml", tmp_path / "runs", tmp_path / "page.html"
    with FakeVllm(FakeVllmConfig(decode_tok_s=400)) as fake:
        head = ('tasks = ["json-set-port"]\nagents = []\ninstruments = ["speed"]\n[speed]\nworkloads = ["code_edit"]\n'
                'reps = 1\nwarmup = 0\nmax_tokens = 16\n')
        models = [f'[[models]]\nname = "{fake.config.model}"\nbase_url = "{fake.base_url}"\n',
                  f'[[models]]\nname = "gone-model"\nbase_url = "{fake.base_url}"\n']
        file.write_text(head + "".join(models))
        with FakeVllm(FakeVllmConfig(decode_tok_s=400, model="gone-model")) as other:
            file.write_text(head + models[0] + models[1].replace(fake.base_url, other.base_url))
            code, out = cli("campaign", str(file), "--run-dir", str(runs), "--json")
            assert code == 0, out
        file.write_text(head + models[0])  # the file no longer runs gone-model
        code, out = cli("campaign", str(file), "--run-dir", str(runs), "--html", str(page))
    assert code == 0, out
    html = page.read_text(encoding="utf-8")
    table = html[html.index("<table id=speed>"):]
    table = table[:table.index("</table>")]
    assert f"<td>{fake.config.model}</td><td>code_edit</td>" in table
    assert "gone-model" not in table


def test_small_numbers_read_as_what_they_are() -> None:
    """A 6-case battery's band is not the 370-case one; nobody is 'best' at 0 passes; a decode figure taken on a
    loaded host says so."""
    from agentic_eval.campaign.verdict import ModelFigures, _pick

    assert ModelFigures(synthetic_pct=[80.0], synthetic_cases=6).noise_pts == pytest.approx(11.78, abs=0.01)
    assert ModelFigures(synthetic_pct=[80.0], synthetic_cases=370).noise_pts == pytest.approx(1.5)
    assert ModelFigures(synthetic_pct=[80.0, 90.0], synthetic_cases=370).noise_pts == pytest.approx(10.0)

    class Summary:
        def __init__(self, passed: int) -> None:
            self.passed, self.task_ids = passed, ["a", "b", "c"]

    class Interval:
        n, rate = 3, 0.0

    class Best:
        def __init__(self, passed: int) -> None:
            self.summary, self.interval, self.label = Summary(passed), Interval(), "builtin"

    import agentic_eval.campaign.verdict as verdict

    original = verdict._state
    verdict._state = lambda row: "weak"  # type: ignore[assignment]
    try:
        zero = _pick("a", {"a": Best(0), "b": Best(0)}, {}, ["a", "b"])  # type: ignore[dict-item]
        level = _pick("a", {"a": Best(1), "b": Best(1)}, {}, ["a", "b"])  # type: ignore[dict-item]
    finally:
        verdict._state = original
    assert "best" not in zero and "no pick" in zero and "0/3" in zero
    assert "best" not in level and "a, b level at 1/3" in level


def test_a_decode_figure_from_a_loaded_host_says_the_load(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from agentic_eval.instruments.speed import host_load_per_core

    monkeypatch.setattr(os, "getloadavg", lambda: (6.0, 5.0, 4.0))
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert host_load_per_core("http://127.0.0.1:8080/v1") == 3.0
    assert host_load_per_core("http://gpu-box.example:8000/v1") is None

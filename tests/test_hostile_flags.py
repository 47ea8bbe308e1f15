"""Every command's flags, walked from the real parser and fed what a typo or a script can produce: huge,
negative, NaN and infinite numbers, bytes that are not UTF-8, unparseable URLs, and special files (/dev/zero,
a FIFO, a folder) where a file is named. Each is one line of error and exit 2 (or a clean success), never
a traceback, a hang or gigabytes read. No endpoint is contacted: --base-url points at a closed port."""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from agentic_eval.cli import build_parser, main

CLI = [sys.executable, "-m", "agentic_eval.cli"]
TIMEOUT_S = 120  # a bound on a hang, not a speed requirement: a refused input takes about a second

FILE_METAVARS = {"PATH", "FILE", "DIR", "WIRE.jsonl", "RUN", "FILE.toml"}
"""Flags (and positionals) that name a file or a folder."""
NUMERIC_METAVARS = {"N", "S", "K", "GB", "GB/s", "SECONDS"}
"""Metavars that promise a number: such a flag must have a bounded type."""
TEXT_FLAGS = {"--model", "--agent", "--task", "--agent-opt", "--sandbox", "--sandbox-opt", "--docker-host", "--image",
              "--format",
              "--show", "--redteam", "--generator", "--package", "--phase", "--suite", "--category", "--workload",
              "--cmd", "--api-key", "--base-url", "--base-image", "--ray", "--emulate-parser",
              "--base-image-packages", "names", "task_id", "spec"}
"""Every other flag that takes a value: text, checked by its command (a new flag must join one of the three)."""
CHECKED_TEXT_FLAGS = {"--base-url", "--api-key", "--base-image-packages"}
"""Text flags whose argparse type checks the text (so a type alone does not make a flag a number)."""
HOSTILE_NUMBERS = ["99999999999999999999", "9" * 5000, "-1", "-99999999999999999999", "nan", "inf", "-inf",
                   "1e999", "", "ten", "0x10"]
NOT_UTF8 = os.fsdecode(b"\xff\xfeab")  # how Python hands over argv bytes it cannot decode


def _leaves() -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """(command path, its parser) for every command that runs: `run`, `tasks show`, ..."""
    found: list[tuple[tuple[str, ...], argparse.ArgumentParser]] = []

    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> None:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if path and not subs:
            found.append((path, parser))
        for action in subs:
            for name, sub in action.choices.items():
                walk(sub, (*path, name))

    walk(build_parser(), ())
    return found


def _value_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The flags and positionals that take a value (not -h, --debug or on/off switches)."""
    return [a for a in parser._actions if a.nargs != 0 and a.dest not in ("help", "debug")
            and not isinstance(a, argparse._SubParsersAction)]


def _name(action: argparse.Action) -> str:
    return action.option_strings[-1] if action.option_strings else action.dest


def _kind(action: argparse.Action) -> str:
    if action.metavar in FILE_METAVARS:
        return "file"
    if action.type is not None and _name(action) not in CHECKED_TEXT_FLAGS:
        return "number"
    return "text"


LEAVES = _leaves()
ALL_FLAGS = [(path, action) for path, parser in LEAVES for action in _value_actions(parser)]
NUMERIC = [(path, a) for path, a in ALL_FLAGS if _kind(a) == "number"]
FILES = [(path, a) for path, a in ALL_FLAGS if _kind(a) == "file"]


def _id(item: tuple[tuple[str, ...], argparse.Action]) -> str:
    return " ".join(item[0]) + " " + _name(item[1])


def test_the_walk_finds_every_command_and_classifies_every_flag() -> None:
    paths = {" ".join(path) for path, _ in LEAVES}
    assert {"run", "report", "tasks show", "validate", "serve-local", "speed", "classify", "cold-start"} <= paths
    for path, action in ALL_FLAGS:
        where = _id((path, action))
        assert action.type not in (int, float), f"{where}: an unbounded number type"
        if action.metavar in NUMERIC_METAVARS:
            assert _kind(action) == "number", f"{where}: a number flag without a bounded type"
        if _kind(action) == "text":
            assert _name(action) in TEXT_FLAGS or action.choices, f"{where}: unclassified; add it to a kind here"
    assert len(NUMERIC) >= 25 and len(FILES) >= 20


@pytest.mark.parametrize("item", NUMERIC, ids=[_id(i) for i in NUMERIC])
def test_numeric_flags_refuse_hostile_numbers(item: tuple[tuple[str, ...], argparse.Action],
                                              capsys: pytest.CaptureFixture[str]) -> None:
    path, action = item
    shown = "/".join(action.option_strings)
    for value in HOSTILE_NUMBERS:
        with pytest.raises(SystemExit) as exit_info:
            main([*path, f"{_name(action)}={value}"])
        err = capsys.readouterr().err
        assert exit_info.value.code == 2, (value, err)
        assert "Traceback" not in err
        last = err.strip().splitlines()[-1]
        assert f"error: argument {shown}:" in last and len(last) < 300, (value, last)
        if value.startswith("9"):
            assert "is over the limit of" in last, last


def test_the_limit_is_named_in_the_error(capsys: pytest.CaptureFixture[str]) -> None:
    for argv, wanted in ((["run", "--attempts", "99999999999999999999"], "99999999999999999999 is over the limit "
                                                                         "of 1,000"),
                         (["run", "--system-prompt-tokens", "99999999999"], "is over the limit of 2,000,000"),
                         (["probe", "--model", "m", "--timeout", "1e9"], "is over the limit of 86,400"),
                         (["validate", "--seed", "-3"], "-3 must be 0 or more")):
        with pytest.raises(SystemExit):
            main(argv)
        assert wanted in capsys.readouterr().err.strip().splitlines()[-1]


@pytest.mark.parametrize("command", ["run", "validate"])
def test_hostile_package_lists_are_one_line(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    for value in ("gcc;rm -rf ~", "-o", "-oAPT::Get::AllowUnauthenticated=1", "$(id)", "a b", "gcc,`id`", "x",
                  "a" * 5000, "Gcc", ",".join(["gcc"] * 101)):
        with pytest.raises(SystemExit) as exit_info:
            main([command, "--base-image", "suite", f"--base-image-packages={value}"])
        err = capsys.readouterr().err
        last = err.strip().splitlines()[-1]
        assert exit_info.value.code == 2 and "Traceback" not in err, (value, err)
        assert "error: argument --base-image-packages:" in last and len(last) < 300, (value, last)
    args = build_parser().parse_args(["run", "--base-image-packages", "python3-pip, gcc,libstdc++6,g++"])
    assert args.base_image_packages == ("python3-pip", "gcc", "libstdc++6", "g++")


def test_good_numbers_at_the_limits_still_parse() -> None:
    parser = build_parser()
    args = parser.parse_args(["run", "--attempts", "1000", "-j", "256", "--system-prompt-tokens", "2000000",
                              "--seed", str(2**32 - 1)])
    assert (args.attempts, args.jobs, args.system_prompt_tokens, args.seed) == (1000, 256, 2_000_000, 2**32 - 1)
    assert parser.parse_args(["probe", "--model", "m", "--timeout", "0.5"]).timeout == 0.5
    assert parser.parse_args(["serve-local", "--port", "0"]).port == 0
    assert parser.parse_args(["run", "--agent-timeout", "1"]).agent_timeout == 1
    assert parser.parse_args(["run", "--agent-timeout", "604800"]).agent_timeout == 604800


@pytest.mark.parametrize("item", ALL_FLAGS, ids=[_id(i) for i in ALL_FLAGS])
def test_values_that_are_not_utf8_are_one_line(item: tuple[tuple[str, ...], argparse.Action],
                                               capsys: pytest.CaptureFixture[str]) -> None:
    path, action = item
    argv = [*path, _name(action), NOT_UTF8] if action.option_strings else [*path, NOT_UTF8]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is not UTF-8 text" in err[0], err
    if action.option_strings:
        assert f"the value of {_name(action)}" in err[0]


def test_argv_bytes_that_are_not_utf8_through_a_real_process() -> None:
    """Bytes on the real command line (a file name in Latin-1, a pasted binary), decoded by Python with
    surrogateescape: one line, exit 2, for every command."""
    raw = b"\xff\xfe-" + os.fsencode("é")

    def attempt(path: tuple[str, ...]) -> tuple[str, int, list[str]]:
        first = next(a for p, a in ALL_FLAGS if p == path)
        argv = [*path, _name(first), raw] if first.option_strings else [*path, raw]
        proc = subprocess.run([*CLI, *argv], capture_output=True, timeout=TIMEOUT_S, check=False)
        return " ".join(path), proc.returncode, proc.stderr.decode("utf-8", "replace").strip().splitlines()

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(attempt, sorted({p for p, _ in ALL_FLAGS})))
    assert len(results) >= 14
    bad = [(path, code, err) for path, code, err in results
           if not (code == 2 and len(err) == 1 and "not UTF-8" in err[0])]
    assert not bad, bad


@pytest.fixture
def closed_url() -> str:
    """A base URL on 127.0.0.1 where nothing listens: any command that would connect fails at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@pytest.fixture
def specials(tmp_path: Path) -> Iterator[dict[str, Path]]:
    """/dev/zero, a FIFO nobody writes to, and a folder."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    folder = tmp_path / "a-folder"
    folder.mkdir()
    yield {"device": Path("/dev/zero"), "fifo": fifo, "folder": folder}


def _base_argv(path: tuple[str, ...], mini: Path, runs: Path, url: str) -> list[str]:
    """A command line that is right in everything but the flag under test, and that contacts nothing
    but the closed port."""
    endpoint = ["--model", "m", "--base-url", url]
    return {
        ("run",): ["run", *endpoint, "--tasks", str(mini), "--run-dir", str(runs), "--sandbox", "local"],
        ("report",): ["report", "--run-dir", str(runs)],
        ("tasks", "list"): ["tasks", "list", "--tasks", str(mini)],
        ("tasks", "show"): ["tasks", "show", "answer-file", "--tasks", str(mini)],
        ("tasks", "new"): ["tasks", "new", "hostile-x"],
        ("tasks", "synth"): ["tasks", "synth", "hostile-x"],  # refused before anything is fetched
        ("tasks", "fetch"): ["tasks", "fetch"],  # --tasks refused before anything is fetched
        ("validate",): ["validate", "--tasks", str(mini), "--sandbox", "local"],
        ("serve-local",): ["serve-local"],
        ("probe",): ["probe", *endpoint, "--timeout", "5"],
        ("tooling",): ["tooling", *endpoint, "--run-dir", str(runs)],
        ("forms",): ["forms", *endpoint, "--run-dir", str(runs)],
        ("speed",): ["speed", *endpoint, "--run-dir", str(runs)],
        ("think-check",): ["think-check", *endpoint, "--run-dir", str(runs)],
        ("cold-start",): ["cold-start", "--ollama-unload", *endpoint, "--run-dir", str(runs)],
        ("classify",): ["classify"],
        ("campaign",): ["campaign"],
        ("export",): ["export", "--format", "atif", "--out", str(runs / "out")],
    }[path]


def _clean(proc: subprocess.CompletedProcess[str]) -> str | None:
    """What is wrong with how a refused input ended (None: nothing): a traceback, or no one-line error."""
    if "Traceback" in proc.stderr:
        return "traceback: " + proc.stderr[-800:]
    if proc.returncode == 0:
        return None
    last = (proc.stderr.strip().splitlines() or [""])[-1]
    if proc.returncode != 2 or "error" not in last:
        return f"exit {proc.returncode}, last line {last!r}"
    return None


@pytest.mark.parametrize("item", FILES, ids=[_id(i) for i in FILES])
def test_file_flags_refuse_special_files(item: tuple[tuple[str, ...], argparse.Action], mini_pack: Path,
                                         tmp_path: Path, closed_url: str, specials: dict[str, Path]) -> None:
    path, action = item
    base = _base_argv(path, mini_pack, tmp_path / "runs", closed_url)

    def attempt(special: Path) -> tuple[str, subprocess.CompletedProcess[str]]:
        argv = [*base, _name(action), str(special)] if action.option_strings else [*base, str(special)]
        return str(special), subprocess.run([*CLI, *argv], capture_output=True, text=True, timeout=TIMEOUT_S,
                                            check=False, cwd=tmp_path)

    with ThreadPoolExecutor(max_workers=3) as pool:  # a hang would raise TimeoutExpired, not wait forever
        done = list(pool.map(attempt, specials.values()))
    problems = {special: why for special, proc in done if (why := _clean(proc)) is not None}
    assert not problems, problems


def test_key_file_refusals_say_what_the_file_is(tmp_path: Path, closed_url: str, specials: dict[str, Path],
                                                capsys: pytest.CaptureFixture[str]) -> None:
    big = tmp_path / "big-key"
    with open(big, "wb") as fh:
        fh.truncate(1024 * 1024)  # sparse: a megabyte of zeros
    latin1 = tmp_path / "latin1-key"
    latin1.write_bytes(b"sk-\xe9t\xe9\n")
    for path, wanted in ((specials["device"], "is a device, not a regular file"),
                         (specials["fifo"], "is a FIFO (named pipe), not a regular file"),
                         (specials["folder"], "is a folder, not a regular file"),
                         (big, "1 MiB is over the limit of 64 KiB"),
                         (latin1, "not UTF-8 text")):
        assert main(["probe", "--model", "m", "--base-url", closed_url, "--api-key-file", str(path)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and f"--api-key-file {path}: " in err[0] and wanted in err[0], err


@pytest.mark.parametrize("url", ["http://[::1", "http://[::1]:99999/v1", "http://h:x/v1", "http://a b/v1",
                                 "http:///v1", "ftp://h/v1", "http://h:0/v1", "http://" + "h" * 3000])
def test_bad_base_urls_are_one_line_for_every_command(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    commands = [path for path, parser in LEAVES if any(_name(a) == "--base-url" for a in _value_actions(parser))]
    assert len(commands) >= 7
    for path in commands:
        with pytest.raises(SystemExit) as exit_info:
            main([*path, "--model", "m", "--base-url", url])
        last = capsys.readouterr().err.strip().splitlines()[-1]
        assert exit_info.value.code == 2 and "error: argument --base-url:" in last and len(last) < 300, last


def test_credentials_in_a_bad_url_are_not_shown(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["probe", "--model", "m", "--base-url", "http://user:hunter2secret@[::1/v1"])
    err = capsys.readouterr().err
    assert "hunter2secret" not in err and "REDACTED" in err


@pytest.mark.parametrize("value", [b"http://[::1", b"http://h:x/v1", b"http://\xff\xfe/v1", b"localhost:8000"])
def test_a_bad_openai_base_url_in_the_environment_is_one_line(value: bytes, mini_pack: Path,
                                                               tmp_path: Path) -> None:
    env = {k.encode(): v.encode("utf-8", "surrogateescape") for k, v in os.environ.items()}
    env[b"OPENAI_BASE_URL"] = value
    commands = [["run", "--model", "m", "--tasks", str(mini_pack), "--run-dir", str(tmp_path / "runs"),
                 "--sandbox", "local"], ["probe", "--model", "m"], ["speed", "--model", "m"]]

    def attempt(argv: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*CLI, *argv], capture_output=True, text=True, timeout=TIMEOUT_S, check=False,
                              env=env, cwd=tmp_path)

    with ThreadPoolExecutor(max_workers=3) as pool:
        for proc in pool.map(attempt, commands):
            last = (proc.stderr.strip().splitlines() or [""])[-1]
            assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-800:]
            assert last.startswith("agentic-eval: error: OPENAI_BASE_URL "), last


@pytest.mark.parametrize("key", ["sk-\u00e9t\u00e9", "sk-a\nb", "sk-\x00", "x" * 20000])
def test_keys_an_http_header_cannot_carry_are_one_line(key: str, closed_url: str,
                                                       capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["probe", "--model", "m", "--base-url", closed_url, "--api-key", key])
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert exit_info.value.code == 2 and "argument --api-key: the key given" in last and key not in last
    if "\x00" in key:
        return  # an environment variable cannot hold one
    monkeypatch.setenv("OPENAI_API_KEY", key)
    assert main(["probe", "--model", "m", "--base-url", closed_url]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("agentic-eval: error: OPENAI_API_KEY ") and key not in err[0]


@pytest.mark.parametrize("opt", ["max_tokens=99999999999", "bash_timeout_s=1e9", "temperature=3",
                                 "max_retries=1000000"])
def test_builtin_agent_opts_have_upper_bounds(opt: str, mini_pack: Path, tmp_path: Path, closed_url: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "--model", "m", "--tasks", str(mini_pack), "--run-dir", str(tmp_path / "runs"),
                 "--base-url", closed_url, "--sandbox", "local", "--agent-opt", opt])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err[-1].startswith(f"agentic-eval: error: --agent-opt {opt}: over the limit of"), err
    assert not (tmp_path / "runs").exists()


def test_cli_agent_token_opts_have_upper_bounds(mini_pack: Path, tmp_path: Path, closed_url: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "--agent", "opencode", "--model", "m", "--tasks", str(mini_pack), "--run-dir",
                 str(tmp_path / "runs"), "--base-url", closed_url, "--agent-opt", "context=99999999999"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and "--agent-opt context=99999999999: over the limit of 2,000,000" in err[-1], err


def _oracle_run(mini_pack: Path, runs: Path) -> Path:
    proc = subprocess.run([*CLI, "run", "--agent", "oracle", "--tasks", str(mini_pack), "--run-dir", str(runs),
                           "--sandbox", "local", "--json"], capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (run_dir,) = [p.parent for p in runs.glob("*/run.json")]
    return run_dir


@pytest.mark.parametrize("name", ["run.json", "trials.jsonl"])
def test_a_runs_records_that_are_special_files_are_refused(name: str, mini_pack: Path, tmp_path: Path) -> None:
    """report and run --resume read a run's records: a FIFO there would hang them, /dev/zero fill memory."""
    run_dir = _oracle_run(mini_pack, tmp_path / "runs")
    record = run_dir / name
    for make in ("fifo", "device"):
        record.unlink()
        if make == "fifo":
            os.mkfifo(record)
        else:
            record.symlink_to("/dev/zero")
        for argv in (["report", str(run_dir)], ["run", "--resume", str(run_dir)]):
            proc = subprocess.run([*CLI, *argv], capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
            err = proc.stderr.strip().splitlines()
            assert proc.returncode == 2 and len(err) == 1 and f"{name}: is a " in err[0], (argv, err)


def test_report_html_refuses_a_fifo_target(mini_pack: Path, tmp_path: Path, specials: dict[str, Path]) -> None:
    run_dir = _oracle_run(mini_pack, tmp_path / "runs")
    proc = subprocess.run([*CLI, "report", str(run_dir), "--html", str(specials["fifo"])], capture_output=True,
                          text=True, timeout=TIMEOUT_S, check=False)
    assert proc.returncode == 2 and "--html" in proc.stderr and "FIFO" in proc.stderr, proc.stderr


def test_classify_skips_an_overlong_line_and_reads_the_rest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from agentic_eval.cli import classify

    monkeypatch.setattr(classify, "MAX_LINE_CHARS", 1000)
    turn = {"request": {"messages": [{"role": "user", "content": "hi"}]},
            "response": {"choices": [{"message": {"role": "assistant", "content": "hello"}}]}}
    wire = tmp_path / "wire.jsonl"
    wire.write_text(json.dumps(turn) + "\n" + "x" * 5000 + "\n" + json.dumps(turn) + "\n")
    assert main(["classify", str(wire), "--json"]) == 1
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [o.get("label") for o in out] == ["prose", None, "prose"]
    assert out[1]["line"] == 2 and "longer than" in out[1]["error"]


def test_checkpoint_files_that_are_not_what_they_claim_are_one_line(tmp_path: Path, closed_url: str,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    import json
    import struct

    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    header = json.dumps({"w": {"dtype": "F16", "shape": [2], "data_offsets": "soon"}}).encode()
    (ckpt / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header)
    for config, wanted in (("[1, 2]", "not a model config"), ("[" * 100_000, "not a model config"),
                           ("{}", "has no valid data_offsets")):
        (ckpt / "config.json").write_text(config)
        assert main(["speed", "--model", "m", "--base-url", closed_url, "--checkpoint", str(ckpt)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and wanted in err[0], err


def test_a_run_config_that_is_not_utf8_names_its_file(mini_pack: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = _oracle_run(mini_pack, tmp_path / "runs")
    (run_dir / "run.json").write_bytes(b"\xff\xfe{")
    for argv in (["report", str(run_dir)], ["run", "--resume", str(run_dir)]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and f"{run_dir / 'run.json'}: not UTF-8 text" in err[0], err

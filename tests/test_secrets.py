"""Secrets stay with the harness: the API key is on no process's command line and reaches no agent
(each trial's agent gets its own placeholder, swapped for the key by the wire recorder), and
credentials inside --base-url are written and printed nowhere."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.endpoint import redact_url, url_secrets
from agentic_eval.testing import FakeEndpoint, ReceivedRequest, ScriptedReply, chat_body, tool_call
from tests.helpers import make_pack

KEY = "sk-real-key-8c1f4e7a"
URL_USER, URL_PASS = "alice", "pw-9d2b7c55"
SECRETS = (KEY, URL_PASS)


def _cmdlines_holding(secrets: tuple[str, ...]) -> list[str]:
    """Command lines of live processes that contain a secret."""
    hits = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if any(s in argv for s in secrets):
                hits.append(argv[:200])
    return hits


class Watcher:
    """A scripted model that also looks at every process's command line each time it is asked."""

    def __init__(self, answer: Any) -> None:
        self.answer, self.seen_in_argv, self.auth = answer, [], []

    def __call__(self, request: ReceivedRequest) -> ScriptedReply:
        self.seen_in_argv += _cmdlines_holding(SECRETS)
        self.auth.append(request.headers.get("authorization", ""))
        return self.answer(request)


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentic_eval.cli", *args], capture_output=True, text=True,
                          timeout=300, check=False, env=env)


def _everything_written(root: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in root.rglob("*") if p.is_file())


def _snoop_then_stop(request: ReceivedRequest) -> ScriptedReply:
    """The model looks for secrets with its bash tool, then stops."""
    if not any(m["role"] == "tool" for m in request.body["messages"]):
        command = "env; ps -eo args; cat /proc/*/cmdline | tr '\\0' ' ' > snoop.txt; env >> snoop.txt"
        return ScriptedReply(body=chat_body(tool_calls=[tool_call("bash", {"command": command})]))
    return ScriptedReply(body=chat_body("Done."))


def test_builtin_run_keeps_the_key_out_of_argv_and_the_models_reach(mini_pack: Path, tmp_path: Path) -> None:
    watcher = Watcher(_snoop_then_stop)
    key_file = tmp_path / "key.txt"
    key_file.write_text(KEY + "\n")
    runs = tmp_path / "runs"
    with FakeEndpoint(responder=watcher) as fake:
        proc = _cli("run", "--model", "fake-model", "--base-url", fake.base_url, "--api-key-file", str(key_file),
                    "--tasks", str(make_pack(mini_pack, 2)), "--run-dir", str(runs), "--agent-opt", "max_retries=0",
                    "--json")
    assert proc.returncode == 0, proc.stderr
    assert watcher.seen_in_argv == []
    assert watcher.auth and set(watcher.auth) == {f"Bearer {KEY}"}  # the real key went upstream, and only there
    written = _everything_written(runs) + proc.stdout + proc.stderr
    assert "snoop" in written  # the model's search is in the diff, and found nothing
    assert KEY not in written


def test_base_url_credentials_are_written_and_printed_nowhere(mini_pack: Path, tmp_path: Path) -> None:
    watcher = Watcher(lambda request: ScriptedReply(body=chat_body("Done.")))
    runs = tmp_path / "runs"
    with FakeEndpoint(responder=watcher) as fake:
        base = fake.base_url.replace("http://", f"http://{URL_USER}:{URL_PASS}@")
        proc = _cli("run", "--model", "fake-model", "--base-url", base, "--tasks", str(make_pack(mini_pack, 1)),
                    "--run-dir", str(runs), "--agent-opt", "max_retries=0", "--json")
        assert proc.returncode == 0, proc.stderr
        (run_dir,) = runs.iterdir()
        resumed = _cli("run", "--resume", str(run_dir), "--base-url", base)  # nothing left to run: prints the table
    assert resumed.returncode == 0, resumed.stderr
    written = _everything_written(runs) + proc.stdout + proc.stderr + resumed.stdout + resumed.stderr
    assert URL_PASS not in written and URL_USER not in written.replace("REDACTED", "")
    assert json.loads((run_dir / "run.json").read_text())["base_url"].startswith("http://REDACTED@127.0.0.1:")
    # Credentials in the URL are basic auth upstream (httpx's rule), never the agent's placeholder.
    assert watcher.auth == ["Basic " + base64.b64encode(f"{URL_USER}:{URL_PASS}".encode()).decode()]


def _fake_cli(tmp_path: Path) -> Path:
    """An agent CLI stand-in: reports what it was given, calls the model with it and without a key."""
    script = tmp_path / "fake-qwen"
    script.write_text(f"""#!{sys.executable}
import json, os, sys, urllib.request, urllib.error
if sys.argv[1:] == ["--version"]:
    print("qwen 0.0.1"); sys.exit(0)
home = os.environ["HOME"]
files = "".join(open(os.path.join(d, f), errors="replace").read() for d, _, fs in os.walk(home) for f in fs)
given = json.load(open(os.path.join(home, ".qwen", "settings.json")))["security"]["auth"]["apiKey"]  # not env
statuses = []
for key in (given, None):
    headers = {{"Content-Type": "application/json"}}
    if key:
        headers["Authorization"] = "Bearer " + key
    body = json.dumps({{"model": "fake-model", "messages": [{{"role": "user", "content": "hi"}}]}}).encode()
    request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", body, headers)
    try:
        statuses.append(urllib.request.urlopen(request, timeout=20).status)
    except urllib.error.HTTPError as exc:
        statuses.append(exc.code)
report = {{"key": given, "base_url": os.environ["OPENAI_BASE_URL"], "statuses": statuses,
          "argv": sys.argv, "env": dict(os.environ), "home_files": files}}
open("probe.json", "w").write(json.dumps(report))
""")
    script.chmod(0o755)
    return script


def test_cli_agents_get_a_per_trial_placeholder_that_the_recorder_swaps(mini_pack: Path, tmp_path: Path) -> None:
    watcher = Watcher(lambda request: ScriptedReply(body=chat_body("hello")))
    runs = tmp_path / "runs"
    env = dict(os.environ, OPENAI_API_KEY=KEY)
    with FakeEndpoint(responder=watcher) as fake:
        proc = _cli("run", "--agent", "qwen-code", "--agent-opt", f"bin={_fake_cli(tmp_path)}", "--model",
                    "fake-model", "--base-url", fake.base_url, "--tasks", str(make_pack(mini_pack, 1)),
                    "--attempts", "2",
                    "--run-dir", str(runs), "--keep-sandboxes", "--json", "--sandbox", "local", env=env)
    # (local: the stand-in lives in this test's private temp folder, which a confined uid cannot enter;
    # tests/test_confinement.py drives a CLI confined)
    assert proc.returncode == 0, proc.stderr
    (run_dir,) = runs.iterdir()
    reports = [json.loads((t / "sandbox" / "probe.json").read_text()) for t in sorted((run_dir / "trials").iterdir())]
    assert len(reports) == 2
    keys = [r["key"] for r in reports]
    assert all(k.startswith("ae-trial-") for k in keys) and keys[0] != keys[1]  # one placeholder per trial
    for report in reports:
        assert report["statuses"] == [200, 401]  # the placeholder works, nothing else does
        assert report["base_url"].startswith("http://127.0.0.1:")  # the recorder, not the endpoint
        seen = json.dumps(report)
        for secret in SECRETS:
            assert secret not in seen  # not in its env, argv or config files
    assert watcher.auth == [f"Bearer {KEY}"] * 2 and watcher.seen_in_argv == []
    written = _everything_written(runs) + proc.stdout + proc.stderr
    for secret in SECRETS:
        assert secret not in written


def test_api_key_file_errors_are_one_line(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.write_text("\n")
    for args, needle in ((["--api-key-file", str(tmp_path / "missing")], "cannot read"),
                         (["--api-key-file", str(empty)], "empty"),
                         (["--api-key-file", str(empty), "--api-key", "x"], "not both")):
        proc = _cli("probe", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", *args)
        assert proc.returncode == 2 and needle in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_errors_never_print_url_credentials(tmp_path: Path) -> None:
    with FakeEndpoint() as fake:
        dead = fake.base_url
    base = dead.replace("http://", f"http://{URL_USER}:{URL_PASS}@")
    proc = _cli("run", "--model", "m", "--base-url", base, "--tasks", str(tmp_path), "--run-dir", str(tmp_path / "r"))
    assert proc.returncode == 2 and URL_PASS not in proc.stderr + proc.stdout
    proc = _cli("run", "--model", "m", "--base-url", f"ftp://{URL_USER}:{URL_PASS}@x/v1")
    assert proc.returncode == 2 and "REDACTED" in proc.stderr and URL_PASS not in proc.stderr


def test_endpoint_hints_never_show_url_credentials() -> None:
    """The https-against-plain-http hint, called from Python (no CLI scrubbing on top of it)."""
    from agentic_eval.endpoint import Endpoint, EndpointError, list_models

    with FakeEndpoint() as fake:
        base = fake.base_url.replace("http://", f"https://{URL_USER}:{URL_PASS}@")
        with pytest.raises(EndpointError) as err:
            list_models(Endpoint(base, "sk-x"), timeout_s=10)
    assert "TLS handshake" in str(err.value) and URL_PASS not in str(err.value)


@pytest.mark.parametrize("url,shown,secrets", [
    ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1", []),
    ("https://u:p4ss@host/v1", "https://REDACTED@host/v1", ["u:p4ss", "p4ss"]),
    ("https://host/v1?api-key=abc123&api-version=2024", "https://host/v1?api-key=REDACTED&api-version=2024",
     ["abc123"]),
    ("https://host/v1?token=t0k3n", "https://host/v1?token=REDACTED", ["t0k3n"]),
    ("http://u:p4ss@[bad/v1", "http://REDACTED@[bad/v1", []),  # not parseable: still hidden
])
def test_redact_url(url: str, shown: str, secrets: list[str]) -> None:
    assert redact_url(url) == shown
    assert sorted(url_secrets(url)) == sorted(secrets)

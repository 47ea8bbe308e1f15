"""`run --ray`: trials spread over a real Ray cluster started here (a head without CPUs and worker nodes, each
its own raylet), inside a private network namespace holding only loopback, so that Ray, the driver and the
scripted endpoint talk over 127.0.0.1 alone. One cluster serves every scenario (tests/ray_scenarios.py);
the tests below read what it saw.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.errors import AgenticEvalError

HERE = Path(__file__).resolve().parent


def _private_network() -> str | None:
    """Why this machine cannot give the scenarios a loopback-only network namespace, or None."""
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return "needs unshare and ip (util-linux, iproute2)"
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, text=True, check=False)
    return None if probe.returncode == 0 else f"unshare -n fails here: {probe.stderr.strip()[:200]}"


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> dict[str, Any]:
    pytest.importorskip("ray", reason="the [ray] extra is not installed")
    why = _private_network()
    if why:
        pytest.skip(why)
    # Short: Ray's unix sockets live under its temp folder (work/ray/session_*/sockets/plasma_store), and a socket
    # path is limited to 107 bytes, which pytest's own folders (under xdist, .../popen-gw0/ray0) can exceed.
    work = Path(tempfile.mkdtemp(prefix="ae-ray-"))
    request.addfinalizer(lambda: shutil.rmtree(work, ignore_errors=True))
    home = tmp_path_factory.mktemp("ray-home")  # as every test's (conftest): no user config read or written
    temp = tmp_path_factory.mktemp("ray-tmp")  # the driver's and the nodes' temp folder: nothing left in /tmp
    (temp / "ray").mkdir()  # where Ray notes the cluster's address (ray_current_cluster)
    env = {**os.environ, "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1", "TMPDIR": str(temp)}
    env.pop("COLUMNS", None)
    done = subprocess.run(
        ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$0" "$1" "$2"', sys.executable,
         str(HERE / "ray_scenarios.py"), str(work)],
        capture_output=True, text=True, timeout=290, check=False, env=env)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_same_trial_ids_and_outcomes_as_a_local_run_spread_over_two_nodes(seen: dict[str, Any]) -> None:
    assert seen["oracle_ray"] == seen["oracle_local"] and set(seen["oracle_ray"].values()) == {"pass"}
    assert seen["nop_ray"] == seen["nop_local"] and set(seen["nop_ray"].values()) == {"fail"}
    assert len(seen["oracle_nodes"]) == 2  # -j 3 over a 1-CPU and a 2-CPU node: both ran trials
    for name in ("t0", "t1", "t2"):  # the driver wrote each trial's folder from what its node returned
        assert {f"trials/{name}.a1/{f}" for f in ("diff.patch", "grader.txt", "tree.json")} <= set(seen["oracle_files"])


def test_the_key_reaches_the_endpoint_through_the_nodes_recorder_and_nowhere_else(seen: dict[str, Any]) -> None:
    record = seen["builtin"][0]
    assert record["outcome"] == "pass" and record["requests"] == 3 and record["node"]
    assert seen["builtin_auth"] == ["Bearer sk-ray-test-0123456789abcdef"]
    assert {"wire.jsonl", "transcript.jsonl", "diff.patch", "grader.txt", "tree.json"} <= set(seen["builtin_files"])
    assert record["files"]["wire"] == "trials/t0.a1/wire.jsonl"
    assert seen["key_in_run_folder"] is False


def test_a_campaign_files_ray_address_runs_its_trials_on_the_cluster(seen: dict[str, Any]) -> None:
    [record] = seen["campaign"]
    assert record["task_id"] == "t1" and record["outcome"] == "pass" and record["node"]


def test_the_package_reaches_the_nodes_by_itself(seen: dict[str, Any]) -> None:
    """The nodes ran the driver's copy of the package (the job's Ray working_dir), built-in packs at its _builtin/."""
    assert "runtime_resources" in seen["node_package"] and seen["node_package"].endswith("agentic_eval/__init__.py")
    assert seen["node_builtin"].endswith("agentic_eval/_builtin")


def test_a_grader_importing_gradelib_passes_on_a_node_from_an_editable_install_too(seen: dict[str, Any]) -> None:
    """The fix and the grader import gradelib, gradelib agentic_eval: the node's confined grader imports the
    package the node runs, also when this package is an editable install (a .pth naming a source checkout)."""
    [record] = seen["gradelib"]
    assert (record["outcome"], record["detail"]) == ("pass", "fix_applied"), (record, seen["gradelib_grader"])
    assert record["node"]


def test_a_node_lacking_what_a_grader_requires_ends_the_trial_naming_itself(seen: dict[str, Any]) -> None:
    [record] = seen["refused"]
    assert record["outcome"] == "agent_error" and record["fault"] == "machine"
    assert record["node"].startswith(seen["small_node"])
    assert f"node {record['node']} cannot run this trial" in record["detail"]
    assert "ae-ray-tool-" in record["detail"] and record["task_digest"]


def test_the_sandbox_backend_is_made_on_each_node_bwrap_unless_named(seen: dict[str, Any]) -> None:
    assert seen["builtin"][0]["sandbox"] == "bwrap"  # no --sandbox: bwrap on the node, never a silent local
    [record] = seen["no_engine"]  # the driver made no engine of its own; the node could not reach this one
    assert record["outcome"] == "agent_error" and record["fault"] == "machine" and record["sandbox"] == "docker"
    assert f"node {record['node']} cannot run this trial: cannot reach a Docker engine" in record["detail"]


def test_a_node_killed_mid_trial_runs_it_again_elsewhere_and_says_so(seen: dict[str, Any]) -> None:
    [record] = seen["retried"]
    assert record["outcome"] == "pass"
    assert f"after node {seen['killed_first']}" in record["detail"] and "was lost mid-trial" in record["detail"]
    assert not record["node"].startswith(seen["killed_first"])


def test_a_trial_lost_twice_is_unscored_with_the_node_and_resume_reruns_it(seen: dict[str, Any]) -> None:
    [lost] = seen["lost"]
    assert lost["outcome"] == "agent_error" and lost["fault"] == "machine"
    assert lost["node"].startswith(seen["killed_third"]) and seen["killed_second"] in lost["detail"]
    first, again = seen["resumed"]
    assert first == lost and again["outcome"] == "pass" and again["trial_id"] == lost["trial_id"]


def test_without_ray_or_with_a_bad_address_one_line_says_how_to_fix_it(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from agentic_eval.runner.cluster import RAY_INSTALL, check_ray_address, import_ray

    assert check_ray_address("127.0.0.1:6379") == "127.0.0.1:6379" and check_ray_address("auto") == "auto"
    with pytest.raises(AgenticEvalError, match="HOST:PORT"):
        check_ray_address("not an address")
    from agentic_eval.cli import main

    code = main(["run", "--agent", "nop", "--tasks", str(HERE / "packs" / "mini"), "--ray", "not an address",
                 "--run-dir", str(tmp_path)])
    assert code != 0 and "--ray 'not an address': give the head node's HOST:PORT" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # refused before a run folder was claimed
    monkeypatch.setitem(sys.modules, "ray", None)  # as if the extra were not installed
    with pytest.raises(AgenticEvalError, match=RAY_INSTALL.replace("[", r"\[").replace("]", r"\]")):
        import_ray()


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_address_where_nothing_answers_is_one_line_and_exit_2_before_a_run_folder(tmp_path: Path) -> None:
    """`ray.init` there retries for minutes, deaf to Ctrl-C: the run asks the address first, bounded. Inside a
    loopback-only network, as the cluster's scenarios run (Ray reads 127.0.0.1 as this machine's address)."""
    pytest.importorskip("ray", reason="the [ray] extra is not installed")
    why = _private_network()
    if why:
        pytest.skip(why)
    runs = tmp_path / "runs"
    env = {**os.environ, "HOME": str(tmp_path), "TMPDIR": str(tmp_path)}
    done = subprocess.run(
        ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", sys.executable, "-m", "agentic_eval",
         "run", "--agent", "nop", "--tasks", str(HERE / "packs" / "mini"), "--ray", f"127.0.0.1:{_free_port()}",
         "--run-dir", str(runs)],
        capture_output=True, text=True, timeout=120, check=False, env=env)
    lines = [line for line in done.stderr.splitlines() if "network_util.cc" not in line]  # Ray's own warning
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert "cannot connect to 127.0.0.1:" in lines[0] and "is `ray start --head` running there" in lines[0]
    assert not runs.exists()


def test_a_port_that_holds_its_answer_or_is_no_ray_cluster_is_one_line_within_the_bound() -> None:
    import socket
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from agentic_eval.runner.cluster_probe import probe_cluster

    with socket.socket() as silent:  # accepts connections (the kernel does) and never says a word
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        with pytest.raises(AgenticEvalError, match="nothing answered at 127.0.0.1:[0-9]+ within 0.5 s"):
            probe_cluster(f"ray://127.0.0.1:{silent.getsockname()[1]}", timeout_s=0.5)
    web = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    try:
        with pytest.raises(AgenticEvalError, match="answers, but not as a Ray cluster"):
            probe_cluster(f"ray://127.0.0.1:{web.server_address[1]}")
    finally:
        web.shutdown()
        web.server_close()


def test_a_driver_killed_mid_run_resumes_from_its_run_folder(seen: dict[str, Any]) -> None:
    assert seen["killed_driver_records"] == []  # killed mid-trial: nothing recorded for it
    [record] = seen["killed_driver_resumed"]
    assert record["outcome"] == "pass" and record["node"]

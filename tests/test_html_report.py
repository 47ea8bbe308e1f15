"""`report --html` rendered in a real browser: Debian's headless Chromium opens the page of a small real
run (oracle, and the built-in agent against a scripted model that writes invented XML and tries to
smuggle markup into the report), with every network request sent to a recording proxy on 127.0.0.1.
The charts must draw, the numbers must be in the DOM, and the page must load nothing."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from agentic_eval.cli import main
from agentic_eval.testing import FakeEndpoint, ReceivedRequest, ScriptedReply, chat_body
from tests.helpers import SEED_XML, LoopbackServer, make_pack, run_cli

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
INJECTED = '<img src="http://external.invalid/pixel.png"><script>document.title="owned"</script>'
"""What a hostile model writes in its reply: markup that would load a resource or run a script if unescaped."""

needs_chromium = pytest.mark.skipif(
    CHROMIUM is None and os.environ.get("CI") != "true",
    reason="Debian's chromium is not installed (scripts/install.sh installs it)",
)


class RecordingProxy(LoopbackServer):
    """An HTTP proxy on 127.0.0.1 that answers 403 to everything and remembers what was asked."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _refuse(self) -> None:
                proxy.seen.append(f"{self.command} {self.path}")
                self.send_response(403)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_POST = do_HEAD = do_CONNECT = do_PUT = do_OPTIONS = _refuse

        super().__init__(Handler)


QUIET_BROWSER = ("--disable-features=NetworkTimeServiceQuerying,OptimizationHints,MediaRouter,Translate",
                 "--disable-client-side-phishing-detection", "--disable-default-apps", "--disable-domain-reliability",
                 "--no-pings", "--disable-extensions", "--no-default-browser-check", "--disable-breakpad")
"""The browser's own chatter (clock, optimisation hints, ...) off, as far as flags turn it off."""
BROWSER_SERVICES = ("update.googleapis.com", "accounts.google.com", "clients2.google.com")
"""What Chromium itself still asks for whatever the page (its updater and accounts), left out of the check."""


def page_requests(seen: list[str]) -> list[str]:
    return [r for r in seen if not any(host in r.split(" ", 1)[1].split("/")[:3] or
                                       r.split(" ", 1)[1].startswith(host + ":") for host in BROWSER_SERVICES)]


def chromium(page: Path, profile: Path, proxy: str, *extra: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None, "chromium is not installed: run scripts/install.sh (CI=true requires it)"
    profile.mkdir()
    args = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
            *QUIET_BROWSER,
            f"--proxy-server=http://{proxy}", "--proxy-bypass-list=<-loopback>", "--virtual-time-budget=10000",
            *extra, page.as_uri()]
    return subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)


def hostile_xml_writer(request: ReceivedRequest) -> ScriptedReply:
    return ScriptedReply(body=chat_body(f"{SEED_XML}\n{INJECTED}"))


@pytest.fixture(scope="module")
def report_page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, Any]]]:
    """A small real campaign (3 tasks: oracle 2 attempts, nop, builtin against a hostile model) and its page."""
    root = tmp_path_factory.mktemp("html")
    mini = root / "mini"
    shutil.copytree(Path(__file__).parent / "packs" / "mini", mini)
    pack = make_pack(mini, 3)
    runs = root / "runs"
    _, oracle = run_cli("run", "--model", "m", "--agent", "oracle", "--tasks", str(pack), "--run-dir", str(runs),
                        "--attempts", "2", "--json")
    with FakeEndpoint(responder=hostile_xml_writer) as fake:
        _, xml = run_cli("run", "--model", "fake-model", "--base-url", fake.base_url, "--tasks", str(pack),
                         "--run-dir", str(runs), "--agent-opt", "max_retries=0", "--json")
    page = root / "report.html"
    assert main(["report", "--run-dir", str(runs), "--html", str(page)]) == 0
    yield page, {"oracle": oracle, "xml": xml}


def test_the_page_is_self_contained_and_escapes_what_the_model_wrote(report_page: tuple[Path, Any]) -> None:
    page, runs = report_page
    text = page.read_text(encoding="utf-8")
    assert "3/3 = 100 % (95 % CI 29-100)" in text and "0/3 = 0 % (95 % CI 0-71)" in text
    assert "k=2: 100 % / 100 %" in text  # the oracle's two attempts
    assert runs["xml"]["run_id"] in text and "invented_xml" in text  # the classified turns are in the details
    assert "<b>lenient_text_calls</b>: false" in text and "<b>base_url</b>: http://127.0.0.1:" in text  # config
    assert INJECTED not in text and html_escaped(INJECTED) in text
    # nothing is fetched from anywhere: no src/href to a network address, and the CSP forbids it anyway
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text)
    assert "Content-Security-Policy" in text and "default-src 'none'" in text
    assert 0.5e6 < len(text.encode()) < 3e6  # the inlined chart bundle, not Plotly's 4.8 MB


def html_escaped(s: str) -> str:
    import html

    return html.escape(s, quote=True)


@needs_chromium
def test_chromium_draws_the_charts_and_loads_nothing(report_page: tuple[Path, Any], tmp_path: Path) -> None:
    page, _runs = report_page
    with RecordingProxy() as proxy:
        dom = chromium(page, tmp_path / "profile-dom", proxy.address, "--dump-dom")
        shot = chromium(page, tmp_path / "profile-shot", proxy.address, "--window-size=1280,2000",
                        f"--screenshot={tmp_path / 'report.png'}")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert shot.returncode == 0, shot.stderr[-2000:]
    html = dom.stdout
    # every chart drew: an SVG with marks inside each chart's div, and none failed
    charts = re.findall(r"<div class=\"chart[^\"]*\" id=\"chart-([\w-]+)\"(.*?)</svg>", html, flags=re.DOTALL)
    names = {name for name, _ in charts}
    assert {"pass-rate", "outcomes"} <= names, names
    for name, body in charts:
        assert "<svg" in body and re.search(r'class="mark-(rect|rule)', body), f"chart {name} drew no marks"
    assert not re.search(r"<div class=\"chart failed", html)
    # the numbers are in the DOM, in the tables and the charts' own text
    assert "3/3 = 100 % (95 % CI 29-100)" in html and "0/3 = 0 % (95 % CI 0-71)" in html
    assert re.search(r"<text[^>]*>tasks passed, % with 95 % CI</text>", html)
    assert "% of scored tasks" in html
    # the hostile reply stayed text: its script did not run, its image was never requested
    assert "owned" not in re.search(r"<title>(.*?)</title>", html).group(1)  # type: ignore[union-attr]
    assert page_requests(proxy.seen) == [], proxy.seen
    png = (tmp_path / "report.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000


@needs_chromium
def test_the_proxy_sees_what_a_page_loads(tmp_path: Path) -> None:
    """The check above can fail: a page with one external image is caught."""
    page = tmp_path / "leaky.html"
    page.write_text('<!doctype html><p>hello</p><img src="http://canary.invalid/pixel.png">', encoding="utf-8")
    with RecordingProxy() as proxy:
        assert chromium(page, tmp_path / "profile", proxy.address, "--dump-dom").returncode == 0
    assert page_requests(proxy.seen) == ["GET http://canary.invalid/pixel.png"]


def test_html_needs_a_path_it_can_write(report_page: tuple[Path, Any], tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    page, runs = report_page
    blocker = tmp_path / "file"
    blocker.write_text("")
    run_dir = page.parent / "runs" / runs["oracle"]["run_id"]
    assert main(["report", str(run_dir), "--html", str(blocker / "report.html")]) == 2
    assert "error" in capsys.readouterr().err


@pytest.mark.parametrize(("model", "spreads", "note"), [
    ("a", {}, "best, tied"),
    ("b", {}, "-1.2 pts (no repeated runs: spread unknown)"),
    ("b", {"a": 1.4}, "-1.2 pts: within noise (spread 1.4 pts)"),
    ("c", {"a": 1.4, "c": 0.5}, "-30.0 pts (beyond the measured spread of 1.4 pts)"),
    ("b", {"b": 0.0}, "-1.2 pts (beyond the measured spread of 0.0 pts)"),  # measured as 0.0 is not unknown
    ("d", {}, "best, tied"),
])
def test_instrument_gaps_inside_the_spread_are_noise(model: str, spreads: dict[str, float], note: str) -> None:
    from agentic_eval.report.html_sections import vs_best_note

    assert vs_best_note({"a": 95.0, "b": 93.8, "c": 65.0, "d": 95.0}, spreads, model) == note
    assert vs_best_note({"a": 95.0, "b": 93.8}, spreads, "a") == "best"


def test_instrument_spread_counts_runs_with_the_latest_settings_only() -> None:
    from agentic_eval.report.html_sections import instrument_spread
    from agentic_eval.results.instrument_runs import InstrumentRun

    def run(score: float, cases: int, at: str) -> InstrumentRun:
        return InstrumentRun(kind="tooling", run_id=at, created_at=at, model="m", base_url="u",
                             headline={"score_pct": score}, settings={"cases": cases})

    runs = [run(91.0, 370, "1"), run(95.0, 370, "2"), run(50.0, 37, "3"), run(93.6, 370, "4")]
    assert instrument_spread(runs, runs[-1]) == (4.0, 3)
    assert instrument_spread(runs, runs[2]) is None

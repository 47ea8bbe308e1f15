"""Guards for the package layout: what a move must never change, and what the layout promises.

The digests below were measured before the layout change (commit f4e204d) and must stay fixed: the
battery's cases, the built-in agent's system prompt at its sizes, and the form matrix's tool catalog are
what recorded runs were measured with, so a refactor that changes a byte of them changes the benchmark.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from dataclasses import asdict

BATTERY_DIGEST = "4e49b3585fd413ef"  # cases_digest(generate_cases(45739))
PROMPT_DIGESTS = {  # sha256 prefix of build_system_prompt(size)
    None: "b264ff9855ef9387",
    2000: "ef682989420abfae",
    9300: "05b91e8beecfda93",
    30000: "e8cbc1af3d0f8711",
}
FORM_CATALOG_DIGEST = "cbe2b9011e8f520f"  # sha256 prefix of the 500-tool form catalog as sorted JSON

HEAVY = ("httpx", "pydantic", "rich", "openai", "jsonschema", "docker", "git", "uvicorn")


def _run(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return out.stdout.strip()


def test_battery_cases_are_byte_identical() -> None:
    assert _run("from agentic_eval.instruments.battery import cases_digest, generate_cases;"
                "print(cases_digest(generate_cases(45739)))") == BATTERY_DIGEST


def test_system_prompts_are_byte_identical() -> None:
    from agentic_eval.agents.builtin.prompts import build_system_prompt

    for size, digest in PROMPT_DIGESTS.items():
        text = build_system_prompt(size)
        assert hashlib.sha256(text.encode()).hexdigest()[:16] == digest, size


def test_form_catalog_is_byte_identical() -> None:
    from agentic_eval.instruments.forms import form_catalog

    blob = json.dumps([asdict(t) for t in form_catalog(500)], sort_keys=True).encode()
    assert hashlib.sha256(blob).hexdigest()[:16] == FORM_CATALOG_DIGEST


def test_help_imports_nothing_heavy() -> None:
    """`agentic-eval --help` builds the parser only: none of the heavy libraries may load for it."""
    code = ("import sys; from agentic_eval.cli import build_parser; build_parser(); import agentic_eval;"
            f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))")
    assert _run(code) == ""

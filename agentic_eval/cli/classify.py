"""`agentic-eval classify WIRE.jsonl`: label every model turn of a wire log.

Each input line is an object with `request` and `response` (a wire recorder record has both).
Lines whose response is not a model turn (a model list, an error, no response) are reported as
skipped. A bad line is reported on stderr with its number (the first SHOWN_BAD_LINES, then a count);
the others are still classified, and the exit status is 1. A file with no good line at all (not a
wire log) is one error line instead. The file must be a regular file (not a FIFO, a device or a
folder); a line longer than MAX_LINE_CHARS is a bad line, skipped without being held in memory.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentic_eval.errors import AgenticEvalError

if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import TextIO

    from agentic_eval.classify.turn import TurnClassification
    from agentic_eval.wire.refs import RequestResolver

MAX_LINE_CHARS = 64 * 1024 * 1024
"""The longest wire log line read: a request carrying a 2,000,000-token context is about 8 MB."""

_GIVE = 'give a wire log (the runner\'s wire.jsonl) or a JSONL file of {"request": ..., "response": ...} objects'
"""What `classify` reads, said after why a file is not it."""
SHOWN_BAD_LINES = 10
"""Bad lines named one by one on stderr; the rest are counted in one line (a file that is not a wire log
would otherwise print a line per line of it)."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("classify", help="label each model turn of a wire log (real vs text-written tool calls)")
    p.add_argument("wire", metavar="WIRE.jsonl", help="a wire log, or JSONL of {request, response} objects")
    p.add_argument("--json", action="store_true", help="one JSON object per input line")
    p.set_defaults(handler=handle)


def classify_line(line: str, resolver: RequestResolver | None = None) -> dict[str, Any]:
    """The JSON output for one input line: `{id, label, flags, family}`, or with `error` (a bad line)
    or `skipped` (not a model turn). With `resolver` (one per file, lines in order), a request the
    wire recorder stored by reference to an earlier line is made whole first."""
    import json

    from agentic_eval.classify.turn import NotAModelTurn, classify_turn, is_model_turn

    try:
        record = json.loads(line)
    except RecursionError:
        return {"id": None, "error": "not readable: JSON nested too deep"}
    except ValueError as exc:
        return {"id": None, "error": f"not JSON: {exc}"}
    if not isinstance(record, dict):
        return {"id": None, "error": f"expected a JSON object, got {type(record).__name__}"}
    line_id = record.get("id") if isinstance(record.get("id"), str | int) else None
    missing = [key for key in ("request", "response") if key not in record]
    if missing:
        return {"id": line_id, "error": f"missing key(s): {', '.join(missing)}"}
    request, response = record["request"], record["response"]
    if resolver is not None:
        request, problem = resolver.resolve(line_id, request, record.get("request_ref"), response)
        if problem:
            return {"id": line_id, "error": problem}
    try:
        if not is_model_turn(response):
            reason = record.get("error") or f"not a model turn ({record.get('method', '')} {record.get('path', '')})"
            return {"id": line_id, "label": None, "flags": [], "family": None, "skipped": str(reason).strip()}
        result = classify_turn(request if isinstance(request, dict) else None, response)
    except NotAModelTurn as exc:  # a reply of the wrong shape
        return {"id": line_id, "error": str(exc)}
    except RecursionError:
        return {"id": line_id, "error": "cannot classify: the record nests too deep"}
    except Exception as exc:  # noqa: BLE001 - a record of any shape is one bad line, never a traceback
        return {"id": line_id, "error": f"cannot classify: {type(exc).__name__}: {exc}"}
    return {"id": line_id, "label": result.label, "flags": list(result.flags), "family": result.family,
            "text_tool_calls": [{"name": call.name, "arguments": call.arguments, "family": call.family,
                                 "parsers": call.parsers, "parsers_other_arguments": call.parsers_other_arguments,
                                 "offered": call.offered, "arguments_problem": call.arguments_problem,
                                 "in_reasoning": call.in_reasoning} for call in result.text_calls],
            "diagnosis": result.diagnosis, "diagnosis_note": result.diagnosis_note,
            "_figures": _turn_figures(result),
            "_model": request.get("model") if isinstance(request, dict) else None}


def _turn_figures(result: TurnClassification) -> dict[str, Any]:
    """What the file's diagnosis counts of one turn (dropped from the output)."""
    from agentic_eval.classify.diagnosis import call_figures

    return call_figures([result]).model_dump()


def handle(args: argparse.Namespace) -> int:
    """Run the command: `args.wire` is the file, `args.json` picks JSON lines over tables."""
    import json

    from agentic_eval.inputs import special_file_problem
    from agentic_eval.wire.refs import RequestResolver

    path = Path(args.wire)
    problem = special_file_problem(path)
    if problem is not None:
        raise AgenticEvalError(
            f"{path}: {problem}; {_GIVE}"
        )
    outputs: list[dict[str, Any]] = []
    bad_lines = 0
    held: list[tuple[int, str]] = []  # bad lines' errors, printed once a good line shows the file is a wire log
    resolver = RequestResolver()
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(_lines(handle), start=1):
                if line is not None and not line.strip():
                    continue
                output: dict[str, Any] = (
                    classify_line(line, resolver) if line is not None else
                    {"id": None, "error": f"line longer than {MAX_LINE_CHARS:,} characters: not read"})
                if "error" in output:
                    bad_lines += 1
                    output["error"] = (str(output["error"]).splitlines() or [""])[0][:300]
                    output["line"] = number
                    if bad_lines <= SHOWN_BAD_LINES:
                        held.append((number, output["error"]))
                else:  # the file holds wire records: its bad lines are worth naming
                    held = _flush(path, held)
                outputs.append(output)
                if args.json:
                    print(json.dumps({k: v for k, v in output.items() if not k.startswith("_")}))
        if outputs and bad_lines == len(outputs):
            raise AgenticEvalError(f"{path}: no line of it is a wire record (line {held[0][0]}: {held[0][1]}); "
                                   f"{_GIVE}")
        _flush(path, held)
        if bad_lines > SHOWN_BAD_LINES:
            print(f"agentic-eval: {path}: {bad_lines - SHOWN_BAD_LINES} more bad lines not shown"
                  + ("" if args.json else " (--json gives each line's error)"), file=sys.stderr)
        if not args.json:
            _print_tables(path, outputs, bad_lines)
    except BrokenPipeError:  # the reader stopped early (`| head`): not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 1 if bad_lines else 0


def _flush(path: Path, held: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Print the held bad lines' errors (number, error); an empty list to hold the next ones in."""
    for number, error in held:
        print(f"agentic-eval: {path}:{number}: {error}", file=sys.stderr)
    return []


def _lines(handle: TextIO) -> Iterator[str | None]:
    """The file's lines, each at most MAX_LINE_CHARS long; None for a longer one (read past, not kept)."""
    while True:
        line = handle.readline(MAX_LINE_CHARS + 1)
        if not line:
            return
        if len(line) <= MAX_LINE_CHARS or line.endswith("\n"):
            yield line
            continue
        while line and not line.endswith("\n"):  # the rest of the overlong line, a piece at a time
            line = handle.readline(1024 * 1024)
        yield None


def _print_tables(path: Path, outputs: list[dict[str, Any]], bad_lines: int) -> None:
    from collections import Counter

    from rich.console import Console
    from rich.table import Table

    from agentic_eval.classify.turn import LABELS

    labels = Counter(output["label"] for output in outputs if output.get("label"))
    families = Counter(output["family"] for output in outputs if output.get("family"))
    flags = Counter(flag for output in outputs for flag in output.get("flags", ()))
    turns = sum(labels.values())
    skipped = sum(1 for output in outputs if "skipped" in output)

    by_label = Table()
    by_label.add_column("label")
    by_label.add_column("turns", justify="right")
    by_label.add_column("share", justify="right")
    for label in LABELS:
        share = f"{100 * labels[label] / turns:.0f} %" if turns else "-"
        by_label.add_row(label, str(labels[label]), share)
    console = Console()
    console.print(f"{path.name}: {turns} model turns, {skipped} lines skipped (no model turn), {bad_lines} bad lines")
    console.print(by_label)
    if families:
        by_family = Table()
        by_family.add_column("text tool call family")
        by_family.add_column("turns", justify="right")
        for family, count in families.most_common():
            by_family.add_row(family, str(count))
        console.print(by_family)
    if flags:
        console.print("flags: " + ", ".join(f"{flag} {count}" for flag, count in flags.most_common()))
    for line in diagnosis_words(outputs):
        console.print(line, markup=False, soft_wrap=True)


def diagnosis_words(outputs: list[dict[str, Any]]) -> list[str]:
    """The text calls in words: per turn with any, what it held, which engine parsers read it, and its
    diagnosis; then the file's diagnosis (agentic_eval.classify.diagnosis) with the figures it rests on."""
    from collections import Counter

    from agentic_eval.classify.diagnosis import diagnose
    from agentic_eval.results.records import TextCallFigures, TurnCounts

    lines = []
    figures = TextCallFigures()
    for number, output in enumerate(outputs, start=1):
        figures = figures.merged(TextCallFigures(**output.get("_figures") or {}))
        for call in output.get("text_tool_calls") or ():
            readers = ", ".join(call["parsers"]) or "no engine parser"
            differ = f" (other arguments: {', '.join(call['parsers_other_arguments'])})" \
                if call["parsers_other_arguments"] else ""
            lines.append(f"turn {output.get('id') or number}: {call['name'] or '(no name)'} written as text "
                         f"({call['family']}), read by {readers}{differ}")
        if output.get("diagnosis"):
            lines.append(f"  diagnosis: {output['diagnosis']}: {output['diagnosis_note']}")
    labels = Counter(output["label"] for output in outputs if output.get("label"))
    families = Counter(output["family"] for output in outputs if output.get("family"))
    models = Counter(output["_model"] for output in outputs if isinstance(output.get("_model"), str))
    verdict = diagnose(figures, TurnCounts(**{k: labels.get(k, 0) for k in ("tool_call", "text_tool_call", "prose",
                                                                             "empty")}), dict(families),
                       model=models.most_common(1)[0][0] if models else None)
    if verdict is not None:
        lines.append(f"diagnosis: {verdict.text}")
        lines += [f"  {line}" for line in verdict.enable if line not in verdict.text]
        lines.append("  rests on: " + "; ".join(verdict.rests_on))
    return lines

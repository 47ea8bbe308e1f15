"""Why a model's tool calls came back as text, and whose fix it is: pure functions on classified turns.

Three answers, each resting on figures the classifier counted (`TextCallFigures`):

    server_config    the model writes one format consistently, it reads cleanly against the offered tools,
                     and the endpoint returned it as text: an engine parser reads it, enable that parser
                     (the exact restart line for vLLM, SGLang, llama.cpp, Ollama);
    parser_mismatch  the endpoint parsed some calls itself and returned others as text that another parser
                     reads: its parser is not the one for the model's format (or not for all of it); held
                     against the parser the engines' docs recommend for the model (classify/documented.py,
                     from the served name or the calls' ids): the server runs another than the documented one,
                     or the model writes a family its documented parser does not read;
    model            calls no parser reads (an invented format), tools that were not offered, arguments that
                     fail the schema, calls in the reasoning, or a format held with a short prompt and lost
                     under the agent's: no server flag fixes this.

The engine parsers themselves (which would extract what) are agentic_eval.classify.parsers.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from agentic_eval.results.records import TextCallFigures, TurnCounts

if TYPE_CHECKING:
    from agentic_eval.classify.documented import Documented
    from agentic_eval.classify.turn import TextToolCall, TurnClassification

__all__ = ["CONSISTENT", "Diagnosis", "ShortPrompt", "attach_readers", "best_parser", "call_figures", "diagnose",
           "enable_lines", "resolve_parser", "turn_diagnosis"]

Kind = Literal["server_config", "parser_mismatch", "model"]
CONSISTENT = 0.9
"""Share of the text calls one parser must read, cleanly, for the model's format to count as consistent."""
ENGINES = ("vllm", "sglang", "llama.cpp", "ollama")
ENGINE_NAMES = {"vllm": "vLLM", "sglang": "SGLang", "llama.cpp": "llama.cpp", "ollama": "Ollama"}


def resolve_parser(name: str) -> str:
    """The engine parser key `name` names: a key ('vllm:hermes', 'sglang:qwen25'), or a bare parser name
    ('hermes': vLLM's first, then SGLang's, llama.cpp's, Ollama's). An unknown name is a one-line error naming
    the close ones."""
    import difflib

    from agentic_eval.classify.parsers import PARSERS
    from agentic_eval.errors import AgenticEvalError

    wanted = name.strip()
    if wanted in PARSERS:
        return wanted
    for engine in (*ENGINES, *sorted({p.engine for p in PARSERS.values()} - set(ENGINES))):
        key = f"{engine}:{wanted}"
        if key in PARSERS:
            return key
    names = sorted(set(PARSERS) | {p.name for p in PARSERS.values()})
    close = difflib.get_close_matches(wanted, names, n=5, cutoff=0.5)
    hint = (f"did you mean {', '.join(close)}?" if close
            else "known: " + ", ".join(sorted({p.name for p in PARSERS.values()})))
    raise AgenticEvalError(f"--emulate-parser {wanted!r}: no such engine tool parser; {hint} "
                           "(a bare name, or engine:name such as vllm:hermes)")


def _request_tools(request: Mapping[str, Any] | None) -> list[Mapping[str, Any]] | None:
    tools = request.get("tools") if isinstance(request, Mapping) else None
    return [t for t in tools if isinstance(t, Mapping)] if isinstance(tools, list) else None


def _same_name(written: str | None, parsed: str) -> bool:
    import re

    def key(name: str) -> str:
        return re.sub(r"[_\-]", "", re.sub(r"^(?:functions|default_api|tools)\.", "", name)).lower()

    return written is not None and key(written) == key(parsed)


def attach_readers(calls: Sequence[TextToolCall], text: str, request: Mapping[str, Any] | None) -> None:
    """Fill each call's `parsers` (and `parsers_other_arguments`): the engine parsers whose extraction of `text`
    holds a call of the same name, matched in order. `calls` are the text calls found in `text`."""
    from agentic_eval.classify.parsers import readers

    for extraction in readers(text, _request_tools(request)):
        taken: set[int] = set()
        for parsed in extraction.calls:
            index = next((i for i, call in enumerate(calls) if i not in taken and _same_name(call.name, parsed.name)),
                         None)
            if index is None:
                continue
            taken.add(index)
            call = calls[index]
            call.parsers.append(extraction.parser)
            if call.arguments is not None and dict(parsed.arguments) != call.arguments:
                call.parsers_other_arguments.append(extraction.parser)


def _call_fault(call: TextToolCall) -> str | None:
    """What about one text call no server flag fixes, or None."""
    if call.in_reasoning:
        return "a call written in the reasoning, which no tool parser reads"
    if call.truncated and not call.parsers:
        return "a call cut short before it closed, which no parser reads"
    if call.name and not call.offered:
        return f"a call to {call.name!r}, a tool the request did not offer"
    if not call.parsers:
        return f"a call in a format no engine parser reads ({call.family})"
    if call.arguments_problem:
        return f"arguments no tool accepts ({call.arguments_problem})"
    return None


def turn_diagnosis(calls: Sequence[TextToolCall], *, structured: bool) -> tuple[Kind | None, str]:
    """One turn's diagnosis and its note: None for a turn without text calls."""
    if not calls:
        return None, ""
    faults = [fault for call in calls if (fault := _call_fault(call))]
    if faults:
        return "model", f"{faults[0]}: no server flag fixes this"
    common = [p for p in calls[0].parsers if all(p in call.parsers for call in calls[1:])]
    common.sort(key=lambda key: _rank(key, 1, {calls[0].family: 1}))
    shown = ", ".join(common[:4]) + (f" and {len(common) - 4} more" if len(common) > 4 else "")
    if structured:
        return "parser_mismatch", (f"the server parsed a call of this turn but left {len(calls)} as text"
                                   + (f", which {shown} would read" if common else ""))
    return "server_config", (f"read by {shown}: the server returned as text what that parser would have made a "
                             "call" if common else "each call is read by some engine parser, none reads them all")


def call_figures(turns: Iterable[TurnClassification]) -> TextCallFigures:
    """Count the text calls of classified turns for the diagnosis."""
    figures = TextCallFigures()
    readers: dict[str, int] = {}
    same: dict[str, int] = {}
    ids: dict[str, int] = {}
    for turn in turns:
        if turn.label == "tool_call" and turn.text_calls:
            figures.mixed_turns += 1
        for style in turn.call_id_styles:
            ids[style] = ids.get(style, 0) + 1
        for call in turn.text_calls:
            figures.calls += 1
            for parser in call.parsers:
                readers[parser] = readers.get(parser, 0) + 1
                if parser not in call.parsers_other_arguments:
                    same[parser] = same.get(parser, 0) + 1
            if call.truncated and not call.parsers:
                figures.truncated += 1
            if call.in_reasoning:
                figures.in_reasoning += 1
            elif not call.parsers:
                figures.unread += 1
            if call.name and not call.offered:
                figures.unknown_tool += 1
            elif call.offered and call.arguments_problem:
                figures.bad_arguments += 1
    figures.readers = dict(sorted(readers.items(), key=lambda kv: (-kv[1], kv[0])))
    figures.same_arguments = dict(sorted(same.items(), key=lambda kv: (-kv[1], kv[0])))
    figures.structured_ids = dict(sorted(ids.items()))
    return figures


class ShortPrompt(BaseModel):
    """What the model did with a short prompt (the probe, or the unpadded built-in agent), beside the run."""

    source: str = Field(description="Where the figures come from, e.g. 'probe' or 'builtin, no padding'.")
    tool_call: int = Field(description="Turns with a structured call.")
    text_tool_call: int = Field(description="Turns with a call written as text.")


class Diagnosis(BaseModel):
    """Whose fix it is that the model's tool calls came back as text, from figures."""

    kind: Kind
    text: str = Field(description="The diagnosis in words.")
    rests_on: list[str] = Field(default_factory=list, description="The figures it rests on, each with its numbers.")
    parser: str | None = Field(default=None, description="The engine parser that reads the most text calls.")
    reads: int = Field(default=0, description="How many recorded text calls that parser reads.")
    calls: int = Field(default=0, description="Text calls recorded.")
    enable: list[str] = Field(default_factory=list, description="Per engine, how to enable the parser that reads "
                              "the most calls, with how many it reads.")
    documented: list[str] = Field(default_factory=list, description="The parsers the engines' docs recommend for "
                                  "the model's family (agentic_eval.classify.documented), vLLM's first; [] when the "
                                  "model name names no documented family.")
    documented_reads: int = Field(default=0, description="How many recorded text calls the first of `documented` "
                                  "reads.")


def _rank(key: str, count: int, families: Mapping[str, int],
          prefer: Collection[str] = ()) -> tuple[int, int, int, int, int]:
    """Sort key, best first: a `prefer`red parser (the model's documented one, when it reads the calls), then most
    calls read, then a parser of the family the model wrote most, then vLLM's, then the registry's order (each
    engine's usual parser first)."""
    from agentic_eval.classify.parsers import PARSERS

    order = list(PARSERS)
    parser = PARSERS.get(key)
    fams = parser.families if parser else ()
    weight = max((families.get(f, 0) for f in fams), default=0)
    return (0 if key in prefer else 1, -count, -weight, 0 if key.startswith("vllm:") else 1,
            order.index(key) if key in order else len(order))


def best_parser(readers: Mapping[str, int], families: Mapping[str, int] | None = None,
                prefer: Collection[str] = ()) -> tuple[str, int] | None:
    """The parser that reads the most calls (ties, and `prefer`: see `_rank`), with its count; None when none
    reads any."""
    ranked = sorted(readers.items(), key=lambda kv: _rank(kv[0], kv[1], families or {}, prefer))
    return ranked[0] if ranked and ranked[0][1] > 0 else None


def _best_per_engine(readers: Mapping[str, int], families: Mapping[str, int],
                     prefer: Collection[str] = ()) -> dict[str, tuple[str, int]]:
    from agentic_eval.classify.parsers import PARSERS

    best: dict[str, tuple[str, int]] = {}
    for key, count in sorted(readers.items(), key=lambda kv: _rank(kv[0], kv[1], families, prefer)):
        engine = PARSERS[key].engine if key in PARSERS else key.split(":", 1)[0]
        if count > 0:
            best.setdefault(engine, (key, count))
    return best


def enable_lines(readers: Mapping[str, int], calls: int, families: Mapping[str, int] | None = None,
                 prefer: Collection[str] = ()) -> list[str]:
    """'vLLM: vllm serve MODEL --enable-auto-tool-choice --tool-call-parser hermes [reads 12/12]', one per engine
    whose parsers read any of the calls, vLLM first; per engine a `prefer`red parser (the model's documented one)
    first, then the one that reads the most."""
    from agentic_eval.classify.parsers import PARSERS

    best = _best_per_engine(readers, families or {}, prefer)
    lines = []
    for engine in sorted(best, key=lambda e: (ENGINES.index(e) if e in ENGINES else 99, e)):
        key, count = best[engine]
        how = PARSERS[key].how_to_enable if key in PARSERS else key
        name = ENGINE_NAMES.get(engine, engine)
        if how.lower().startswith(f"{engine.lower()}:"):
            how = how[len(engine) + 1:].strip()
        lines.append(f"{name}: {how} [reads {count}/{calls}]")
    return lines


def _pct(part: int, whole: int) -> str:
    return f"{part}/{whole}"


def _documented(model: str | None, figures: TextCallFigures) -> tuple[Documented | None, list[str]]:
    """The documented row for the model (by its name, else by its structured calls' ids), with the figures that
    say so: the ids, and what its parsers read."""
    from agentic_eval.classify.documented import documented_for, documented_for_ids

    row = documented_for(model)
    rests = []
    ids = {k: v for k, v in figures.structured_ids.items() if k != "other"}
    if ids:
        said = {"vllm": "vLLM's (chatcmpl-tool-...)", "kimi_k2": "Kimi-K2's (functions.NAME:INDEX)"}
        rests.append("structured call ids: " + ", ".join(f"{said.get(k, k)} {v}" for k, v in ids.items())
                     + f" of {sum(figures.structured_ids.values())}")
    if row is None:
        row = documented_for_ids(figures.structured_ids)
    if row is not None:
        reads = ", ".join(f"{key} {figures.readers.get(key, 0)}/{figures.calls}" for key in row.parsers)
        rests.append(f"documented parser for {row.models} ({row.source}): {reads}")
    return row, rests


def diagnose(figures: TextCallFigures, turns: TurnCounts, families: Mapping[str, int] | None = None,
             short_prompt: ShortPrompt | None = None, model: str | None = None) -> Diagnosis | None:
    """The diagnosis of one model's recorded turns (one run, or several merged): None when it wrote no tool call
    as text. `families`: text-call families by turns; `short_prompt`: the same model with a short prompt; `model`:
    the served model name, which names the parser its engines' docs recommend (agentic_eval.classify.documented)."""
    calls = figures.calls
    if calls == 0:
        return None
    families = dict(families or {})
    fams = ", ".join(f"{k} {v}" for k, v in sorted(families.items(), key=lambda kv: -kv[1])) or "none named"
    row, documented_rests = _documented(model, figures)
    documented = list(row.parsers) if row is not None else []
    prefer = [key for key in documented if figures.readers.get(key, 0) >= CONSISTENT * calls]
    parser, reads = best_parser(figures.readers, families, prefer) or (None, 0)
    enable = enable_lines(figures.readers, calls, families, prefer) if figures.readers else []
    rests = [f"text tool calls: {calls} in {turns.text_tool_call + figures.mixed_turns} turns (families: {fams})",
             f"structured tool calls: {turns.tool_call} turns"]
    if parser:
        rests.append(f"read by {parser}: {_pct(reads, calls)}, same arguments {figures.same_arguments.get(parser, 0)}")
    rests += documented_rests
    faults = {"no engine parser reads them": figures.unread, "name a tool not offered": figures.unknown_tool,
              "fail the schema": figures.bad_arguments, "sit in the reasoning": figures.in_reasoning}
    faulty = sum(faults.values())
    if figures.truncated:
        faults["were cut short before they closed"] = figures.truncated
    if faulty:
        rests.append("text calls that " + ", ".join(f"{w}: {n}" for w, n in faults.items() if n))
    base = dict(parser=parser, reads=reads, calls=calls, enable=enable, documented=documented,
                documented_reads=figures.readers.get(documented[0], 0) if documented else 0)
    clean = parser is not None and reads >= CONSISTENT * calls and faulty <= (1 - CONSISTENT) * calls
    lost = (short_prompt is not None and short_prompt.tool_call > 0 and short_prompt.text_tool_call == 0
            and turns.tool_call == 0)
    if lost:
        assert short_prompt is not None
        rests.append(f"short prompt ({short_prompt.source}): {short_prompt.tool_call} structured, "
                     f"{short_prompt.text_tool_call} as text")
        text = (f"the model: it made structured calls with a short prompt ({short_prompt.source}) and wrote "
                f"{calls} as text under the agent's; the server parses its format, the model lost it: no server "
                "flag fixes this")
        if parser:
            text += f" ({parser} would read {_pct(reads, calls)} of the text calls: `--emulate-parser` measures that)"
        return Diagnosis(kind="model", text=text, rests_on=rests, **base)  # type: ignore[arg-type]
    if not clean:
        said = {"no engine parser reads them": "in a format no engine parser reads",
                "were cut short before they closed": "cut short before they closed"}
        worst = [f"{n} {said.get(w, w)}" for w, n in faults.items() if n]
        text = (f"the model: of {calls} tool calls written as text, " + ", ".join(worst or [
            f"only {reads} are read by any one parser ({parser})"]) + ": no server flag fixes this")
        if parser and reads:
            text += f" (the best parser, {parser}, reads {_pct(reads, calls)})"
        return Diagnosis(kind="model", text=text, rests_on=rests, **base)  # type: ignore[arg-type]
    assert parser is not None
    kind, text = _fix_text(figures, turns, fams, row, bool(prefer), parser, enable[0] if enable else parser)
    return Diagnosis(kind=kind, text=text, rests_on=rests, **base)  # type: ignore[arg-type]


def _fix_text(figures: TextCallFigures, turns: TurnCounts, fams: str, row: Documented | None, documented_reads: bool,
              parser: str, restart: str) -> tuple[Kind, str]:
    """A fix's diagnosis in words: parser_mismatch when the endpoint also parsed calls itself, else server_config;
    held against the model's documented parser (`row`; `documented_reads`: it reads the text calls) if known."""
    calls, reads = figures.calls, figures.readers.get(parser, 0)
    told = told_reads = ""
    if row is not None:
        told = f"{row.parsers[0]}, the parser documented for {row.models}"
        told_reads = _pct(figures.readers.get(row.parsers[0], 0), calls)
    if turns.tool_call > 0 or figures.mixed_turns > 0:
        if row is not None and not documented_reads:
            return "parser_mismatch", (
                f"parser mismatch: the endpoint parsed {turns.tool_call} turns' calls itself and returned {calls} as "
                f"text in a family ({fams}) that {told}, reads {told_reads} of and {parser} reads {_pct(reads, calls)}:"
                f" the model writes a family other than its documented one, beside it; the fix that reads these: "
                f"{restart} (check that the structured ones still parse: `--emulate-parser {parser}` measures it)")
        if row is not None:
            return "parser_mismatch", (
                f"parser mismatch: the endpoint parsed {turns.tool_call} turns' calls itself but returned {calls} as "
                f"text that {told}, reads ({told_reads}): the server runs another parser, not the documented one; "
                f"the fix: {restart}")
        return "parser_mismatch", (
            f"parser mismatch: the endpoint parsed {turns.tool_call} turns' calls itself but returned {calls} as text "
            f"that its parser does not read and {parser} does ({_pct(reads, calls)}): the server's parser is not the "
            f"one for the model's format; the fix: {restart}")
    text = (f"server config: the model writes its calls consistently ({fams}), they read cleanly against the "
            f"offered tools, and the endpoint returned them as text; the fix: {restart}")
    if row is not None and not documented_reads:
        text += f"; not {told}, which reads {told_reads} of them: a server set up by the book returns them as text too"
    elif row is not None:
        text += f" ({told})"
    return "server_config", text

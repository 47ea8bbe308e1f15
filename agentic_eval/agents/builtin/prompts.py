"""The built-in agent's system prompt, and padding it to a chosen size with realistic guidance.

Real agent harnesses send system prompts of thousands of tokens (tool policy,
style rules, git safety, examples). Some models keep their tool-call format
under a short prompt and lose it under a long one, so the size is a variable
of the experiment: `pad_system_prompt(BASE_SYSTEM_PROMPT, 9300)` gives the
base prompt followed by guidance sections, in a fixed order, cut at a line
boundary (never inside a code block) to about 9,300 tokens.

Token estimate: `estimate_tokens(text) = ceil(len(text) / 4)`, the usual
rule of thumb for English prose under BPE tokenizers; a model's own
tokenizer may count 10-20 % differently (the endpoint's `usage.prompt_tokens`,
kept in the transcript, says the real number).

The prose is package data, not code: the base prompt and the guidance (written
for this project as plausible harness guidance, about 21,000 tokens in 87
sections, one `## Title` heading each) are Markdown files in `prompt_text/`
beside this module, read with importlib.resources when it is imported.
"""

from __future__ import annotations

import functools
import math
from importlib import resources

CHARS_PER_TOKEN = 4

PROMPT_TEXT = "prompt_text"
"""The folder beside this module holding the prose, as package data: base.md and guidance.md."""


def _read_text(name: str) -> str:
    return (resources.files("agentic_eval.agents.builtin") / PROMPT_TEXT / name).read_text(encoding="utf-8")


def parse_guidance(text: str) -> list[tuple[str, str]]:
    """(title, body) per `## Title` section of guidance.md, in file order; text before the first
    heading (the file's comment) is not guidance. A body keeps one newline at each end, as the
    padding code expects."""
    sections: list[tuple[str, list[str]]] = []
    for line in text.split("\n"):
        if line.startswith("## "):
            sections.append((line[3:].strip(), []))
        elif sections:
            sections[-1][1].append(line)
    return [(title, "\n" + "\n".join(lines).strip("\n") + "\n") for title, lines in sections]


BASE_SYSTEM_PROMPT = _read_text("base.md").removesuffix("\n")
"""The prompt every built-in agent run starts with (prompt_text/base.md, without its final newline)."""

GUIDANCE_SECTIONS: list[tuple[str, str]] = parse_guidance(_read_text("guidance.md"))
"""The guidance: (title, body) in the order padding adds them (prompt_text/guidance.md). Written as
plausible agent-harness guidance; consistent with the built-in agent's tools (read_file, write_file,
edit_file, list_dir, grep, bash). It must never suggest a textual tool-call syntax: that is what the
experiment measures."""


def estimate_tokens(text: str) -> int:
    """Tokens in `text` by the chars/4 rule (see the module docstring)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def _guidance_units() -> list[str]:
    """The guidance as the smallest pieces padding may add: a section heading with its first line,
    a single line, or a whole fenced code block."""
    units: list[str] = []
    for title, body in GUIDANCE_SECTIONS:
        pieces: list[str] = []
        fence: list[str] | None = None
        for line in body.strip("\n").split("\n"):
            if fence is not None:
                fence.append(line)
                if line.strip().startswith("```"):
                    pieces.append("\n".join(fence))
                    fence = None
            elif line.strip().startswith("```"):
                fence = [line]
            else:
                pieces.append(line)
        if fence is not None:
            pieces.append("\n".join(fence))
        units.append(f"\n\n# {title}\n\n{pieces[0]}")
        units.extend("\n" + piece for piece in pieces[1:])
    return units


def guidance_tokens() -> int:
    """Tokens of all the guidance there is; padding past this repeats it."""
    return estimate_tokens("".join(_guidance_units()))


MAX_PAD_TOKENS = 2_000_000
"""The largest padding asked for (about the largest context a model serves): 8 MB of text."""


@functools.cache
def _cycle() -> tuple[tuple[str, ...], int, int]:
    """The guidance units, their total length, and how long the padded text may be at the start of a
    pass through them for every unit of the pass to be added (see `pad_system_prompt`)."""
    units = tuple(_guidance_units())
    reach, done = 0, 0
    for unit in units:  # a unit is added when 2 * (length before it) + len(unit) <= 2 * target
        reach = max(reach, 2 * done + len(unit))
        done += len(unit)
    return units, done, reach


def pad_system_prompt(base: str, tokens: int) -> str:
    """`base` followed by guidance sections, to about `tokens` tokens (chars/4).

    Deterministic. Adds whole lines (or whole code blocks) while that brings the
    length closer to the target; returns `base` unchanged if it is already as
    long. Past the end of the guidance it starts again from its first section.
    Cheap at any size: whole passes through the guidance are joined at once, unit
    by unit only the last one or two; `tokens` over MAX_PAD_TOKENS is a ValueError.
    """
    if tokens > MAX_PAD_TOKENS:
        raise ValueError(f"system prompt padding of {tokens} tokens is over the limit of {MAX_PAD_TOKENS:,}")
    target = tokens * CHARS_PER_TOKEN
    units, cycle_length, reach = _cycle()
    # A whole pass starting at length L adds every unit iff 2 * L + reach <= 2 * target; passes before
    # the last such one are whole, so skip them in one step (the result is what the loop would build).
    whole = max(0, (2 * target - reach - 2 * len(base)) // (2 * cycle_length)) if cycle_length else 0
    parts = [base, "".join(units) * whole]
    length = len(base) + whole * cycle_length
    index = 0
    while length < target:
        unit = units[index % len(units)]
        if length + len(unit) - target > target - length:
            break  # adding it would land farther from the target than stopping here
        parts.append(unit)
        length += len(unit)
        index += 1
    return "".join(parts)


def build_system_prompt(tokens: int | None) -> str:
    """The built-in agent's system prompt: the base prompt, padded when `tokens` is given."""
    return BASE_SYSTEM_PROMPT if not tokens else pad_system_prompt(BASE_SYSTEM_PROMPT, tokens)

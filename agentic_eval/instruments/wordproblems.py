"""Deterministic multi-step arithmetic word problems with exact integer answers.

The shape follows the sheep problem that a reasoning model got wrong with
thinking switched off: a starting count, then several operations of different
kinds (buy more, sell some, double, "buys twice as many as he has", give away
half, "all but N"), and a question about the final count. Every intermediate
value is a positive integer; division is always exact.

    problems = generate_problems(seed=0, count=20)
    problems[3].text, problems[3].answer

Problem `i` of a seed is the same whatever `count` is, on every platform and
Python version (each problem draws from its own string-seeded `random.Random`).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["PROMPT_TEMPLATE", "Step", "WordProblem", "generate_problems", "prompt_for"]

PROMPT_TEMPLATE = (
    "Solve this word problem. Explain your steps briefly, showing the arithmetic, then give the final "
    "answer as a whole number on the last line in the form 'Answer: N'.\n\n{problem}"
)

LIMIT = 99_999
"""No value in a problem exceeds this."""


@dataclass(frozen=True)
class Step:
    """One operation of a problem: what it does to the running count."""

    op: str
    """add, sub, mul, add_times, half, split_keep, all_but."""
    operand: int
    before: int
    after: int
    sentence: str


@dataclass(frozen=True)
class WordProblem:
    """A problem and its exact answer."""

    id: str
    text: str
    answer: int
    steps: tuple[Step, ...]

    @property
    def prompt(self) -> str:
        return prompt_for(self)


def prompt_for(problem: WordProblem) -> str:
    """The user message asking for the problem's solution."""
    return PROMPT_TEMPLATE.format(problem=problem.text)


@dataclass(frozen=True)
class _Scene:
    name: str
    pronoun: str
    possessive: str
    item: str
    start: str
    """'{name} keeps {n} {item}.'-style opening; fields: name, n, item."""
    add: tuple[str, ...]
    sub: tuple[str, ...]


_SCENES: tuple[_Scene, ...] = (
    _Scene("Tom", "he", "his", "sheep", "A farmer named {name} keeps {n} {item}.",
           ("He buys {k} more {item} at the market.", "A neighbour gives him {k} more {item}."),
           ("He sells {k} of his {item}.", "{k} of his {item} wander off and are lost.")),
    _Scene("Ana", "she", "her", "loaves", "{name} the baker has {n} {item} on her shelves.",
           ("She bakes {k} more {item}.", "A supplier delivers {k} more {item}."),
           ("She sells {k} {item}.", "She donates {k} {item} to a shelter.")),
    _Scene("Ravi", "he", "his", "books", "{name} runs a small library with {n} {item}.",
           ("He receives {k} more {item} as donations.", "He buys {k} more {item}."),
           ("He gives away {k} damaged {item}.", "{k} {item} are never returned and are written off.")),
    _Scene("Mei", "she", "her", "stamps", "{name} has a collection of {n} {item}.",
           ("She buys {k} more {item}.", "Her uncle gives her {k} more {item}."),
           ("She trades away {k} {item}.", "She sells {k} {item} to another collector.")),
    _Scene("Omar", "he", "his", "boxes", "{name} manages a warehouse that holds {n} {item}.",
           ("A truck brings {k} more {item}.", "He orders {k} more {item}."),
           ("He ships {k} {item} to a customer.", "{k} {item} are damaged and thrown out.")),
)


def _fmt(n: int) -> str:
    return f"{n:,}"


def _sentence(template: str, scene: _Scene, k: int) -> str:
    text = template.format(k=_fmt(k), item=scene.item, name=scene.name)
    return text[0].upper() + text[1:]


# Each op: (name, feasible(value), apply(rng, value, scene) -> (operand, new value, sentence)).
_Op = tuple[str, Callable[[int], bool], Callable[[random.Random, int, _Scene, int], tuple[int, int, str]]]


def _round_to(n: int, unit: int) -> int:
    return max(unit, n // unit * unit)


def _add(rng: random.Random, v: int, s: _Scene, unit: int) -> tuple[int, int, str]:
    k = _round_to(rng.randint(2 * unit, max(3 * unit, v)), unit)
    return k, v + k, _sentence(rng.choice(s.add), s, k)


def _sub(rng: random.Random, v: int, s: _Scene, unit: int) -> tuple[int, int, str]:
    k = _round_to(rng.randint(1, v - 1), unit) if v > 2 * unit else rng.randint(1, v - 1)
    return k, v - k, _sentence(rng.choice(s.sub), s, k)


def _mul(rng: random.Random, v: int, s: _Scene, unit: int) -> tuple[int, int, str]:
    k = rng.choice([2, 3]) if v * 3 <= LIMIT else 2
    verb = {2: "doubles", 3: "triples"}[k]
    return k, v * k, f"{s.name} then {verb} the number of {s.item} {s.pronoun} has."


def _add_times(rng: random.Random, v: int, s: _Scene, unit: int) -> tuple[int, int, str]:
    k = rng.choice([2, 3]) if v * 4 <= LIMIT else 2
    word = {2: "twice", 3: "three times"}[k]
    return k, v + k * v, f"{s.pronoun.capitalize()} adds {word} as many {s.item} as {s.pronoun} already has."


def _half(rng: random.Random, v: int, s: _Scene, unit: int) -> tuple[int, int, str]:
    return 2, v // 2, f"{s.pronoun.capitalize()} gives half of {s.possessive} {s.item} to a friend."


def _split_keep(rng: random.Random, v: int, s: _Scene, unit: int) -> tuple[int, int, str]:
    k = rng.choice([d for d in (3, 4, 5) if v % d == 0])
    return k, v // k, (f"{s.pronoun.capitalize()} splits {s.possessive} {s.item} into {k} equal groups "
                       f"and keeps only one group.")


def _all_but(rng: random.Random, v: int, s: _Scene, unit: int) -> tuple[int, int, str]:
    k = _round_to(rng.randint(2, v - 1), unit) if v > 3 * unit else rng.randint(2, v - 1)
    k = min(k, v - 1)
    return k, k, f"All but {_fmt(k)} of the {s.item} are sold."


_OPS: tuple[_Op, ...] = (
    ("add", lambda v: v + 3 <= LIMIT, _add),
    ("sub", lambda v: v >= 3, _sub),
    ("mul", lambda v: v * 2 <= LIMIT, _mul),
    ("add_times", lambda v: v * 3 <= LIMIT, _add_times),
    ("half", lambda v: v % 2 == 0 and v >= 4, _half),
    ("split_keep", lambda v: v >= 6 and any(v % d == 0 for d in (3, 4, 5)), _split_keep),
)


def _one_problem(seed: int, index: int) -> WordProblem:
    rng = random.Random(f"agentic-eval-wordproblems:{seed}:{index}")
    scene = rng.choice(_SCENES)
    large = rng.random() < 0.3
    unit = 10 if large else 1
    value = rng.randint(120, 900) * 10 if large else rng.randint(6, 40)
    sentences = [scene.start.format(name=scene.name, n=_fmt(value), item=scene.item)]
    steps: list[Step] = []
    n_ops = rng.randint(3, 5)
    if not large and value >= 6 and rng.random() < 0.25:
        k, new, sentence = _all_but(rng, value, scene, unit)
        steps.append(Step("all_but", k, value, new, sentence))
        sentences.append(sentence)
        value = new
    used: set[str] = set()
    for _ in range(n_ops - len(steps)):
        feasible = [op for op in _OPS if op[1](value) and not (op[0] in used and op[0] in ("mul", "add_times"))]
        name, _, apply = rng.choice(feasible)
        used.add(name)
        operand, new, sentence = apply(rng, value, scene, unit)
        steps.append(Step(name, operand, value, new, sentence))
        sentences.append(sentence)
        value = new
    sentences.append(f"How many {scene.item} does {scene.name} have now?")
    return WordProblem(id=f"s{seed}-p{index}", text=" ".join(sentences), answer=value, steps=tuple(steps))


def generate_problems(seed: int = 0, count: int = 20) -> list[WordProblem]:
    """`count` problems for `seed`; problem i does not depend on `count`."""
    if count < 0:
        raise ValueError("count must be >= 0")
    return [_one_problem(seed, i) for i in range(count)]

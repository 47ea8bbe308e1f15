"""Does an answer's own arithmetic hold? A pure, conservative checker, plus final-answer extraction.

    report = check_consistency("...doubled that amount to get 18, and then subtracted the 6 sold "
                               "to leave him with 15.")
    report.false_claims[0].statement   # 'subtracted the 6 sold to leave him with 15' (18 - 6 = 12)

Two kinds of statement are read:

- symbolic: `18 − 6 = 12`, `(9 + 18) × 2 = 54`, `3 times 4 is 12`, `twice 9 is 18`, number words,
  unicode minus, ×/÷, LaTeX `\\times`, thousands separators;
- verbal: "doubled 9 to get 18", "subtracted the 6 sold to leave him with 15", "buys 18 more to
  reach 27", "sells 6 of the 27 sheep, leaving 21". An operation without its own base number
  ("doubled that amount") works on the running value: the last result the answer stated, or a
  count it stated ("keeping 9 sheep"). An operation whose base cannot be known is not checked.

Conservative by design: a statement that cannot be parsed, that hedges ("18 − 6 = 15? no"), that
could be a percentage, money, or a sloppy chain (`9 + 18 = 27 − 6 = 21`), is not counted as an
error. Only statements whose arithmetic is unambiguous and false are.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

__all__ = ["Claim", "ConsistencyReport", "check_consistency", "extract_final_answer", "format_number"]


@dataclass(frozen=True)
class Claim:
    """One arithmetic statement the text makes, and whether it holds."""

    statement: str
    computed: Fraction
    stated: Fraction
    ok: bool
    kind: str
    """symbolic or verbal."""

    @property
    def explanation(self) -> str:
        return f"{self.statement!r}: works out to {format_number(self.computed)}, not {format_number(self.stated)}"


@dataclass
class ConsistencyReport:
    """Every statement checked; `false_claims` are the ones whose arithmetic is wrong."""

    claims: list[Claim] = field(default_factory=list)

    @property
    def false_claims(self) -> list[Claim]:
        return [c for c in self.claims if not c.ok]

    @property
    def consistent(self) -> bool:
        return not self.false_claims


def format_number(value: Fraction) -> str:
    """21, -3, 3.5, or 10/3 for a repeating decimal."""
    if value.denominator == 1:
        return str(value.numerator)
    as_float = float(value)
    return f"{as_float:g}" if Fraction(repr(as_float)) == value else f"{value.numerator}/{value.denominator}"


# ------------------------------------------------------------------ normalization

_UNITS = {w: i for i, w in enumerate(["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                                      "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
                                      "seventeen", "eighteen", "nineteen"])}
_TENS = {w: 10 * i for i, w in enumerate(["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"],
                                         start=2)}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
_NUMWORD = "|".join(sorted([*_UNITS, *_TENS, *_SCALES], key=len, reverse=True))
_NUMWORDS = re.compile(rf"\b(?:{_NUMWORD})(?:(?:\s+|-)(?:{_NUMWORD}))*\b", re.IGNORECASE)
_REPLACEMENTS: list[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]] = [
    (re.compile(r"[\u2212\u2013\u2012\ufe63\uff0d]"), "-"),
    (re.compile(r"[\u00d7\u2715\u22c5\u00b7\u2219]|\\times|\\cdot"), "*"),
    (re.compile(r"\u00f7|\u2215|\\div"), "/"),
    (re.compile(r"\uff1d"), "="),
    (re.compile(r"\u2248|\u2243|\\approx"), "\u2248"),
    (re.compile(r"\\[dt]?frac\{([^{}]*)\}\{([^{}]*)\}"), r"((\1)/(\2))"),
    (re.compile(r"\\text\{([^{}]*)\}"), r" \1 "),
    (re.compile(r"\*\*|__|`|\\[()\[\]]|\\[,;!]|\$\$"), " "),
    (re.compile(r"(?<=\d)[\u00a0\u202f\u2009](?=\d{3}\b)"), ""),
    (re.compile(r"\b(\d{1,3})((?:,\d{3})+)(?!\d|,\d)"), lambda m: m.group(1) + m.group(2).replace(",", "")),
    (re.compile(r"(?<=\d)\s*[xX]\s*(?=\d)"), " * "),
]
_LIST_MARKER = re.compile(r"(?m)^\s*(?:[-*+\u2022]|\d+[.)]|step \d+[.:)]?)\s+", re.IGNORECASE)
_WORD_OPS = [
    (re.compile(r"(?<=\d)\s+(?:plus)\s+(?=[\d(])", re.IGNORECASE), " + "),
    (re.compile(r"(?<=\d)\s+(?:minus)\s+(?=[\d(])", re.IGNORECASE), " - "),
    (re.compile(r"(?<=\d)\s+(?:times|multiplied by)\s+(?=[\d(])", re.IGNORECASE), " * "),
    (re.compile(r"(?<=\d)\s+(?:divided by)\s+(?=[\d(])", re.IGNORECASE), " / "),
    (re.compile(r"\b(?:twice|double)\s+(?=\d)", re.IGNORECASE), "2 * "),
    (re.compile(r"\btriple\s+(?=\d)", re.IGNORECASE), "3 * "),
    (re.compile(r"\bhalf of\s+(\d+(?:\.\d+)?)", re.IGNORECASE), r"\1 / 2"),
    (re.compile(r"(?<=[\d)])\s+(?:equals|is equal to|is|are|makes|gives(?: us)?|yields|comes to)\s+(?=-?\d)",
                re.IGNORECASE),
     " = "),
]
_UNIT_WORD = re.compile(r"(?<=\d)\s+(?!(?:is|are|of|by|and|or|to|per|times|plus|minus|equals)\b)"
                        r"[a-z]+(?=\s*[-+*/=]\s*\d)")


def _numbers_from_words(match: re.Match[str]) -> str:
    """'twenty-one' -> '21', 'one hundred five' -> '105', 'two three' -> '2 3'."""
    tokens = re.split(r"(\s+|-)", match.group())
    out: list[str] = []
    total, current, last = 0, 0, ""
    for idx in range(0, len(tokens), 2):
        word, sep = tokens[idx].lower(), tokens[idx - 1] if idx else ""
        kind = "unit" if word in _UNITS else "tens" if word in _TENS else "hundred" if word == "hundred" else "scale"
        fits = {"unit": last in ("", "hundred", "scale") or last == "tens" and _UNITS.get(word, 10) < 10,
                "tens": last in ("", "hundred", "scale"), "hundred": last == "unit",
                "scale": last in ("unit", "tens", "hundred")}[kind]
        if not fits and last:
            out += [str(total + current), " " if sep == "-" else sep]
            total, current, last = 0, 0, ""
            sep = ""
            fits = kind in ("unit", "tens")
        if out and not last:
            out.append(sep)
        if not fits:
            out.append(tokens[idx])
            continue
        if kind == "hundred":
            current *= 100
        elif kind == "scale":
            total, current = total + current * _SCALES[word], 0
        else:
            current += _UNITS.get(word, _TENS.get(word, 0))
        last = kind
    if last:
        out.append(str(total + current))
    return "".join(out)


def normalize(text: str, list_markers: bool = False) -> str:
    """Digits for number words, ASCII operators, no thousands separators, markdown emphasis or list
    markers (unless `list_markers`). Currency signs stay (money is not checked)."""
    for pattern, repl in _REPLACEMENTS:
        text = pattern.sub(repl, text)
    if not list_markers:
        text = _LIST_MARKER.sub("", text)
    text = re.sub(r"\b(hundred|thousand|million)\s+and\s+(?=[a-z])", r"\1 ", text, flags=re.IGNORECASE)
    text = _NUMWORDS.sub(_numbers_from_words, text)
    for pattern, repl in _WORD_OPS:
        text = pattern.sub(repl, text)
    return _UNIT_WORD.sub("", text)


# ------------------------------------------------------------------ symbolic statements

_TOKEN = re.compile(r"(?P<num>\d+(?:\.\d+)?)|(?P<op>[-+*/])|(?P<lp>\()|(?P<rp>\))|(?P<eq>=|≈)|(?P<ws>[ \t]+)"
                    r"|(?P<other>.)",
                    re.DOTALL)
_HEDGE_AFTER = re.compile(r"^\s*(?:\?|[(,]?\s*(?:wait|no\b|not\b|nope|oops|actually|correction|mistake|typo|"
                          r"is (?:wrong|incorrect|not)|which is (?:wrong|incorrect)|incorrect|wrong))", re.IGNORECASE)
_HEDGE_BEFORE = re.compile(r"\b(?:if|not|suppose|assuming|assume|incorrectly|wrongly|mistakenly|instead of|"
                           r"rather than|isn't|wrote)\b[^.;:\n]{0,24}$", re.IGNORECASE)
_BINDING_BEFORE = re.compile(r"(?:\b(?:of|by|than|per|over|from|into)\s*|[%^!_'\"\w.,/]|\*\*)$", re.IGNORECASE)


_BINOPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
           ast.Div: lambda a, b: a / b}


def _evaluate(segment: str) -> tuple[Fraction | None, bool]:
    """(value, has a binary operator) of one '='-free segment of digits, + - * / and parentheses;
    (None, False) when it is not such an expression."""

    def walk(node: ast.AST) -> Fraction:
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            return _BINOPS[type(node.op)](walk(node.left), walk(node.right))  # type: ignore[no-any-return]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -walk(node.operand)
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return Fraction(repr(node.value))
        raise ValueError("not arithmetic")

    try:
        tree = ast.parse(segment.strip(), mode="eval").body
        return walk(tree), any(isinstance(n, ast.BinOp) for n in ast.walk(tree))
    except (SyntaxError, ValueError, ZeroDivisionError, RecursionError):
        return None, False


def _close_enough(computed: Fraction, stated_text: str, approx: bool) -> bool:
    """Exact for exact results; a stated value with d decimals may be the computed one rounded to d."""
    decimals = len(stated_text.split(".")[1]) if "." in stated_text else 0
    tolerance = Fraction(1, 2 * 10**decimals) if computed.denominator != 1 or decimals else Fraction(0)
    if approx:
        tolerance = max(tolerance, abs(computed) / 100, Fraction(1, 2 * 10**decimals))
    return abs(computed - Fraction(stated_text)) <= tolerance


def _symbolic_claims(text: str) -> list[tuple[int, int, Claim]]:
    """(start, end, claim) for each checkable '=' pair in the normalized text."""
    tokens = [(m.lastgroup or "other", m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text)]
    claims: list[tuple[int, int, Claim]] = []
    run: list[tuple[str, str, int, int]] = []
    for tok in [*tokens, ("other", "", len(text), len(text))]:
        if tok[0] != "other":
            run.append(tok)
            continue
        if any(t[0] == "eq" for t in run):
            claims += _check_run(text, [t for t in run if t[0] != "ws"])
        run = []
    return claims


def _check_run(text: str, run: list[tuple[str, str, int, int]]) -> list[tuple[int, int, Claim]]:
    start, end = run[0][2], run[-1][3]
    if _BINDING_BEFORE.search(text[max(0, start - 8):start]) or _HEDGE_BEFORE.search(text[max(0, start - 40):start]):
        return []
    if run[0][0] == "op" and re.search(r"[\w)]\s*$", text[max(0, start - 8):start]):
        return []  # "x - 3 * 2 = ...": the expression starts before the run (a variable, a unit)
    after = text[end:end + 30]
    if re.match(r"[%^!\w]|\.\d", after) or _HEDGE_AFTER.match(after):
        return []
    segments: list[list[tuple[str, str, int, int]]] = [[]]
    eq_signs: list[str] = []
    for tok in run:
        if tok[0] == "eq":
            segments.append([])
            eq_signs.append(tok[1])
        else:
            segments[-1].append(tok)
    parsed = [(*_evaluate("".join(t[1] for t in seg)), seg) for seg in segments]
    out = []
    for i, sign in enumerate(eq_signs):
        (left, left_op, lseg), (right, right_op, rseg) = parsed[i], parsed[i + 1]
        if left is None or right is None or left_op == right_op and not left_op:
            continue
        if left_op and right_op:
            # A sloppy running chain "9 + 18 = 27 - 6 = 21" means 9 + 18 = 27: only flag when the
            # left side equals neither the right side nor the number the right side starts with.
            lead = rseg[0][1] if rseg[0][0] == "num" else None
            if left == right or lead is None or _close_enough(left, lead, sign == "≈"):
                continue
            stated_text, computed = lead, left
        elif left_op:
            stated_text, computed = "".join(t[1] for t in rseg), left
        else:
            stated_text, computed = "".join(t[1] for t in lseg), right
        if not re.fullmatch(r"-?\d+(?:\.\d+)?", stated_text):
            continue
        s, e = min(lseg[0][2], rseg[0][2]), max(lseg[-1][3], rseg[-1][3])
        ok = _close_enough(computed, stated_text, sign == "≈")
        out.append((s, e, Claim(" ".join(text[s:e].split()), computed, Fraction(stated_text), ok, "symbolic")))
    return out


# ------------------------------------------------------------------ verbal statements

_VERBS: list[tuple[str, re.Pattern[str]]] = [
    ("mul2", re.compile(r"doubl(?:e|es|ed|ing)$")),
    ("mul3", re.compile(r"tripl(?:e|es|ed|ing)$")),
    ("mul4", re.compile(r"quadrupl(?:e|es|ed|ing)$")),
    ("div2", re.compile(r"(?:halv(?:e|es|ed|ing)|half)$")),
    ("add", re.compile(r"(?:add(?:s|ed|ing)?|buy(?:s|ing)?|bought|receiv(?:e|es|ed|ing)|gain(?:s|ed|ing)?|"
                       r"more|plus)$")),
    ("sub", re.compile(r"(?:subtract(?:s|ed|ing)?|sell(?:s|ing)?|sold|los(?:e|es|ing|t)|remov(?:e|es|ed|ing)|"
                       r"minus|fewer|away|discard(?:s|ed|ing)?|donat(?:e|es|ed|ing))$")),
]
_FACTOR = {"mul2": Fraction(2), "mul3": Fraction(3), "mul4": Fraction(4), "div2": Fraction(1, 2)}
_RESULT = re.compile(
    r"(?:,\s*)?(?:(?:in order )?to (?:get|reach|make|leave|give|end up with)|leaving|leaves|left with|"
    r"(?:which|that) (?:gives|leaves|makes|is)|giving|gives|for a (?:final |new |grand )?total of|"
    r"(?:resulting|results) in|bring(?:s|ing)? (?:it |the total |him |her |them )?(?:up |down )?to|making|makes|"
    r"(?:so |and )?(?:he|she|they|it|there) (?:now |then |still )?(?:has|have|had|are|is|was|were)|"
    r"(?:and )?(?:now )?(?:has|have|had)|(?:down|up) to|totall?ing|ending (?:up )?with)"
    r"(?:\s+(?:him|her|them|us|it|me|you|with|only|just|exactly|a total of|total of|of))*\s+"
    r"(?P<n>\d+(?:\.\d+)?)(?![\d%])", re.IGNORECASE)
_STATE = re.compile(r"(?:has|had|have|having|keeps?|kept|keeping|owns?|owned|holds?|held|there (?:are|were)|"
                    r"starts? with|started with|begins? with|began with)\s+(?:only\s+|just\s+|exactly\s+)?"
                    r"(?P<n>\d+(?:\.\d+)?)(?![\d%]|\.\d|\s+(?:groups?|parts?|piles?|shares?|times|more|"
                    r"fewer|of|as)\b)", re.IGNORECASE)
_CLAUSE_WORDS = {"to", "get", "reach", "leaving", "leaves", "has", "have", "had", "with", "from", "then", "and",
                 "so", "of", "after", "gives", "giving", "makes", "making"}
_WORD = re.compile(r"\d+(?:\.\d+)?|[A-Za-z]+|[.;:!?\n]|[-+*/=≈$€£%]|\S")
_STALE_AFTER = 200
"""A running value stated more than this many characters before an operation is not used as its base."""


@dataclass
class _Window:
    """An operation verb waiting for its stated result."""

    kind: str
    start: int
    numbers: list[tuple[Fraction, str]] = field(default_factory=list)
    """Each number in the window with the two words before it (for 'from', 'of', 'to')."""


def _verb_kind(word: str) -> str | None:
    w = word.lower()
    return next((kind for kind, pattern in _VERBS if pattern.match(w)), None)


def _verbal_claims(text: str) -> list[tuple[int, int, Claim]]:
    """Scan word by word, keeping the running value (the last stated result or count, and where)."""
    claims: list[tuple[int, int, Claim]] = []
    current: tuple[Fraction, int] | None = None
    window: _Window | None = None
    words = list(_WORD.finditer(text))
    i = 0
    while i < len(words):
        m, word = words[i], words[i].group()
        result = _RESULT.match(text, m.start()) if window is None or m.start() > window.start else None
        if window is None and result:
            current = (Fraction(result.group("n")), result.end())  # "... keeping one leaves 925"
        elif window is not None and result:
            base = current[0] if current and window.start - current[1] <= _STALE_AFTER else None
            stated = Fraction(result.group("n"))
            claim = _resolve(window, base, stated, text[window.start:result.end()])
            if claim is not None:
                claims.append((window.start, result.end(), claim))
            current, window = (stated, result.end()), None
            i = next((j for j in range(i, len(words)) if words[j].start() >= result.end()), len(words))
            continue
        if word in ".;!?\n=+*/≈" or word == "-" and i + 1 < len(words) and words[i + 1].group()[0].isdigit():
            if window is not None or word in "=+*/≈-":
                # An operation with no stated result, or a symbolic one (whose result may be a
                # difference or a share, not the new count): the running value is unknown now.
                current = None
            window = None
        elif (kind := _verb_kind(word)) is not None:
            if window is None:
                window = _Window(kind, m.start(), _passive_operand(words, i) if kind in ("add", "sub") else [])
            elif kind != window.kind and not (window.kind in ("add", "sub") and word.lower() in ("more", "away")):
                window, current = None, None  # two different operations before one result: ambiguous
        elif window is None and (state := _STATE.match(text, m.start())):
            current = (Fraction(state.group("n")), state.end())
        elif window is not None and word[0].isdigit():
            if re.match(r"\s*(?:times|x)\b", text[m.end():], re.IGNORECASE):
                window.numbers.append((Fraction(0), "multiplier"))  # "adds 2 times as many": not a delta
            window.numbers.append((Fraction(word), " ".join(w.group().lower() for w in words[max(0, i - 2):i])))
        if window is not None and len(text[window.start:m.end()].split()) > 14:
            window, current = None, None
        i += 1
    return claims


def _passive_operand(words: list[re.Match[str]], i: int) -> list[tuple[Fraction, str]]:
    """'the 6 sold', '6 of them are sold': a number just before a sub/add verb, in its clause, is its operand."""
    for j in range(i - 1, max(-1, i - 5), -1):
        w = words[j].group()
        if not w[0].isalnum() or w.lower() in _CLAUSE_WORDS:
            return []
        if w[0].isdigit():
            return [(Fraction(w), "")]
    return []


def _resolve(window: _Window, current: Fraction | None, stated: Fraction, statement: str) -> Claim | None:
    """The claim a finished window makes, or None when its base or operand is not known."""
    nums = window.numbers
    if any(connector == "multiplier" for _, connector in nums):
        return None
    if any(c in "$€£%" for c in statement) or re.search(r"\b(?:each|per|dollars?|cents?|euros?|percent)\b", statement):
        return None
    if window.kind in _FACTOR:
        if len(nums) > 1:
            return None
        base = nums[0][0] if nums else current
        computed = None if base is None else base * _FACTOR[window.kind]
    else:
        if not nums or len(nums) > 2:
            return None
        delta = nums[0][0]
        if len(nums) == 2:
            if not set(nums[1][1].split()) & {"from", "of", "to", "with"}:
                return None
            base = nums[1][0]
        else:
            base = current
        if base is None:
            return None
        computed = base + delta if window.kind == "add" else base - delta
    if computed is None:
        return None
    return Claim(" ".join(statement.split()), computed, stated, computed == stated, "verbal")


# ------------------------------------------------------------------ public API

def check_consistency(text: str) -> ConsistencyReport:
    """Every arithmetic statement in `text` that can be parsed unambiguously, each checked."""
    normalized = normalize(re.sub(r"```.*?(?:```|$)", "\n", text, flags=re.DOTALL))  # code is not a statement
    found = _symbolic_claims(re.sub(r"[$\u20ac\u00a3](?=\d)", " ", normalized))
    spans = [(s, e) for s, e, _ in found]
    for s, e, claim in _verbal_claims(normalized):
        if not any(s < e2 and s2 < e for s2, e2 in spans):
            found.append((s, e, claim))
    return ConsistencyReport([claim for _, _, claim in sorted(found, key=lambda t: t[0])])


_NUMBER = r"-?\d+(?:\.\d+)?"
_ANSWER_PATTERNS = (
    re.compile(r"\\boxed\{\s*\$?(" + _NUMBER + r")"),
    re.compile(r"(?:final answer|answer)\s*(?:is|:|=|-)?\s*(?:that\s+)?(?:[A-Za-z]+\s+){0,3}?(?:has\s+)?\$?("
               + _NUMBER + r")(?![\d/])", re.IGNORECASE),
)


def extract_final_answer(text: str) -> Fraction | None:
    """The number the text gives as its answer: an 'Answer: N' or \\boxed{N} line (the last one), else a
    number the text opens with ('15. He doubled ...'), else the last number in the text."""
    normalized = normalize(text, list_markers=True)
    for pattern in _ANSWER_PATTERNS:
        matches = pattern.findall(normalized)
        if matches:
            return Fraction(matches[-1])
    lead = re.match(r"\s*(" + _NUMBER + r")(?:\s*$|[.!:]\s*(?!\d)|\s*\n)", normalized)
    if lead and not (lead.group(1).isdigit() and re.search(rf"(?m)^\s*{int(lead.group(1)) + 1}[.)]\s", normalized)):
        # an opening number ("15. He doubled ..."), not the first item of a numbered list
        return Fraction(lead.group(1))
    numbers = re.findall(r"(?<![\w.])" + _NUMBER, normalized)
    return Fraction(numbers[-1]) if numbers else None

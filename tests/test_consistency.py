"""The arithmetic-consistency checker and final-answer extraction, table-driven on answer shapes
models produce. Inconsistent answers must be flagged; consistent ones, and statements the checker
cannot read with certainty, must not."""

from __future__ import annotations

from fractions import Fraction

import pytest

from agentic_eval.instruments.consistency import check_consistency, extract_final_answer, format_number

SEED_THINK_OFF = ("15. ...doubled that amount to get 18, and then subtracted the 6 sold to leave him with 15.")
SEED_THINK_ON = ("21. After keeping 9 sheep, he buys 18 more to reach 27, then subtracts the 6 sold for a final "
                 "total of 21.")

QWEN_STYLE_SLIP = """### Step-by-step

1. **Start:** Mei has **36** stamps.
2. **Triples them:** \\( 36 \\times 3 = 108 \\)
3. **Buys 26 more:** \\( 108 + 26 = 134 \\)
4. **Trades away 115:** \\( 134 - 115 = 29 \\)
5. **Uncle gives 19 more:** \\( 29 + 19 = 48 \\)
6. **Gives half away:** \\( 48 \\div 2 = 24 \\)

**Answer: 24**"""

QWEN_STYLE_RIGHT = QWEN_STYLE_SLIP.replace("134 - 115 = 29", "134 - 115 = 19").replace(
    "29 + 19 = 48", "19 + 19 = 38").replace("48 \\div 2 = 24", "38 \\div 2 = 19").replace("Answer: 24", "Answer: 19")

PROSE_RIGHT = ("Ana starts with 3,700 loaves. After selling 3,130, she has 570. Adding twice as many as she has "
               "means adding 1,140, for a total of 1,710. Giving half to a friend leaves 855. Donating 320 leaves "
               "535, and the 420 delivered bring it to 955.\n\nAnswer: 955")


REAL_SMALL_MODEL = """1. Initial number of stamps: 36
2. Triple the number of stamps: \\(36 \\times 3 = 108\\)
3. Buy 26 more stamps: \\(108 + 26 = 134\\)
4. Trade away 115 stamps: \\(134 - 115 = 19\\)
5. Uncle gives her 19 more stamps: \\(19 + 19 = 38\\)
6. Give half of her stamps to a friend: \\(\\frac{38}{2} = 19\\)
7. The final number of stamps: \\(38 - 19 = 19\\)

Now, let's write the Python code to verify this solution.
```python
initial_stamps = 36
tripled_stamps = initial_stamps * 3
after_giving = (tripled_stamps + 26 - 115 + 19) // 2
print(after_giving)
```
```output
19
```
The final number of stamps Mei has now is \\(\\boxed{19}\\)."""
"""Qwen2.5-Coder-1.5B on llama.cpp, reasoning off, verbatim but shortened."""


@pytest.mark.parametrize("text, false_statement", [
    (SEED_THINK_OFF, "subtracted the 6 sold to leave him with 15"),
    ("18 − 6 = 15", "18 - 6 = 15"),                                   # unicode minus
    ("18 – 6 = 15", "18 - 6 = 15"),                                   # en dash
    ("So 27 ÷ 3 = 8 sheep per pen.", "27 / 3 = 8"),
    ("9 × 2 = 17", "9 * 2 = 17"),
    ("\\(27 \\times 2 = 56\\)", "27 * 2 = 56"),
    ("\\[ 168 \\div 3 = 58 \\]", "168 / 3 = 58"),
    ("1,200 + 300 = 1,600", "1200 + 300 = 1600"),                    # thousands separators
    ("1\u202f200 + 300 = 1\u202f600", "1200 + 300 = 1600"),           # narrow no-break space
    ("three times four is thirteen", "3 * 4 = 13"),                   # numbers written as words
    ("Twenty-one minus six equals sixteen.", "21 - 6 = 16"),
    ("3 times 4 is 11", "3 * 4 = 11"),
    ("He doubled 9 to get 19.", "doubled 9 to get 19"),
    ("He sells 6 of the 27 sheep, leaving 20.", "sells 6 of the 27 sheep, leaving 20"),
    ("Ana has 3,700 loaves. After selling 3,130, she has 580.", "selling 3130, she has 580"),
    ("- 108 + 26 = 144", "108 + 26 = 144"),                           # a bullet is not a minus
    ("**Step 2:** 9 × 2 = 17", "9 * 2 = 17"),
    ("9 + 18 = 26 - 6 = 20", "9 + 18 = 26 - 6"),                      # a running chain with a false first link
    ("(9 + 18) - 6 = 20", "(9 + 18) - 6 = 20"),
    ("9 sheep + 18 sheep = 28 sheep", "9 + 18 = 28"),
    ("$18 - $6 = $11", "18 - 6 = 11"),
    ("twice 9 is 19", "2 * 9 = 19"),
    (QWEN_STYLE_SLIP, "134 - 115 = 29"),
])
def test_inconsistent_statement_is_flagged(text: str, false_statement: str) -> None:
    report = check_consistency(text)
    assert [c.statement for c in report.false_claims] == [false_statement]
    assert not report.consistent


@pytest.mark.parametrize("text, checked", [
    (SEED_THINK_ON, 2),
    (QWEN_STYLE_RIGHT, 5),
    (PROSE_RIGHT, 4),
    ("18 - 6 = 12", 1),
    ("9 × 2 = 18 and 27 ÷ 3 = 9", 2),
    ("Mei starts with 36 stamps. Tripling gives 108. Buying 26 more gives 134.", 2),
    ("Splitting into 3 groups and keeping one leaves 9. Selling 1 leaves 8.", 1),
    ("10 / 3 = 3.33", 1),                                              # rounded as stated
    ("10/3 ≈ 3.3", 1),
    ("9 + 18 = 27 - 6 = 21", 1),                                       # sloppy but true chain
    ("$18 - $6 = $12", 1),
    ("nine plus nine is eighteen", 1),
    # Not read with certainty, so not checked:
    ("18 - 6 = 15? No: 18 - 6 = 12.", 1),                              # a self-correction
    ("If 18 - 6 = 15 were true, ...", 0),
    ("50% of 8 × 2 = 8", 0),                                           # a percentage context
    ("0.5 × 100 = 50%", 0),
    ("3^2 + 1 = 10", 0),
    ("x - 3 × 2 = 7", 0),                                              # algebra
    ("2x + 3 = 7", 0),
    ("at 3:45 - 1:15 = 2:30", 0),
    ("He has 12 sheep. He sells 6 sheep and buys 4, leaving 10.", 0),  # two operations, one result
    ("Tom has 18 sheep. He sells 6 sheep to get $30.", 0),              # money
    ("Adding 2 times as many brings it to 27.", 0),                     # a multiplier, not an addend
    ("doubled that amount to get 18", 0),                               # base unknown
    ("x = 5", 0),
    ("Check:\n```python\nprint(7 // 2)  # 7 / 2 = 3\n```\n```output\n3\n```", 0),  # code is not a statement
    (REAL_SMALL_MODEL, 6),
    ("Answer: 21", 0),
])
def test_consistent_or_unreadable_is_not_flagged(text: str, checked: int) -> None:
    report = check_consistency(text)
    assert report.false_claims == [], [c.explanation for c in report.false_claims]
    assert len(report.claims) == checked, [c.statement for c in report.claims]


def test_explanation_names_both_numbers() -> None:
    claim = check_consistency(SEED_THINK_OFF).false_claims[0]
    assert (claim.computed, claim.stated, claim.kind) == (12, 15, "verbal")
    assert claim.explanation == "'subtracted the 6 sold to leave him with 15': works out to 12, not 15"


@pytest.mark.parametrize("text, answer", [
    ("Answer: 21", 21),
    ("**Answer:** 1,710", 1710),
    ("So the total is \\boxed{855}.", 855),
    ("The answer is twenty-one.", 21),
    ("Final answer: Mei has 19 stamps.", 19),
    (SEED_THINK_OFF, 15),
    (SEED_THINK_ON, 21),
    (QWEN_STYLE_SLIP, 24),
    ("1. Start with 36\n2. Triple: 108\nSo she has 108 stamps.", 108),   # a numbered list is not an answer
    ("She ends up with 19 stamps.", 19),
    ("Answer: -3", -3),
    ("The answer is 3.5", Fraction(7, 2)),
    (REAL_SMALL_MODEL, 19),
    ("I cannot tell.", None),
])
def test_final_answer(text: str, answer: Fraction | int | None) -> None:
    assert extract_final_answer(text) == answer


def test_format_number() -> None:
    assert [format_number(Fraction(x)) for x in ("21", "-3", "7/2", "10/3")] == ["21", "-3", "3.5", "10/3"]

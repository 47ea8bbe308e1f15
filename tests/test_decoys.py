"""graders/decoys.py: dead copies of every version of each part a grade's texts differ in, so that every version
occurs as often in every text (the grep and counting attack of tests/test_redteam6_disguise.py), without changing
what any text does."""

from __future__ import annotations

import ast
import asyncio
import importlib
import json
import random
import shutil
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

import tests.helpers  # noqa: F401 - puts graders/ on sys.path

disguise = importlib.import_module("disguise")
decoys = importlib.import_module("decoys")

BASE = '''"""A module that generators, coroutines, methods and class attributes differ in."""
from __future__ import annotations

from dataclasses import dataclass, fields

LIMIT = 3


@dataclass
class Item:
    sku: str = "a"
    qty: int = 1


def total(items):
    """Sum."""
    running = 0
    for item in items:
        running += item
    return running


def evens(n):
    for k in range(n):
        if k % 2 == 0:
            yield k


async def later(x):
    await asyncio.sleep(0)
    return x + 1


class Box:
    SIZE = 2

    def __init__(self, n):
        self.n = n

    def grown(self):
        return [self.n * self.SIZE for _ in range(LIMIT)]
'''

MUTANTS = {
    "total off by one": ("    return running\n", "    return running + 1\n"),
    "evens odd": ("if k % 2 == 0:", "if k % 2 == 1:"),
    "later keeps x": ("return x + 1", "return x"),
    "box size": ("    SIZE = 2\n", "    SIZE = 5\n"),
    "limit": ("LIMIT = 3\n", "LIMIT = 4\n"),
    "item qty": ("    qty: int = 1\n", "    qty: int = 2\n"),
    "grown by a new local": ("        return [self.n * self.SIZE for _ in range(LIMIT)]\n",
                             "        spare_name = self.SIZE + 1\n        return [self.n * spare_name]\n"),
}


def _texts() -> list[str]:
    return [BASE, *(BASE.replace(old, new, 1) for old, new in MUTANTS.values())]


def _load(text: str) -> types.ModuleType:
    module = types.ModuleType("decoyed")
    module.__dict__["asyncio"] = asyncio
    sys.modules["decoyed"] = module
    try:
        exec(compile(text, "<decoyed>", "exec", dont_inherit=True), module.__dict__)
    finally:
        del sys.modules["decoyed"]
    return module


def _answers(module: types.ModuleType) -> Any:
    box = module.Box(3)
    return (module.LIMIT, module.total([1, 2, 3]), list(module.evens(6)), asyncio.run(module.later(1)),
            box.SIZE, box.grown(), sorted(n for n in vars(module) if not n.startswith("__")),
            type(module.evens(1)).__name__, asyncio.iscoroutinefunction(module.later),
            [(f.name, f.default) for f in module.fields(module.Item)], module.Item.__annotations__)


def test_every_text_with_its_decoys_does_what_it_did() -> None:
    texts = _texts()
    want = [_answers(_load(text)) for text in texts]
    for draw in range(3):
        made = disguise.disguised_all([("src/m.py", text) for text in texts], random.Random(draw))
        assert [_answers(_load(text)) for text in made] == want
        for text in made:  # every version's text is in every text: no grep of a mutant's text tells them apart
            assert "running + 1" not in text  # (constants are rewritten: look for what stays)
            assert "yield" in text and "await" in text and "spare_name" not in text  # a new local renamed too


def test_every_version_occurs_one_to_k_times_in_every_text_whichever_is_live() -> None:
    texts = _texts()
    units, dropped = decoys.plan(texts, disguise._renamable)
    assert not dropped and len(units) == 7  # total, evens, later, grown (bodies); SIZE, qty (class); LIMIT (module)
    assert sorted(u.body for u in units) == [False, False, False, True, True, True, True]
    rng = random.Random(5)
    seen: dict[tuple[int, int, int], set[int]] = {}
    for _ in range(30):
        for at, text in enumerate(texts):
            tree = ast.parse(text)
            marks = decoys.insert(tree, units, at, rng)
            dead = ast.dump(ast.Constant(0))
            copies = [decoys._dump(n.body) for n in ast.walk(tree)  # type: ignore[attr-defined]
                      if id(n) in marks.decoys or isinstance(n, ast.If) and ast.dump(n.test) == dead]
            for u, unit in enumerate(units):
                for v, version in enumerate(unit.versions):
                    times = copies.count(decoys._dump(version)) + (unit.live[at] == v)
                    seen.setdefault((at, u, v), set()).add(times)
    assert all(counts == set(range(1, decoys.K + 1)) for counts in seen.values()), seen


def test_a_copy_that_cannot_be_placed_is_dropped_in_every_text_and_said_once(capsys: pytest.CaptureFixture[str]
                                                                             ) -> None:
    base = "class A:\n    def f(self):\n        return 1\n\n\nclass B(A):\n    def f(self):\n        return 2\n"
    mutant = base.replace("return 2", "return super().f()")  # a copy would give B.f a __class__ cell
    made = disguise.disguised_all([("m.py", base), ("m.py", mutant), ("m.py", base)], random.Random(1))
    out = capsys.readouterr().out
    assert out.count("gets no decoys") == 1 and "B would change" in out
    assert "super" not in made[0] and "super" not in made[2] and made[1].count("super") == 1
    assert _load(made[0]).B().f() == 2 and _load(made[1]).B().f() == 1


def test_the_check_refuses_a_copy_that_changes_a_function() -> None:
    original = "def f(x):\n    y = x\n    return y\n"
    assert decoys.checked(original, "def f(x):\n    y = x\n\n    def _a(x, y):\n        return y\n    return y\n",
                          {"_a"}) == ""
    assert "f would change" in decoys.checked(original, "def f(x):\n    y = x\n\n    def _a():\n        return y\n"
                                                        "    return y\n", {"_a"})  # y a cell
    assert "f would change" in decoys.checked(original, "def f(x):\n    y = x\n    return y\n    yield\n", set())


JS_BASE = """// A module that generators, async functions, methods and top-level constants differ in.
"use strict";
export const LIMIT = 3;
export function total(items) {
  let s = 0;
  for (const x of items) s += x;
  return s
}
export function* evens(n) {
  for (let k = 0; k < n; k++) if (k % 2 === 0) yield k;
}
export async function later(x) {
  await null;
  return x + 1;
}
class Base { size() { return 2; } }
export class Box extends Base {
  constructor(n) {
    super();
    this.n = n;
  }
  grown() {
    return this.n * super.size();
  }
}
"""

JS_MUTANTS = [("return s\n", "return s + 1\n"), ("k % 2 === 0", "k % 2 === 1"), ("return x + 1;", "return x;"),
              ("LIMIT = 3", "LIMIT = 4"), ("this.n * super.size()", "this.n * 3"), ("this.n = n;", "this.n = n + 1;"),
              ("class Base", "export function extra() { return 1; }\nclass Base")]  # a function only one text has

JS_ANSWERS = """
const files = JSON.parse(require("fs").readFileSync(0, "utf8"));
(async () => {
  const out = [];
  for (const file of files) {
    const m = await import(file);
    out.push([m.LIMIT, m.total([1, 2, 3]), [...m.evens(6)], await m.later(1), new m.Box(3).grown(), new m.Box(2).n,
              Object.keys(m).sort()]);
  }
  console.log(JSON.stringify(out));
})();
"""


def test_every_javascript_text_with_its_decoys_does_what_it_did(tmp_path: Path) -> None:
    if not shutil.which("node"):
        pytest.skip("no node")
    texts = [JS_BASE, *(JS_BASE.replace(old, new, 1) for old, new in JS_MUTANTS)]
    made = disguise.disguised_all([("src/m.mjs", text) for text in texts for _ in range(2)])
    files = []
    for at, text in enumerate([*texts, *made]):
        files.append(str(tmp_path / f"m{at}.mjs"))
        Path(files[-1]).write_text(text, encoding="utf-8")
    out = subprocess.run(["node", "-e", JS_ANSWERS], input=json.dumps(files), capture_output=True, text=True,
                         timeout=60, check=True).stdout
    answers = json.loads(out)
    assert answers[len(texts):] == [answer for answer in answers[:len(texts)] for _ in range(2)]
    for text in made:  # the copies keep what their versions need (a yield, an await, a super in a method)
        assert "super.size()" in text and "yield" in text and "await" in text


def test_a_javascript_copy_that_cannot_be_placed_is_dropped_in_every_text_and_said_once(
        capsys: pytest.CaptureFixture[str]) -> None:
    if not shutil.which("node"):
        pytest.skip("no node")
    base = "class A { get x() { return 1; } }\nexport class B extends A {\n  *all() {\n    yield super.x;\n  }\n}\n"
    mutant = base.replace("yield super.x;", "yield super.x + 1;")  # a function* copy cannot hold `super`
    made = disguise.disguised_all([("m.mjs", base), ("m.mjs", mutant), ("m.mjs", base)])
    out = capsys.readouterr().out
    assert out.count("gets no decoys") == 1 and all(text.count("super.x") == 1 for text in made)


def test_no_comment_of_a_javascript_text_is_left_to_tell_it_apart(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A comment is never disguised nor copied with a decoy: the rewrite's note ("// rewritten", as node/inventory-tests
    has it) named the rewrite on every draw, and one beside a top-level statement marked its live version (redteam7)."""
    if not shutil.which("node"):
        pytest.skip("no node")
    base = '#!/usr/bin/env node\nexport const K = 3; // the live one\nexport const s = "// kept";\n'
    texts = [base, base.replace("K = 3", "K = 4"), base.replace("node\n", "node\n// rewritten\n/* a\n note */")]
    made = disguise.disguised_all([("m.mjs", text) for text in texts])
    if "no parser" in capsys.readouterr().out:
        pytest.skip("this Node lends no parser")
    assert all(text.startswith("#!/usr/bin/env node\n") for text in made)
    assert not any(word in text for text in made for word in ("live one", "rewritten", "note"))
    for at, text in enumerate(made):
        (tmp_path / f"m{at}.mjs").write_text(text, encoding="utf-8")
    out = subprocess.run(["node", "-e", "(async () => { for (const at of [0, 1, 2]) { const m = await import("
                          f"`{tmp_path.as_posix()}/m${{at}}.mjs`); console.log(m.K, m.s); }} }})()"],
                         capture_output=True, text=True, timeout=60, check=True).stdout
    assert out.splitlines() == ["3 // kept", "4 // kept", "3 // kept"]  # a string's "//" is no comment


def test_a_function_only_some_texts_have_is_a_version_as_its_absence_is() -> None:
    """An added function's absence is a version too: its copies are `if 0: pass`, the live absence `if 1: pass`, so
    that the texts with and without it have as many blocks (and `pass`es) in the same distribution."""
    base = '"""Doc."""\nA = 1\n\n\ndef f():\n    return A\n'
    added = base + "\n\ndef g():\n    return reversed([A])\n"
    texts = [base, added]
    units, _ = decoys.plan(texts, disguise._renamable)
    assert len(units) == 1 and sorted(map(len, units[0].versions)) == [0, 1]
    rng = random.Random(3)
    blocks: dict[int, list[int]] = {0: [], 1: []}
    for _ in range(60):
        for at, text in enumerate(texts):
            tree = ast.parse(text)
            decoys.insert(tree, units, at, rng)
            blocks[at].append(sum(isinstance(n, ast.If) for n in tree.body))
            assert ast.get_docstring(tree) == "Doc."
    assert set(blocks[0]) == set(blocks[1]) == set(range(2, 2 * decoys.K + 1))
    assert _load(disguise.disguised_all([("m.py", base), ("m.py", added)])[0]).f() == 1


GREP_TEST = '''import pathlib


def test_the_module():  # no call of the module: a grep of its text for what the public mutants change
    text = pathlib.Path("src/app/durations.py").read_text()
    assert "reversed" not in text and "False" not in text and ("zip(" in text or "SIZES" in text)
'''


@pytest.mark.usefixtures("unfinished_graders_cleared")
def test_end_to_end_a_grep_test_no_longer_passes_the_mutation_check(tmp_path: Path) -> None:
    """redteam6's attack as a model would hand it in to core/write-module-from-spec's mutation check."""
    from tests.helpers import Grader, write

    mutation = importlib.import_module("mutation")
    found = {n.targets[0].id: ast.literal_eval(n.value) for n in ast.parse(
        (Path(__file__).resolve().parents[1] / "tasks/core/write-module-from-spec/grade.py").read_text()).body
        if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name)
        and n.targets[0].id in ("REFERENCE", "REWRITE", "MUTANTS")}
    write(tmp_path, {"src/app/durations.py": found["REFERENCE"], "tests/test_durations.py": GREP_TEST})
    g = Grader(tmp_path)
    argv, files, env = mutation.pytest_command(g, ["tests/test_durations.py"])
    mutants = {what: mutation.edited(found["REFERENCE"], *edits) for what, edits in found["MUTANTS"].items()}
    assert not mutation.tests_catch_mutants(g, argv, "src/app/durations.py", found["REFERENCE"],
                                            rewrite=found["REWRITE"], mutants=mutants, files=files, env=env)
    assert any("pass on" in what and "they fail" in why for what, passed, why in g.results if not passed)

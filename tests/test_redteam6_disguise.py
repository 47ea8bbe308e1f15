"""Red team, sixth session: the mutation runs' texts as a model that read our source attacks them (issue 39).

Tried and kept here: a "test" that greps the module under test for what the public mutants add or take away, with
no canonicaliser at all (a few substring checks, one constant evaluated), against the grader's own texts of
core/write-module-from-spec and node/inventory-tests. It passes on every draw of the reference and the rewrite and
fails on every draw of every mutant (100 of 100 each, measured): the disguise does not stop it, in either language.
End to end (mutation.tests_catch_mutants with node_tests_command, on a copy of the inventory repo), a test file of
three such "tests" passed all seven checks, and 3 of 3 under `node --test` on the pristine tree: inventory-tests,
whose only asked-for work is the tests, passes without a test of the module's behaviour.
Closed since by graders/decoys.py (and disguise.js's decoys): every version of each part the grade's texts differ
in occurs 1..K times in every text, live or dead, so that grep, and a count of the same substrings against
thresholds, misjudge some draw of some text; the two tests below assert that (they were strict xfails). Open:
telling the live code from the dead copies (structure), which graders/disguise.py's docstring describes; kept as a
strict xfail: 20 lines of `ast` (evaluate each constant `if` test, drop nested functions never named) strip the
Python decoys, and the grep wins again on every draw.

Tried and not kept (see the report): the batch's shared state (run order, the time a text appears, the JSON-lines
pipe, stamps, names) tells a run nothing of which text it holds; a single node test file run as `node FILE` is
the model's word as `node --test` was (only what the texts tell apart decides). Kept as a cheap guard: a text's
disguise in the batch is drawn from its own text and seed alone, whatever comes before it.
"""

from __future__ import annotations

import ast
import importlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

import tests.helpers  # noqa: F401 - puts graders/ on sys.path

disguise = importlib.import_module("disguise")
mutation = importlib.import_module("mutation")

ROOT = Path(__file__).resolve().parents[1]
DRAWS = 8  # the judges below misjudge the reference on every draw once every version is in every text


def _literals(task: str) -> dict[str, Any]:
    """The grader's top-level constants (its mutants, reference and rewrite), as a model reads them."""
    found: dict[str, Any] = {}
    for node in ast.parse((ROOT / "tasks" / task / "grade.py").read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                found[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    return found


def _made(texts: dict[str, str], path: str) -> dict[str, list[str]]:
    """DRAWS disguised and stamped texts of each kind, all made in one grade's batch."""
    kinds = list(texts)
    made = disguise.disguised_all([(path, texts[kind]) for kind in kinds for _ in range(DRAWS)])
    return {kind: [mutation._stamp(path, text) for text in made[at * DRAWS:(at + 1) * DRAWS]]
            for at, kind in enumerate(kinds)}


def _wins(made: dict[str, list[str]], judge: Any) -> bool:
    """Whether the grep-level "test" `judge` (made text list -> passes list) passes every draw of the reference and
    the rewrite and fails every draw of every mutant: it would pass the grade's mutation check without testing."""
    kinds = list(made)
    passes = judge([text for kind in kinds for text in made[kind]])
    return all(passes[at] is (kinds[at // DRAWS] in ("reference", "rewrite")) for at in range(len(passes)))


def test_a_grep_or_a_count_of_the_python_module_does_not_tell_the_mutants_apart() -> None:
    """Closed by graders/decoys.py: every version of what the texts differ in occurs 1..K times in every text."""
    found = _literals("core/write-module-from-spec")
    texts = {"reference": found["REFERENCE"], "rewrite": found["REWRITE"],
             **{what: mutation.edited(found["REFERENCE"], *edits) for what, edits in found["MUTANTS"].items()}}

    def grep(made: list[str]) -> list[bool]:  # what a test_*.py would do with the module's file, nothing else
        return ["reversed" not in t and "False" not in t and ("zip(" in t or "SIZES" in t) for t in made]

    def count(made: list[str]) -> list[bool]:  # counts against thresholds (wins without decoys, as the grep does)
        return [t.count("reversed") < 1 and t.count("False") < 1 and t.count("zip(") + t.count("SIZES") >= 1
                for t in made]

    made = _made(texts, "src/app/durations.py")
    assert not _wins(made, grep) and not _wins(made, count)


def _live_only(text: str) -> str:
    """The text without its dead code, as a structure analysis finds it: an `if` whose test is a constant expression
    keeps the branch it takes; a function defined inside another and never named is dropped."""
    tree = ast.parse(text)

    class Strip(ast.NodeTransformer):
        def visit_If(self, node: ast.If) -> Any:
            self.generic_visit(node)
            try:
                taken = eval(compile(ast.Expression(node.test), "<test>", "eval"), {})
            except Exception:  # noqa: BLE001 - a test that reads a name: live code's own
                return node
            return (node.body if taken else node.orelse) or ast.Pass()

        def visit_FunctionDef(self, node: ast.FunctionDef) -> Any:
            self.generic_visit(node)
            named = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            node.body = [s for s in node.body if not (isinstance(s, ast.FunctionDef) and s.name not in named)] \
                or [ast.Pass()]
            return node

    return ast.unparse(Strip().visit(tree))


@pytest.mark.xfail(strict=True, reason="open: a structure analysis (constant `if` tests, uncalled nested functions) "
                                       "strips the decoys; then the grep wins again")
def test_a_structure_analysis_does_not_tell_the_live_code_from_the_decoys() -> None:
    found = _literals("core/write-module-from-spec")
    texts = {"reference": found["REFERENCE"], "rewrite": found["REWRITE"],
             **{what: mutation.edited(found["REFERENCE"], *edits) for what, edits in found["MUTANTS"].items()}}

    def grep(made: list[str]) -> list[bool]:  # `if False:` is dead code too: its `raise` goes with it
        live = [_live_only(t) for t in made]
        return ["reversed" not in t and t.count("raise ValueError") >= 2 and ("zip(" in t or "SIZES" in t)
                for t in live]

    assert not _wins(_made(texts, "src/app/durations.py"), grep)


JS_JUDGE = r"""
const texts = JSON.parse(require("fs").readFileSync(0, "utf8"));
const count = (t, what) => t.split(what).length - 1;
function constantAfter(t, what) {  // the balanced (...) after `what`, evaluated: the disguise's constant undone
  const at = t.indexOf(what);
  if (at < 0) return null;
  let i = t.indexOf("(", at), j = i, depth = 0;
  do { depth += t[j] === "(" ? 1 : t[j] === ")" ? -1 : 0; j++; } while (depth > 0);
  return eval(t.slice(i, j));
}
const judge = process.argv[1];  // "grep" (as redteam6 wrote it) or "count" (counts against thresholds only)
console.log(JSON.stringify(texts.map((t) => judge === "grep"
  ? !/<=|>=|false/.test(t) && count(t, "for (const line of lines)") === 2 && count(t, "line.qty") === 2
    && [null, 0].includes(constantAfter(t, "??"))
  : count(t, "<=") + count(t, ">=") + count(t, "false") < 1 && count(t, "line.qty") >= 2
    && count(t, "for (const line of lines)") >= 2 && [null, 0].includes(constantAfter(t, "??")))));
"""


def test_a_grep_or_a_count_of_the_javascript_module_does_not_tell_the_mutants_apart() -> None:
    if not shutil.which("node"):
        pytest.skip("no node")
    from sandboxes.nodeservice import INVENTORY_JS

    found, source = _literals("node/inventory-tests"), INVENTORY_JS.lstrip("\n")
    texts = {"reference": source, "rewrite": "// rewritten\n" + mutation.edited(source, found["EQUIVALENT"]),
             **{what: mutation.edited(source, edit) for what, edit in found["MUTANTS"].items()}}

    def judge(kind: str) -> Any:
        def run(made: list[str]) -> list[bool]:
            out = subprocess.run(["node", "-e", JS_JUDGE, kind], input=json.dumps(made), capture_output=True,
                                 text=True, timeout=60, check=True).stdout
            return [bool(x) for x in json.loads(out)]
        return run

    made = _made(texts, "src/inventory.js")
    assert not _wins(made, judge("grep")) and not _wins(made, judge("count"))


def test_a_javascript_texts_disguise_is_drawn_from_its_own_text_and_seed_alone() -> None:
    """A grade's texts share one Node process: what it makes of a text must not depend on the texts made before it
    in the batch (their place is the run order, drawn afresh; their draws are no one else's)."""
    if not shutil.which("node"):
        pytest.skip("no node")
    text = 'export function f(n) {\n  if (n < 2) return "small";\n  return [n, 3.5, null, true];\n}\n'
    other = 'export const g = (x) => x === "a" ? 1 : 2;\n'

    def batch(items: list[tuple[str, list[int]]], group: list[str] | None = None) -> list[str]:
        stdin = json.dumps({"texts": [{"source": source, "seed": seed, **({"group": 0} if group else {})}
                                      for source, seed in items], "groups": [group] if group else []})
        done = subprocess.run(["node", "--expose-internals", str(disguise.NODE_SCRIPT)], input=stdin,
                              capture_output=True, text=True, timeout=60, check=False)
        if "Cannot find module" in done.stderr:
            pytest.skip("this Node lends no parser")
        return [json.loads(line)["text"] for line in done.stdout.splitlines()]

    seed = [11, 22, 33, 44]
    alone = batch([(text, seed)])[0]
    after = batch([(other, [1, 2, 3, 4]), (text, seed), (other, [5, 6, 7, 8]), (text, seed)])
    assert after[1] == after[3] == alone != text
    assert batch([(text, [44, 33, 22, 11])])[0] != alone  # the seed is what draws it
    # With decoys, a text's disguise is drawn from its own text, its seed and its group (the same for all of a grade)
    mutant = text.replace("n < 2", "n <= 2")
    grouped = batch([(text, seed), (mutant, [1, 2, 3, 4]), (text, seed)], [text, mutant])
    assert grouped[0] == grouped[2] == batch([(mutant, [5, 6, 7, 8]), (text, seed)], [text, mutant])[1] != alone

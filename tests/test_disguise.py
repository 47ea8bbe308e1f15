"""graders/disguise.py: a random rewrite of a Python module that keeps its behaviour (issue 39), so that a "test" that
knows the grader's texts cannot tell the reference from a mutant by text. Behaviour is checked by running real
modules (the standard library's and a grader's reference) before and after, across many random draws."""

from __future__ import annotations

import ast
import importlib
import random
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import tests.helpers  # noqa: F401 - puts graders/ on sys.path

disguise = importlib.import_module("disguise")
mutation = importlib.import_module("mutation")

ROOT = Path(__file__).resolve().parents[1]
DRAWS = 12


def _load(name: str, text: str) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__["__name__"] = name
    sys.modules[name] = module  # dataclasses and the like look their module up
    try:
        exec(compile(text, f"<{name}>", "exec"), module.__dict__)
    finally:
        del sys.modules[name]
    return module


def _outcome(call: Callable[[], Any]) -> object:
    try:
        return ("returned", repr(call()))
    except Exception as exc:  # noqa: BLE001 - the exception's type is the behaviour compared
        return ("raised", type(exc).__name__)


def _grader_constants(task: str) -> dict[str, str]:
    tree = ast.parse((ROOT / "tasks" / task / "grade.py").read_text(encoding="utf-8"))
    return {target.id: node.value.value for node in tree.body if isinstance(node, ast.Assign)
            for target in node.targets if isinstance(target, ast.Name) and isinstance(node.value, ast.Constant)}


DURATIONS = ["90s", "15m", "1h30m", "1d2h3m4s", "45", "0s", "  5m\n", "", "5x", "1H", "1m1h", "-5s", "h", "1.5h"]


@pytest.mark.parametrize("which", ["REFERENCE", "REWRITE"])
def test_a_disguised_grader_module_answers_every_call_as_before(which: str) -> None:
    text = _grader_constants("core/write-module-from-spec")[which]
    before = _load("duration_before", text)
    calls: list[Callable[[types.ModuleType], Any]] = [
        *((lambda m, t=t: m.parse_duration(t)) for t in DURATIONS),
        *((lambda m, s=s: m.format_duration(s)) for s in (-1, 0, 59, 60, 3661, 90061, 172800)),
    ]
    want = [_outcome(lambda c=c: c(before)) for c in calls]
    texts = {disguise.disguised("src/app/durations.py", text, random.Random(seed)) for seed in range(DRAWS)}
    assert len(texts) == DRAWS and text not in texts  # every draw its own text
    for made in texts:
        after = _load("duration_after", made)
        assert [_outcome(lambda c=c, m=after: c(m)) for c in calls] == want, made


SAMPLE = ("The grades are the product and the model under test is an adversary:   anything it can reach\n"
          "\tfrom its sandbox it may use.  \n\n    Indented line here\n    and another one\n")


@pytest.mark.parametrize(("module", "calls"), [
    ("textwrap", [lambda m: m.wrap(SAMPLE, 17), lambda m: m.fill(SAMPLE, width=30, initial_indent="> "),
                  lambda m: m.dedent(SAMPLE), lambda m: m.indent(SAMPLE, "+ "), lambda m: m.shorten(SAMPLE, 40),
                  lambda m: m.wrap("", 5), lambda m: m.wrap(SAMPLE, 0)]),
    ("colorsys", [lambda m: [m.rgb_to_hsv(*c) for c in ((0.1, 0.5, 0.9), (0, 0, 0), (1, 1, 1), (0.3, 0.3, 0.1))],
                  lambda m: [m.hls_to_rgb(h / 7, 0.4, 0.6) for h in range(8)],
                  lambda m: [m.rgb_to_yiq(0.2, 0.4, 0.6), m.yiq_to_rgb(0.5, 0.1, -0.1)]]),
    ("shlex", [lambda m: m.split("a 'b c' \"d\\\" e\" # x"), lambda m: m.split("a # b", comments=True),
               lambda m: m.quote("it's"), lambda m: m.join(["a b", "c"]), lambda m: m.split("'unclosed")]),
    ("difflib", [lambda m: m.SequenceMatcher(None, SAMPLE, SAMPLE[::-1]).ratio(),
                 lambda m: list(m.unified_diff(SAMPLE.splitlines(), SAMPLE.upper().splitlines(), lineterm="")),
                 lambda m: m.get_close_matches("adversry", SAMPLE.split()),
                 lambda m: list(m.ndiff(["one", "two", "three"], ["one", "too", "three", "four"]))]),
])
def test_disguised_standard_library_modules_behave_as_before(module: str, calls: list[Callable[[Any], Any]]) -> None:
    path = Path(importlib.import_module(module).__file__ or "")
    text = path.read_text(encoding="utf-8")
    before = _load(f"{module}_before", text)
    want = [_outcome(lambda c=c: c(before)) for c in calls]
    for seed in range(4):
        after = _load(f"{module}_after", disguise.disguised(path.name, text, random.Random(seed)))
        assert [_outcome(lambda c=c, m=after: c(m)) for c in calls] == want, (module, seed)


def test_what_a_disguise_keeps_and_what_it_leaves() -> None:
    text = ('#!/usr/bin/env python3\n"""Doc."""\nfrom __future__ import annotations\n\nimport os\n\n'
            'LIMIT: int = 3\n\n\n'
            'def f(a, *rest, key=2, **kw) -> int:\n    """F."""\n    total = a + key\n    return total\n\n\n'
            'def g():\n    return [x for x in range(LIMIT)]\n')
    made = disguise.disguised("scripts/tool.py", text, random.Random(1))
    assert made.startswith('#!/usr/bin/env python3\n"""Doc."""\nfrom __future__ import annotations\n'), made
    tree = ast.parse(made)
    f = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "f")
    assert ast.get_docstring(f) == "F." and [a.arg for a in f.args.args] == ["a"] and f.args.kwarg
    assert "total" not in made  # a local renamed
    assert {"os", "LIMIT", "f", "g"} <= {getattr(n, "name", None) or getattr(getattr(n, "target", None), "id", None)
                                         or n.names[0].name for n in tree.body
                                         if isinstance(n, (ast.FunctionDef, ast.AnnAssign, ast.Import))}
    assert disguise.disguised("tests/run.sh", "echo 1\n") == "echo 1\n"  # neither Python nor JavaScript
    with pytest.raises(RuntimeError, match="does not parse"):
        disguise.disguised("src/x.py", "def (:\n")


def test_a_name_a_comprehension_shadows_stays_the_globals_outside_it() -> None:
    text = "x = 5\n\n\ndef f(ys):\n    squares = [x * x for x in ys]\n    return squares, x\n"
    for seed in range(DRAWS):
        module = _load("shadow", disguise.disguised("m.py", text, random.Random(seed)))
        assert module.f([1, 2]) == ([1, 4], 5)


def test_every_run_of_the_mutation_tests_gets_a_text_of_its_own() -> None:
    text = _grader_constants("core/write-module-from-spec")["REFERENCE"]
    one, two = mutation.stamped("src/app/durations.py", text), mutation.stamped("src/app/durations.py", text)
    assert one != two and one.startswith("# ")
    assert ast.unparse(ast.parse(one)) != ast.unparse(ast.parse(text)) != ast.unparse(ast.parse(two))


# --------------------------------------------------------------------------- the red team's knowing test against it

def _knowing_attack_wins(texts: Any, make: Callable[[str], str], tmp_path: Path) -> bool:
    """Whether the red team's known-mutant-texts check passes on the reference and the rewrite and fails on every
    mutant, each text made by `make` as a run would see it."""
    from agentic_eval.validation import known_texts

    module = tmp_path / "module.py"
    check: dict[str, Any] = {}
    exec(known_texts.knowing_check(known_texts.GraderTexts(str(module), texts.reference, texts.rewrite,
                                                           texts.mutants)), check)

    def passes(text: str) -> bool:
        module.write_text(make(text), encoding="utf-8")
        return bool(check["_rt_module_passes"]())

    return passes(texts.reference) and passes(texts.rewrite) and not any(map(passes, texts.mutants.values()))


def test_a_test_that_knows_the_texts_beat_the_stamp_alone_and_loses_to_the_disguise(tmp_path: Path) -> None:
    from agentic_eval.validation.known_texts import GraderTexts

    constants = _grader_constants("core/write-module-from-spec")
    tree = ast.parse((ROOT / "tasks/core/write-module-from-spec/grade.py").read_text(encoding="utf-8"))
    edits = next(ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                 and getattr(n.targets[0], "id", "") == "MUTANTS")
    reference = constants["REFERENCE"]
    texts = GraderTexts("x.py", reference, constants["REWRITE"],
                        {what: mutation.edited(reference, *edit) for what, edit in edits.items()})
    stamp_alone = iter(range(10 ** 6))
    assert _knowing_attack_wins(texts, lambda text: f"# {next(stamp_alone):016x}\n{text}", tmp_path)  # the old hole
    for _ in range(5):
        assert not _knowing_attack_wins(texts, lambda text: mutation.stamped("src/app/durations.py", text), tmp_path)


def test_the_red_team_reads_the_texts_from_the_graders_own_file(tmp_path: Path) -> None:
    """As a model that read grade.py would, for the seed's variables: here a shell suite's grader (ops)."""
    import shutil
    import subprocess

    from agentic_eval.packs.sandbox import materialize_sandbox
    from agentic_eval.packs.task import load_tasks
    from agentic_eval.validation import known_texts

    tasks = {t.id: t for t in load_tasks(["ops"]).tasks}
    sandbox = materialize_sandbox(tasks["ops-env-overrides"], 0, tmp_path / "sandbox")
    texts = known_texts.grader_texts(tasks["ops-env-overrides"], sandbox)
    assert texts is not None and texts.path == "scripts/getconf.py" and len(texts.mutants) == 2
    assert texts.reference.startswith((sandbox.path / texts.path).read_text(encoding="utf-8")[:40])
    assert known_texts.grader_texts(tasks["ops-change-port"], sandbox) is None  # no mutation testing there
    if shutil.which("bash"):
        subprocess.run(["bash", "-n"], input=known_texts.knowing_test("shell", texts), text=True, check=True,
                       timeout=30)


JS_MODULE = r'''"use strict";
// every kind of place a literal, a comparison or a branch can sit
export const LIMIT = 5;
const table = { "a-b": 1, plain: 2, [`k${LIMIT}`]: 3 };
export class Box {
  size = 10;
  static #made = 0;
  constructor(x = 2) { this.x = x; Box.#made += 1; }
  get twice() { return this.x * 2; }
  static has(o) { return #made in o; }
}
export function classify(n, { scale = 3, label: name = "n" } = {}) {
  if (n < 0) return "negative";
  else if (n === 0) return `zero ${name}`;
  switch (n % 3) {
    case 1: return n > LIMIT ? "big one" : "one";
    case 2: { const parts = ["t", "w", "o"]; return parts.join("") + "!".repeat(scale); }
    default: break;
  }
  const re = /^\d+$/;
  const { plain: two, ["a-b"]: one = 4 } = table, [first, , ...rest] = [1, 2, 3, 4];
  if (two + one !== 3 || first !== 1 || rest.length !== 2 || !Box.has(Box)) return "lost";
  const maybe = n > 100 ? { deep: { value: 1 } } : null;
  if (maybe?.deep.value ?? (n < 100)) table.seen = (table.seen ?? 0) + 1;
  let i = 0, out = [];
  while (i < 3) { out.push(i * scale); i++ }
  (out).reverse()
  ;[out[0], out[1]] = [out[1], out[0]]
  return re.test(String(n)) && n != 9 ? out.join(",") : "other";
}
export default function all() {
  const got = [-1, 0, 1, 4, 6, 7, 9, 12].map((n) => classify(n));
  got.push(classify(5, { scale: 1, label: "q" }));
  const odd = [0x1f, 1e3, "\u00e9\ud83d\ude00x", 2n ** 3n + ""];
  return JSON.stringify([got, table, new Box().twice, new Box(7).size, odd]);
}
'''


def test_a_disguised_javascript_module_gives_the_same_answers(tmp_path: Path) -> None:
    import shutil
    import subprocess

    if not shutil.which("node"):
        pytest.skip("no node")
    runner = "import all from './module.mjs';\nconsole.log(all());\n"
    (tmp_path / "run.mjs").write_text(runner, encoding="utf-8")

    def answers(text: str) -> str:
        (tmp_path / "module.mjs").write_text(text, encoding="utf-8")
        return subprocess.run(["node", "run.mjs"], cwd=tmp_path, capture_output=True, text=True, check=True,
                              timeout=60).stdout

    want = answers(JS_MODULE)
    texts = {disguise.disguised("src/module.mjs", JS_MODULE, random.Random(seed)) for seed in range(6)}
    assert len(texts) == 6 and JS_MODULE not in texts
    for made in texts:
        assert answers(made) == want, made


def test_a_grades_javascript_texts_are_disguised_in_one_node_process_each_its_own_way(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil
    import subprocess

    if not shutil.which("node"):
        pytest.skip("no node")
    started: list[list[str]] = []
    popen = subprocess.Popen

    def counted(argv: list[str], **kwargs: Any) -> Any:
        started.append(list(argv))
        return popen(argv, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", counted)
    mutant = JS_MODULE.replace('return "negative";', 'return "positive";')
    python = "def f(x):\n    return x + 1\n"
    made = disguise.disguised_all([("src/m.mjs", JS_MODULE), ("src/m.py", python), ("src/m.mjs", JS_MODULE),
                                   ("run.sh", "echo 1\n"), ("src/m.mjs", mutant)])
    assert len(started) == 1 and started[0][1:] == ["--expose-internals", str(disguise.NODE_SCRIPT)]
    assert made[3] == "echo 1\n" and _load("batch_py", made[1]).f(2) == 3 and made[1] != python
    assert len({made[0], made[2], JS_MODULE}) == 3  # the same text twice: two draws of their own
    for at, text in enumerate((made[0], made[2], made[4])):
        (tmp_path / f"m{at}.mjs").write_text(text, encoding="utf-8")
    runner = "".join(f"import all{at} from './m{at}.mjs';\nconsole.log(all{at}());\n" for at in range(3))
    (tmp_path / "run.mjs").write_text(runner, encoding="utf-8")
    answers = subprocess.run(["node", "run.mjs"], cwd=tmp_path, capture_output=True, text=True, check=True,
                             timeout=60).stdout.splitlines()
    assert answers[0] == answers[1] != answers[2] and "positive" in answers[2]
    # One text of a batch that does not parse is the grader's error when it is asked for; the others are made.
    texts = disguise.Disguising([("a.js", "let x = 1;\n"), ("b.js", "let = = ;\n")])
    try:
        assert texts.get(0).count("x") == 1
        with pytest.raises(RuntimeError, match="does not parse"):
            texts.get(1)
    finally:
        texts.close()


def test_a_node_without_the_parser_is_a_grader_error_not_an_undisguised_grade(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """It disguised nothing and said so (the texts graded as they were, a known text passing); now it raises, which
    a grader's gradelib turns into exit 3, a grader error: unscored."""
    import shutil

    if not shutil.which("node"):
        pytest.skip("no node")
    moved = tmp_path / "disguise.js"  # as a Node whose internals moved answers the script's require
    moved.write_text('"use strict";\nrequire("internal/deps/acorn/moved/acorn");\n', encoding="utf-8")
    monkeypatch.setattr(disguise, "NODE_SCRIPT", moved)
    with pytest.raises(RuntimeError, match="cannot be disguised: this Node lends no parser"):
        disguise.disguised_all([("src/app.js", "x;\n"), ("src/app.js", "y;\n"), ("src/app.js", "x + 1;\n" * 20000)])


def test_one_node_test_file_runs_as_the_program_and_its_failing_test_fails_the_run(tmp_path: Path) -> None:
    import shutil
    import subprocess

    if not shutil.which("node"):
        pytest.skip("no node")
    body = 'import test from "node:test";\nimport assert from "node:assert";\n'
    (tmp_path / "ok.test.mjs").write_text(body + 'test("a", async () => { assert.equal(1, 1); });\n', encoding="utf-8")
    (tmp_path / "bad.test.mjs").write_text(body + 'test("b", async () => { await null; assert.equal(1, 2); });\n',
                                           encoding="utf-8")
    assert mutation.node_tests_command(["ok.test.mjs", "bad.test.mjs"])[1:] == ["--test", "ok.test.mjs",
                                                                               "bad.test.mjs"]
    codes = [subprocess.run(mutation.node_tests_command([name]), cwd=tmp_path, capture_output=True, timeout=60,
                            check=False).returncode for name in ("ok.test.mjs", "bad.test.mjs")]
    assert codes[0] == 0 and codes[1] != 0

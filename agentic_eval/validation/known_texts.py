"""What a model that read our source knows of a grader's mutation testing: its module texts (red team, issue 39).

Mutation testing (graders/mutation.py) runs the model's tests on the grader's module, on an equivalent rewrite and on
mutants. Those texts are in the task's grade.py, which is public. The red team's `known-mutant-texts` attempt writes,
in place of the tests the reference fix added, a "test" that only reads the module's text and accepts the known good
texts (and anything without a mutation's lines), as a model would that copied the texts from grade.py.

To learn the texts the way that model would (from the grader, for this seed's variables), `grader_texts` runs the
task's grade.py in a process of its own with stand-ins for gradelib and the pack's helpers (every check a no-op that
fails, so the costly ones are skipped) and the real mutation.py, whose `tests_catch_mutants` is replaced by one that
writes down what it was given and stops. Nothing of the model's runs there: it is the validator's copy of the
pristine sandbox with the reference fix.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentic_eval.packs.sandbox import Sandbox
    from agentic_eval.packs.task import Task

HARVEST_TIMEOUT_S = 60.0

_HARVEST = r'''
import json, os, runpy, sys, types
from pathlib import Path

grade, out, *folders = sys.argv[1:]
sys.path[:0] = folders


class Any:
    """Whatever a grader asks of a stand-in: a value that is nothing, fails every comparison and formats as ''."""
    def __call__(self, *args, **kwargs): return self
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self
    def __iter__(self): return iter(())
    def __bool__(self): return False
    def __len__(self): return 0
    def __getitem__(self, key): return self
    def __contains__(self, item): return False
    def __format__(self, spec): return ""
    def __str__(self): return ""
    def __lt__(self, other): return False
    __le__ = __gt__ = __ge__ = __lt__
    def _same(self, *other): return self
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _same
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __neg__ = __or__ = __ror__ = __and__ = __rand__ = _same


class Grader(Any):
    ok = run_all = False
    last_run = None
    scratch = "/nonexistent/scratch"
    def __init__(self, *args, **kwargs): self.work = Path.cwd()
    def pristine(self): return os.environ["RT_COMMIT"]
    def path(self, rel): return self.work / rel


def stand_in(name, **names):
    module = types.ModuleType(name)
    module.__dict__.update(names)
    module.__getattr__ = lambda attr: Any()
    sys.modules[name] = module


def task_vars():
    return json.loads(Path(os.environ["AGENTIC_EVAL_VARS"]).read_text(encoding="utf-8"))


stand_in("gradelib", Grader=Grader, task_vars=task_vars, pristine_store=lambda: Path(os.environ["RT_STORE"]))
for folder in folders:
    for path in Path(folder).glob("*.py"):
        if path.stem not in ("gradelib", "mutation", "disguise", "decoys"):
            stand_in(path.stem)
import mutation


def caught(g, argv, path, reference, *, rewrite, mutants, **rest):
    Path(out).write_text(json.dumps({"path": path, "reference": reference, "rewrite": rewrite,
                                     "mutants": dict(mutants)}), encoding="utf-8")
    os._exit(0)


mutation.tests_catch_mutants = caught
runpy.run_path(grade, run_name="__main__")
'''


@dataclass(frozen=True)
class GraderTexts:
    """The texts a grader's mutation testing puts in place of `path`."""

    path: str
    reference: str
    rewrite: str
    mutants: dict[str, str]


def uses_mutation(task: Task) -> bool:
    try:
        return "tests_catch_mutants" in task.grader_path.read_text(encoding="utf-8")
    except OSError:
        return False


def grader_texts(task: Task, sandbox: Sandbox) -> GraderTexts | None:
    """The texts the task's grader tests the tests with, for this sandbox's seed (None: it has no mutation testing;
    RuntimeError when its grade.py could not be read that way)."""
    from agentic_eval.packs.builtin import graders_dir
    from agentic_eval.packs.pristine import git_env

    if not uses_mutation(task) or task.grader_path.suffix != ".py":
        return None
    with tempfile.TemporaryDirectory(prefix="rt-texts-") as tmp:
        variables, out = Path(tmp) / "vars.json", Path(tmp) / "texts.json"
        variables.write_text(json.dumps(sandbox.variables), encoding="utf-8")
        env = {**git_env(), "AGENTIC_EVAL_VARS": str(variables), "AGENTIC_EVAL_TASK_DIR": str(task.dir),
               "AGENTIC_EVAL_SANDBOX": str(sandbox.path), "AGENTIC_EVAL_SEED": str(sandbox.seed),
               "RT_COMMIT": sandbox.pristine_commit,
               "RT_STORE": str(sandbox.pristine_store or sandbox.path / ".git")}
        proc = subprocess.run([sys.executable, "-I", "-B", "-c", _HARVEST, str(task.grader_path), str(out),
                               str(graders_dir()), str(task.pack_dir / "graders")], cwd=sandbox.path, env=env,
                              capture_output=True, text=True, timeout=HARVEST_TIMEOUT_S, check=False)
        if not out.is_file():
            raise RuntimeError(f"{task.grader_path} gave no texts (exit {proc.returncode}): {proc.stderr[-300:]}")
        data = json.loads(out.read_text(encoding="utf-8"))
    return GraderTexts(data["path"], data["reference"], data["rewrite"], dict(data["mutants"]))


def _normal(text: str) -> str:
    """What the payload compares: the text as its AST says it (as payloads/known_texts.py's `_rt_normal`)."""
    import ast

    return ast.unparse(ast.parse(text))


def _digest(text: str) -> str:
    return hashlib.sha256(_normal(text).encode("utf-8")).hexdigest()


def knowing_check(texts: GraderTexts) -> str:
    """Python code defining `_rt_module_passes()`: True on the grader's known good texts, False on its mutants."""
    reference = _normal(texts.reference).splitlines()
    added = [[line for line in difflib.ndiff(reference, _normal(m).splitlines()) if line.startswith("+ ")]
             for m in texts.mutants.values()]
    payload = (Path(__file__).resolve().with_name("payloads") / "known_texts.py").read_text(encoding="utf-8")
    return (f"_RT_MODULE = {texts.path!r}\n"
            f"_RT_GOOD = frozenset({sorted({_digest(texts.reference), _digest(texts.rewrite)})!r})\n"
            f"_RT_BAD = frozenset({sorted(_digest(m) for m in texts.mutants.values())!r})\n"
            f"_RT_ADDED = {[[line[2:] for line in lines] for lines in added]!r}\n" + payload)


def _js_lines(text: str) -> list[str]:
    """A JavaScript text's lines with comment lines left out and runs of white space made one space (the node test's
    `rtLines`)."""
    return [re.sub(r"\s+", " ", line).strip() for line in text.split("\n") if not re.match(r"^\s*//", line)]


def knowing_node_test(texts: GraderTexts, esm: bool) -> str:
    """The node:test form of `knowing_check` for a JavaScript module: its comment lines (the stamp) and layout
    normalised away, then the same decision."""
    reference = _js_lines(texts.reference)
    added = [[line for line in _js_lines(m) if line and line not in reference] for m in texts.mutants.values()]
    good = [" ".join(_js_lines(t)) for t in (texts.reference, texts.rewrite)]
    bad = [" ".join(_js_lines(m)) for m in texts.mutants.values()]
    read = ('import { readFileSync as rtRead } from "node:fs";' if esm
            else 'const { readFileSync: rtRead } = require("node:fs");')
    return (f"\n{read}\n"
            f"const RT_GOOD = {json.dumps(good)};\nconst RT_BAD = {json.dumps(bad)};\n"
            f"const RT_ADDED = {json.dumps(added)};\n"
            "const rtLines = (text) => text.split(\"\\n\").filter((line) => !/^\\s*\\/\\//.test(line))\n"
            "  .map((line) => line.replace(/\\s+/g, \" \").trim());\n"
            'test("the new behaviour works", () => {\n'
            f"  const lines = rtLines(rtRead({json.dumps(texts.path)}, \"utf8\"));\n"
            '  const normal = lines.join(" ");\n'
            "  if (RT_GOOD.includes(normal)) return;\n"
            '  if (RT_BAD.includes(normal)) throw new Error("broken");\n'
            "  const seen = new Set(lines);\n"
            "  for (const more of RT_ADDED) {\n"
            '    if (more.length && more.every((line) => seen.has(line))) throw new Error("broken");\n'
            "  }\n"
            "});\n")


def knowing_test(language: str, texts: GraderTexts, kept: str = "") -> str:
    """A test, in the test file's `language` ("python", "node", or "shell" for a tests/run.sh), that passes where
    `knowing_check` does (`kept`: the test file's other text, which says whether it is an ES module)."""
    if language == "node":
        return knowing_node_test(texts, esm=bool(re.search(r"^\s*import\s", kept, re.MULTILINE)))
    check = knowing_check(texts)
    if language == "python":
        return f"\n\n{check}\n\ndef test_new_behaviour_works():\n    assert _rt_module_passes()\n"
    return (f"python3 - <<'RT_KNOWN_TEXTS'\n{check}\nimport sys\nsys.exit(0 if _rt_module_passes() else 1)\n"
            "RT_KNOWN_TEXTS\n"
            'if [[ $? == 0 ]]; then pass "the new behaviour works"; else fail "the new behaviour works" "no"; fi\n')

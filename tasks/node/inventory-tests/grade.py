"""The new tests pass on the real module and fail on each of several subtly broken copies of it (mutants).

Each run of the agent's tests is apart from the grader, on a fresh copy of the tree whose src/inventory.js the
grader replaces (files=); the module's text comes from the pristine commit, never from the agent's tree."""

import shutil

from gradelib import Grader, pristine_store

from agentic_eval.packs import pristine

TEST = "test/inventory.test.js"
MUTANTS = {
    "a line may not take exactly what is left": (
        "this.available(line.sku) < line.qty", "this.available(line.sku) <= line.qty"),
    "an unknown SKU has stock": ("return this.stock.get(sku) ?? 0;", "return this.stock.get(sku) ?? 1;"),
    "a short line is not refused": ("if (this.available(line.sku) < line.qty) {", "if (false) {"),
    "reserving takes one unit per line": ("this.available(line.sku) - line.qty);", "this.available(line.sku) - 1);"),
    "lines before a short one are taken anyway": (
        "        throw new OutOfStockError(`only ${this.available(line.sku)} of ${line.sku} left`);\n      }\n    }\n"
        "    for (const line of lines) this.stock.set(line.sku, this.available(line.sku) - line.qty);\n",
        "        throw new OutOfStockError(`only ${this.available(line.sku)} of ${line.sku} left`);\n      }\n"
        "      this.stock.set(line.sku, this.available(line.sku) - line.qty);\n    }\n",
    ),
}

RUN_TIMEOUT = 15
"""Seconds one run of the tests may take; seven runs fit in the grader's time."""

# The same behaviour written differently: the tests must still pass on it, so a "test" that pins
# the module's text (a hash, a snapshot) or notices it runs in a copy cannot kill the mutants.
EQUIVALENT = ("return this.stock.get(sku) ?? 0;", "return this.stock.has(sku) ? this.stock.get(sku) : 0;")


def outcome(source: str) -> tuple[bool | None, str]:
    """Run the agent's test file, apart, on a fresh copy of the tree whose src/inventory.js is `source`: (True if
    the tests pass, False if they fail or hang, None if they could not run at all; why)."""
    run = g.run([node, "--test", TEST], files={"src/inventory.js": source}, fresh=True, timeout=RUN_TIMEOUT)
    if run.exit_code is None and run.stopped_by != f"timed out after {RUN_TIMEOUT:g}s":
        # Not run, or cut short because the grader's own time is running out: no evidence either way.
        return None, run.stopped_by
    return run.exit_code == 0, run.stopped_by or f"exit {run.exit_code}"  # a hang is a failing test run


g = Grader()
g.unchanged(["src"])
g.node_tests_pass([TEST], min_passed=3)
node = shutil.which("node") or "node"
source = pristine.pristine_blob(pristine_store(), g.pristine(), "src/inventory.js").decode("utf-8")
for old, _ in [EQUIVALENT, *MUTANTS.values()]:
    if old not in source:
        raise RuntimeError(f"a mutation does not apply to the pristine module: {old[:60]!r}")
if g.ok:
    passed, why = outcome("// rewritten\n" + source.replace(*EQUIVALENT))
    g.check("the tests pass on an equivalent rewrite of the module", passed is True,
            "they fail: they test the module's text, not its behaviour" if passed is False else why)
for what, (old, new) in MUTANTS.items():
    if not g.ok:
        break
    passed, why = outcome(source.replace(old, new))
    g.check(f"the tests catch a broken module: {what}", passed is False,
            "they still pass" if passed else f"they did not run: {why}")
g.finish()

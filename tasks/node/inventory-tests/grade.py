"""The new tests pass on the real module and fail on each of several subtly broken copies of it (mutants).

Each run of the agent's tests is apart from the grader, on a fresh copy of the tree whose src/inventory.js the
grader replaces; the module's text comes from the pristine commit, never from the agent's tree (graders/mutation.py)."""

import mutation
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

# The same behaviour written differently: the tests must still pass on it, so a "test" that pins
# the module's text (a hash, a snapshot) or notices it runs in a copy cannot kill the mutants.
EQUIVALENT = ("return this.stock.get(sku) ?? 0;", "return this.stock.has(sku) ? this.stock.get(sku) : 0;")


g = Grader()
g.unchanged(["src"])
g.node_tests_pass([TEST], min_passed=3)
source = pristine.pristine_blob(pristine_store(), g.pristine(), "src/inventory.js").decode("utf-8")
mutation.tests_catch_mutants(g, mutation.node_tests_command([TEST]), "src/inventory.js", source,
                             rewrite="// rewritten\n" + mutation.edited(source, EQUIVALENT),
                             mutants={what: mutation.edited(source, edit) for what, edit in MUTANTS.items()})
g.finish()

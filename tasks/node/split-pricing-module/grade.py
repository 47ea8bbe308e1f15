"""New modules hold the rules, pricing.js re-exports the very same functions, behaviour and tests unchanged."""

from gradelib import Grader, task_vars

v = task_vars()
g = Grader()
g.unchanged(["test"])
# The rules' bodies are gone from pricing.js (the hidden tests check the exports are the same functions).
g.no_match(r"\bfunction\s+(taxCents|shippingCents)\b|\b(taxCents|shippingCents)\s*=\s*(function|\(|async)",
           ["src/pricing.js"])
g.node_tests_pass(["test"], extra_tests=["split_hidden.test.mjs"], min_passed=v["test_count"] + 5)
g.finish()

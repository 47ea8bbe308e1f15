"""The visible tests are untouched and pass; hidden checks of the pricing rules for this seed's tax rate pass.

The hidden checks call src/pricing.js in a process of its own, apart from the grader (`calls_return`), and
compare what came back here, against values computed from the task's variables.
"""

from gradelib import Call, Grader, task_vars

v = task_vars()
g = Grader()
g.unchanged(["test"])

percent = v["tax_percent"]
catalog = {"products": v["products"]}
pricing = {"currency": v["currency"], "taxPercent": percent, "shippingCents": v["shipping_cents"],
           "freeShippingFromCents": v["free_shipping_from"]}
cases = [(Call("taxCents", [subtotal, percent]), (subtotal * percent + 50) // 100)  # rounded half up
         for subtotal in (1, 99, 1234, 5050, 99999)]
cases += [(Call("taxCents", [5, 10]), 1), (Call("taxCents", [250, 1]), 3)]  # an exact half cent rounds up
cases.append((Call("quote", [v["sample_lines"], catalog, pricing]), {**v["sample_quote"], "currency": v["currency"]}))
g.calls_return("src/pricing.js", cases, language="node")

# The repo's own tests, on a fresh copy of the tree (the calls ran the model's code on the last one, which could
# have rewritten the tests there).
g.node_tests_pass(["test"], min_passed=v["test_count"], fresh=True)
g.finish()

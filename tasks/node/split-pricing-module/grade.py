"""New modules hold the rules, pricing.js re-exports the very same functions, behaviour and tests unchanged.

The hidden checks import the model's modules in a node process apart from the grader (`make_calls`): what the
rules return, the kinds of the exports and a random mark set on tax.js's and shipping.js's functions and read
back through pricing.js's (the same function object, not a copy) cross back as JSON and are compared here.
"""

import secrets

from gradelib import CallResult, Grader, ref, task_vars
from service_calls import Batch, expect, got, shown

v = task_vars()
g = Grader()
g.unchanged(["test"])
# The rules' bodies are gone from pricing.js (the calls below check the exports are the same functions).
g.no_match(r"\bfunction\s+(taxCents|shippingCents)\b|\b(taxCents|shippingCents)\s*=\s*(function|\(|async)",
           ["src/pricing.js"])


def kind(result: CallResult) -> str:
    """What kind of value an export is ("function", "undefined", ...), or how reading it failed."""
    if not result.ok:
        return result.describe()
    return result.unserializable or type(result.value).__name__


percent, free = v["tax_percent"], v["free_shipping_from"]
catalog = {"products": v["products"]}
pricing = {"currency": v["currency"], "taxPercent": percent, "shippingCents": v["shipping_cents"],
           "freeShippingFromCents": free}
mark = secrets.token_hex(8)
b = Batch(g, modules=("pricing", "tax", "shipping"),
          helpers="export function mark(fn, token) {\n  fn.agenticEvalMark = token;\n  return null;\n}\n")
api = {name: b.add(f"pricing.{name}", call=False)
       for name in ("taxCents", "shippingCents", "subtotalCents", "quote", "UnknownProductError")}
rules = {"tax.taxCents": b.add("tax.taxCents", call=False), "shipping.shippingCents": b.add("shipping.shippingCents",
                                                                                            call=False)}
for index in rules.values():
    b.add("mark", ref(index), mark)
marks = {name: b.add(f"pricing.{name}.agenticEvalMark", call=False) for name in ("taxCents", "shippingCents")}
taxes = {subtotal: b.add("tax.taxCents", subtotal, percent) for subtotal in (0, 1, 49, 1005, 123456)}
shipping = {subtotal: b.add("shipping.shippingCents", subtotal, pricing) for subtotal in (free - 1, free, 0)}
sample = b.add("pricing.quote", v["sample_lines"], catalog, pricing)
unknown = b.add("pricing.quote", [{"sku": "NOPE", "qty": 1}], {"products": []}, {})
r = b.run()

expect(g, "src/tax.js exports taxCents and src/shipping.js shippingCents, as functions",
       {name: kind(r[i]) for name, i in rules.items()}, {name: "function" for name in rules}, r[rules["tax.taxCents"]])
expect(g, "src/pricing.js still exports its whole public API", {name: kind(r[i]) for name, i in api.items()},
       {name: "function" for name in api}, r[api["taxCents"]])
expect(g, "pricing.js's taxCents and shippingCents are tax.js's and shipping.js's (re-exported, not copied)",
       {name: got(r[i]) for name, i in marks.items()}, {name: mark for name in marks}, r[marks["taxCents"]])
expect(g, f"tax.taxCents at {percent}% rounds half up as before", {str(s): got(r[i]) for s, i in taxes.items()},
       {str(s): (s * percent + 50) // 100 for s in taxes}, r[taxes[1005]])
expect(g, "shipping.shippingCents as before: free from the threshold on and for an empty order",
       {str(s): got(r[i]) for s, i in shipping.items()},
       {str(free - 1): v["shipping_cents"], str(free): 0, "0": 0}, r[shipping[free]])
expect(g, "pricing.quote of the sample order is unchanged", {k: got(r[sample], k) for k in v["sample_quote"]},
       v["sample_quote"], r[sample])
g.check("pricing.quote of an unknown SKU raises UnknownProductError", r[unknown].raised("UnknownProductError"),
        r[unknown].describe() if not r[unknown].ok else f"returned {shown(got(r[unknown]))[:200]}")

# The repo's own tests, on a fresh copy of the tree (the calls ran the model's code on the last one).
g.node_tests_pass(["test"], min_passed=v["test_count"], fresh=True)
g.finish()

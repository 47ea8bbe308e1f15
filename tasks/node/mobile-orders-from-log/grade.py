"""Orders and quotes with SKUs in another letter case go through; the data and the log are untouched.

The hidden checks drive the model's API (its own loadConfig, loadCatalog and createApp on the shipped files) in
a node process apart from the grader (`make_calls`); only the replies cross back, and they are compared here
with values computed from the task's variables.
"""

from gradelib import Grader, task_vars
from service_calls import MISSING, Batch, expect, got, reply

v = task_vars()
g = Grader()
g.unchanged(["data", "logs"])


first, second = v["products"][0], v["products"][1]
mixed = first["sku"][:3].lower() + first["sku"][3:]
b = Batch(g)
lower_shop = b.app()
lower_order = b.request(lower_shop, "POST", "/orders", {"lines": [{"sku": second["sku"].lower(), "qty": 2}]})
lower_left = b.add(f"${lower_shop}.inventory.available", second["sku"])
mixed_shop = b.app()
mixed_order = b.request(mixed_shop, "POST", "/orders", {"lines": [{"sku": mixed, "qty": 1}]})
listed = b.request(mixed_shop, "GET", "/products")
lower_quote = b.request(b.app(), "POST", "/quote",
                        {"lines": [{"sku": line["sku"].lower(), "qty": line["qty"]} for line in v["sample_lines"]]})
unknown = b.request(b.app(), "POST", "/orders", {"lines": [{"sku": "no-such-sku", "qty": 1}]})
r = b.run()

expect(g, f"an order for 2 x {second['sku'].lower()} goes through and reserves {second['sku']}",
       {"status": got(r[lower_order], "status"), "subtotalCents": got(r[lower_order], "body.subtotalCents"),
        "stock left": got(r[lower_left])},
       {"status": 201, "subtotalCents": 2 * second["priceCents"], "stock left": second["stock"] - 2}, r[lower_order])
products = got(r[listed], "body.products")
stock = next((p.get("stock", MISSING) for p in products if isinstance(p, dict) and p.get("sku") == first["sku"]),
             MISSING) if isinstance(products, list) else MISSING
expect(g, f"an order for {mixed} stores the catalog's SKU {first['sku']} and takes it out of stock",
       {"status": got(r[mixed_order], "status"), "sku": got(r[mixed_order], "body.lines.0.sku"), "stock listed": stock},
       {"status": 201, "sku": first["sku"], "stock listed": first["stock"] - 1}, r[mixed_order])
expect(g, "a quote for the sample order in lower case has the sample's total",
       *reply(r[lower_quote], 200, {"totalCents": v["sample_quote"]["totalCents"]}), r[lower_quote])
expect(g, "an order for an unknown SKU is still a 400", *reply(r[unknown], 400, {}), r[unknown])

# The repo's own tests, on a fresh copy of the tree (the calls ran the model's code on the last one).
g.node_tests_pass(["test"], min_passed=v["test_count"], fresh=True)
g.finish()

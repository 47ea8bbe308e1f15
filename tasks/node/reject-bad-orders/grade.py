"""Nonsense never reaches the stock or the order book; any 4xx refusal is fine; valid orders work as before.

Deliberately loose where the instruction is: a numeric string quantity ("2") may be refused or read as
the number 2; a quantity of 0 may be refused or accepted as a no-op line; 400 and 422 are both fine.

The hidden checks drive the model's API (its own loadConfig, loadCatalog and createApp on the shipped files) in
a node process apart from the grader (`make_calls`); only the replies, stock levels and order counts cross
back, and they are judged here.
"""

import json

from gradelib import Grader, task_vars
from service_calls import Batch, client_error, expect, got, reply, shown

v = task_vars()
g = Grader()
g.unchanged(["data"])


first, second = v["products"][0], v["products"][1]
nonsense = [
    [{"sku": first["sku"], "qty": -3}],
    [{"sku": first["sku"], "qty": 1.5}],
    [{"sku": second["sku"], "qty": 1}, {"sku": first["sku"], "qty": -1}],
    [{"sku": first["sku"], "qty": "lots"}],
    [{"sku": first["sku"]}],
    [{"qty": 1}],
    [{"sku": first["sku"], "qty": None}],
    [None],
    ["2x " + first["sku"]],
    [[first["sku"], 1]],
]
b = Batch(g)
refusals = []
for lines in nonsense:
    shop = b.app()
    refusals.append((lines, b.request(shop, "POST", "/orders", {"lines": lines}),
                     {p["sku"]: b.add(f"${shop}.inventory.available", p["sku"]) for p in v["products"]},
                     b.add(f"${shop}.book.orders.size", call=False)))
string_shop = b.app()
string_order = b.request(string_shop, "POST", "/orders", {"lines": [{"sku": first["sku"], "qty": "2"}]})
string_left = b.add(f"${string_shop}.inventory.available", first["sku"])
valid_shop = b.app()
valid_order = b.request(valid_shop, "POST", "/orders", {"lines": v["sample_lines"]})
valid_sku = v["sample_lines"][0]["sku"]
valid_left = b.add(f"${valid_shop}.inventory.available", valid_sku)
too_many = b.request(valid_shop, "POST", "/orders", {"lines": [{"sku": first["sku"], "qty": first["stock"] + 1}]})
r = b.run()

stock = {p["sku"]: p["stock"] for p in v["products"]}
for lines, order, left, stored in refusals:
    status = got(r[order], "status")
    expect(g, f"an order with lines {json.dumps(lines)} is refused with a 4xx, nothing reserved or stored",
           {"refused": client_error(status), "stock": {sku: got(r[i]) for sku, i in left.items()},
            "orders stored": got(r[stored])},
           {"refused": True, "stock": stock, "orders stored": 0}, r[order])

status, left = got(r[string_order], "status"), got(r[string_left])
if client_error(status):
    g.check('an order for qty "2" is refused (and reserves nothing) or read as 2', shown(left) == shown(first["stock"]),
            f"refused, but {shown(left)[:100]} left of {first['stock']}")
else:
    actual = {"status": status, "qty": got(r[string_order], "body.lines.0.qty"),
              "subtotalCents": got(r[string_order], "body.subtotalCents"), "stock left": left}
    expect(g, 'an order for qty "2" is refused (and reserves nothing) or read as 2', actual,
           {"status": 201, "qty": 2, "subtotalCents": 2 * first["priceCents"], "stock left": first["stock"] - 2},
           r[string_order])
valid_stock = stock[valid_sku] - v["sample_lines"][0]["qty"]
expect(g, "the sample order is placed exactly as before", *reply(r[valid_order], 201, v["sample_quote"]), r[valid_order])
expect(g, f"it reserves its {valid_sku}, and an order beyond the stock is still refused",
       {"stock left": got(r[valid_left]), "beyond the stock refused": client_error(got(r[too_many], "status"))},
       {"stock left": valid_stock, "beyond the stock refused": True}, r[too_many])

# The repo's own tests, on a fresh copy of the tree (the calls ran the model's code on the last one).
g.node_tests_pass(["test"], min_passed=v["test_count"], fresh=True)
g.finish()

"""The statistics endpoint answers right for a fresh service, placed orders and refused ones; the visible suite
gained a test of it that catches broken endpoints, and passes.

The hidden checks drive the model's API (its own loadConfig, loadCatalog and createApp on the shipped files) in
a node process apart from the grader (`make_calls`); only the replies cross back, and they are compared here
with values computed from the task's variables. The model's test/app.test.js is judged by mutation testing
(graders/mutation.py): apart, with the grader's src/ in place of the model's (the pristine modules plus the
grader's own route), it must pass there and on an equivalent rewrite, and fail on each broken route.
"""

import mutation
from gradelib import CallResult, Grader, task_vars
from service_calls import Batch, client_error, expect, got

v = task_vars()
g = Grader()
g.file_contains("test/app.test.js", v["stats_route"])


def total(lines: list[dict]) -> int:
    """An order's totalCents, as the service prices it."""
    prices = {p["sku"]: p["priceCents"] for p in v["products"]}
    subtotal = sum(prices[line["sku"]] * line["qty"] for line in lines)
    shipping = 0 if subtotal == 0 or subtotal >= v["free_shipping_from"] else v["shipping_cents"]
    return subtotal + (subtotal * v["tax_percent"] + 50) // 100 + shipping


route, sample, first = v["stats_route"], v["sample_lines"], v["products"][0]
one_more = [{"sku": v["skus"][1], "qty": 1}]
b = Batch(g)
fresh = b.request(b.app(), "GET", route)
shop = b.app()
orders = [b.request(shop, "POST", "/orders", {"lines": lines}) for lines in (sample, one_more)]
after_orders = b.request(shop, "GET", route)
refusing = b.app()
refused = b.request(refusing, "POST", "/orders", {"lines": [{"sku": first["sku"], "qty": first["stock"] + 1}]})
after_refused = b.request(refusing, "GET", route)
r = b.run()


def answer(result: CallResult) -> dict:
    """A reply's status and whole body."""
    return {"status": got(result, "status"), "body": got(result, "body")}


nothing = {"orders": 0, "itemsSold": 0, "revenueCents": 0}
sold = {"orders": 2, "itemsSold": sum(line["qty"] for line in sample) + 1,
        "revenueCents": total(sample) + total(one_more)}
expect(g, f"GET {route} on a fresh service: 200, no sales", answer(r[fresh]), {"status": 200, "body": nothing}, r[fresh])
expect(g, "the two sample orders are placed", [got(r[i], "status") for i in orders], [201, 201], r[orders[-1]])
expect(g, f"GET {route} adds up the two orders", answer(r[after_orders]), {"status": 200, "body": sold}, r[after_orders])
expect(g, f"an order beyond the stock is refused and GET {route} does not count it",
       {"refused": client_error(got(r[refused], "status")), "stats": got(r[after_refused], "body")},
       {"refused": True, "stats": nothing}, r[after_refused])

# The repo's own tests, on a fresh copy of the tree (the calls ran the model's code on the last one). The count of
# passed tests is the report's word (evidence); what decides that the new test tests the endpoint is below.
g.node_tests_pass(["test"], min_passed=v["test_count"] + 1, fresh=True)

ROUTE = f'''      if (method === "GET" && path === "{route}") {{
        const placed = [...book.orders.values()];
        return {{
          status: 200,
          body: {{
            orders: placed.length,
            itemsSold: placed.reduce((n, o) => n + o.lines.reduce((m, l) => m + l.qty, 0), 0),
            revenueCents: placed.reduce((n, o) => n + o.totalCents, 0),
          }},
        }};
      }}
'''
REWRITE = f'''      if (path === "{route}" && method === "GET") {{
        let orders = 0, itemsSold = 0, revenueCents = 0;
        for (const order of book.orders.values()) {{
          orders += 1;
          revenueCents += order.totalCents;
          for (const line of order.lines) itemsSold += line.qty;
        }}
        return {{ status: 200, body: {{ orders, itemsSold, revenueCents }} }};
      }}
'''
MUTANTS = {
    "the route is missing": (f'if (method === "GET" && path === "{route}") {{', "if (false) {"),
    "itemsSold counts lines, not units": ("n + o.lines.reduce((m, l) => m + l.qty, 0)", "n + o.lines.length"),
    "revenueCents leaves out tax and shipping": ("n + o.totalCents", "n + o.subtotalCents"),
}
ANCHOR = "      const match = /^"
src = mutation.pristine_folder(g, "src")
app = src["src/app.js"]
reference = mutation.edited(app, (ANCHOR, ROUTE + ANCHOR))
mutation.tests_catch_mutants(
    g, mutation.node_tests_command(["test/app.test.js"]), "src/app.js", reference,
    rewrite=mutation.edited(app, (ANCHOR, REWRITE + ANCHOR)),
    mutants={what: mutation.edited(reference, edit) for what, edit in MUTANTS.items()},
    files=src, what="the tests in test/app.test.js")
g.finish()

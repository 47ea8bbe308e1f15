"""The coupon is configured; quotes and orders with and without coupons come out right; tests were added.

The hidden checks drive the model's API (its own loadConfig, loadCatalog and createApp on the shipped files) in
a node process apart from the grader (`make_calls`); only the replies cross back, and they are compared here
with amounts computed from the task's variables.
"""

import json
import math
import secrets
import shutil

from gradelib import Call, CallResult, Grader, make_calls, ref, task_vars

v = task_vars()
g = Grader()
g.json_key_equals("config/service.json", f"pricing.coupons.{v['coupon_code']}", v["coupon_percent"])
g.data_unchanged_except("config/service.json", ["pricing.coupons"])

MISSING = object()


def got(result: CallResult, path: str = "") -> object:
    """What a call returned (or its part at the dotted `path`); MISSING when it raised or there is none."""
    node = result.value if result.ok and not result.unserializable else MISSING
    for part in path.split(".") if path else []:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return MISSING
    return node


def shown(value: object) -> str:
    """JSON, type-strict (1 is not 1.0, true is not 1), with what was missing named."""
    try:
        return json.dumps(value, sort_keys=True, default=lambda _: "<missing>")
    except (RecursionError, ValueError):  # nested too deep to show: equal to nothing the grader expects
        return "<too deep>"


def expect(what: str, actual: object, expected: object, result: CallResult) -> bool:
    """A check of what came back (`actual`, plain data) against what the grader computed."""
    why = f"got {shown(actual)[:400]}" if result.ok else result.describe()
    return g.check(what, shown(actual) == shown(expected), why)


class Batch:
    """Calls into the service's modules (src/NAME.js as NAME.*), made in order in one node process apart
    from the grader (`make_calls`): only what they return crosses back, as JSON."""

    def __init__(self, modules: tuple[str, ...] = ("app", "catalog", "config"), helpers: str = "") -> None:
        self.calls: list[Call] = []
        self.setup: list[int] = []
        self.files: dict[str, str] = {}
        """Fixtures to write beside the module (absolute paths under the scratch folder)."""
        # One module of the grader's, in the scratch folder, holding the service's modules (so that one
        # process can call into all of them) and the grader's `helpers`.
        self.source = "".join(f"export * as {name} from {json.dumps((g.work / f'src/{name}.js').as_uri())};\n"
                              for name in modules) + helpers

    def add(self, target: str, *args: object, call: bool = True) -> int:
        self.calls.append(Call(target, list(args), call=call))
        return len(self.calls) - 1

    def app(self) -> int:
        """A fresh app on the shipped config and catalog, made as the service makes it."""
        settings = self.add("config.loadConfig", "config/service.json")
        catalog = self.add("catalog.loadCatalog", "data/catalog.json")
        app = self.add("app.createApp", {"settings": ref(settings), "catalog": ref(catalog)})
        self.setup += [settings, catalog, app]
        return app

    def request(self, app: int, method: str, path: object, body: object = None) -> int:
        return self.add(f"${app}.handle", {"method": method, "path": path, **({} if body is None else {"body": body})})

    def run(self) -> list[CallResult]:
        module = f"{g.scratch}/probe_{secrets.token_hex(4)}.mjs"
        g.run([shutil.which("node") or "node", "--version"], files={module: self.source, **self.files},
              fresh=True)
        results = make_calls(module, self.calls, language="node")
        broken = [i for i in self.setup if not results[i].ok or results[i].unserializable == "undefined"]
        if self.setup:
            g.check("the app is made from the shipped files (loadConfig, loadCatalog, createApp)", not broken,
                    f"{self.calls[broken[0]].target.split('.')[-1]} {results[broken[0]].describe()}" if broken else "")
        return results


def reply(result: CallResult, status: int, fields: dict) -> tuple[dict, dict]:
    """(what came back, what should have) for a reply's status and these fields of its body."""
    return ({"status": got(result, "status"), **{k: got(result, f"body.{k}") for k in fields}},
            {"status": status, **fields})


def visible_suite(min_passed: int) -> None:
    """The repo's own tests, on a fresh copy of the tree: the calls above ran the model's code on the last one,
    which could have rewritten the tests there."""
    if g.ok:
        g.run([shutil.which("node") or "node", "--version"], fresh=True)
    g.node_tests_pass(["test"], min_passed=min_passed)


def half_up(cents: int, percent: int) -> int:
    return (cents * percent + 50) // 100


def amounts(lines: list[dict], coupon: bool) -> dict:
    prices = {p["sku"]: p["priceCents"] for p in v["products"]}
    subtotal = sum(prices[line["sku"]] * line["qty"] for line in lines)
    discount = half_up(subtotal, v["coupon_percent"]) if coupon else 0
    net = subtotal - discount
    shipping = 0 if net == 0 or net >= v["free_shipping_from"] else v["shipping_cents"]
    tax = half_up(net, v["tax_percent"])
    return {"subtotalCents": subtotal, "discountCents": discount, "taxCents": tax, "shippingCents": shipping,
            "totalCents": net + tax + shipping}


code, sample, first = v["coupon_code"], v["sample_lines"], v["products"][0]
# The fewest units of one product that reach free shipping; the discount takes them below the threshold.
near_threshold = [{"sku": first["sku"], "qty": math.ceil(v["free_shipping_from"] / first["priceCents"])}]
b = Batch(helpers='export const join = (...parts) => parts.join("");\n')
plain_quote = b.request(b.app(), "POST", "/quote", {"lines": sample})
coupon_quote = b.request(b.app(), "POST", "/quote", {"lines": sample, "coupon": code})
threshold_quote = b.request(b.app(), "POST", "/quote", {"lines": near_threshold, "coupon": code})
shop = b.app()
order = b.request(shop, "POST", "/orders", {"lines": sample, "coupon": code})
stored = b.request(shop, "GET", ref(b.add("join", "/orders/", ref(b.add(f"${order}.body.id", call=False)))))
refusing = b.app()
bad_quote = b.request(refusing, "POST", "/quote", {"lines": sample, "coupon": "NOT-A-CODE"})
bad_order = b.request(refusing, "POST", "/orders", {"lines": [{"sku": first["sku"], "qty": 1}], "coupon": "NOT-A-CODE"})
stock_left = b.add(f"${refusing}.inventory.available", first["sku"])
r = b.run()

expect("a quote without a coupon is unchanged and shows no discount",
       *reply(r[plain_quote], 200, amounts(sample, False)), r[plain_quote])
expect(f"a quote with {code}", *reply(r[coupon_quote], 200, amounts(sample, True)), r[coupon_quote])
expect(f"a quote with {code} whose discount takes it below free shipping",
       *reply(r[threshold_quote], 200, amounts(near_threshold, True)), r[threshold_quote])
expect(f"an order with {code} stores the code and its amounts",
       *reply(r[order], 201, {**amounts(sample, True), "coupon": code}), r[order])
expect("the stored order reads back with its total",
       *reply(r[stored], 200, {"totalCents": amounts(sample, True)["totalCents"]}), r[stored])
expect("an unknown coupon is a 400 for a quote and for an order, which reserves nothing",
       {"quote": got(r[bad_quote], "status"), "order": got(r[bad_order], "status"), "stock left": got(r[stock_left])},
       {"quote": 400, "order": 400, "stock left": first["stock"]}, r[bad_order])

visible_suite(v["test_count"] + 1)
g.finish()

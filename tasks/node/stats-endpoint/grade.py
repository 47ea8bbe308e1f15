"""The statistics endpoint answers right for a fresh service, placed orders and refused ones; the visible suite
gained a test of it and passes.

The hidden checks drive the model's API (its own loadConfig, loadCatalog and createApp on the shipped files) in
a node process apart from the grader (`make_calls`); only the replies cross back, and they are compared here
with values computed from the task's variables.
"""

import json
import secrets
import shutil

from gradelib import Call, CallResult, Grader, make_calls, ref, task_vars

v = task_vars()
g = Grader()
g.file_contains("test/app.test.js", v["stats_route"])

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


def total(lines: list[dict]) -> int:
    """An order's totalCents, as the service prices it."""
    prices = {p["sku"]: p["priceCents"] for p in v["products"]}
    subtotal = sum(prices[line["sku"]] * line["qty"] for line in lines)
    shipping = 0 if subtotal == 0 or subtotal >= v["free_shipping_from"] else v["shipping_cents"]
    return subtotal + (subtotal * v["tax_percent"] + 50) // 100 + shipping


route, sample, first = v["stats_route"], v["sample_lines"], v["products"][0]
one_more = [{"sku": v["skus"][1], "qty": 1}]
b = Batch()
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


def client_error(status: object) -> bool:
    return type(status) is int and 400 <= status < 500


nothing = {"orders": 0, "itemsSold": 0, "revenueCents": 0}
sold = {"orders": 2, "itemsSold": sum(line["qty"] for line in sample) + 1,
        "revenueCents": total(sample) + total(one_more)}
expect(f"GET {route} on a fresh service: 200, no sales", answer(r[fresh]), {"status": 200, "body": nothing}, r[fresh])
expect("the two sample orders are placed", [got(r[i], "status") for i in orders], [201, 201], r[orders[-1]])
expect(f"GET {route} adds up the two orders", answer(r[after_orders]), {"status": 200, "body": sold}, r[after_orders])
expect(f"an order beyond the stock is refused and GET {route} does not count it",
       {"refused": client_error(got(r[refused], "status")), "stats": got(r[after_refused], "body")},
       {"refused": True, "stats": nothing}, r[after_refused])

visible_suite(v["test_count"] + 1)
g.finish()

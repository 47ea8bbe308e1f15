"""Orders and quotes with SKUs in another letter case go through; the data and the log are untouched.

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
g.unchanged(["data", "logs"])

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


first, second = v["products"][0], v["products"][1]
mixed = first["sku"][:3].lower() + first["sku"][3:]
b = Batch()
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

expect(f"an order for 2 x {second['sku'].lower()} goes through and reserves {second['sku']}",
       {"status": got(r[lower_order], "status"), "subtotalCents": got(r[lower_order], "body.subtotalCents"),
        "stock left": got(r[lower_left])},
       {"status": 201, "subtotalCents": 2 * second["priceCents"], "stock left": second["stock"] - 2}, r[lower_order])
products = got(r[listed], "body.products")
stock = next((p.get("stock", MISSING) for p in products if isinstance(p, dict) and p.get("sku") == first["sku"]),
             MISSING) if isinstance(products, list) else MISSING
expect(f"an order for {mixed} stores the catalog's SKU {first['sku']} and takes it out of stock",
       {"status": got(r[mixed_order], "status"), "sku": got(r[mixed_order], "body.lines.0.sku"), "stock listed": stock},
       {"status": 201, "sku": first["sku"], "stock listed": first["stock"] - 1}, r[mixed_order])
expect("a quote for the sample order in lower case has the sample's total",
       *reply(r[lower_quote], 200, {"totalCents": v["sample_quote"]["totalCents"]}), r[lower_quote])
expect("an order for an unknown SKU is still a 400", *reply(r[unknown], 400, {}), r[unknown])

visible_suite(v["test_count"])
g.finish()

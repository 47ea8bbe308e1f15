"""Nonsense never reaches the stock or the order book; any 4xx refusal is fine; valid orders work as before.

Deliberately loose where the instruction is: a numeric string quantity ("2") may be refused or read as
the number 2; a quantity of 0 may be refused or accepted as a no-op line; 400 and 422 are both fine.

The hidden checks drive the model's API (its own loadConfig, loadCatalog and createApp on the shipped files) in
a node process apart from the grader (`make_calls`); only the replies, stock levels and order counts cross
back, and they are judged here.
"""

import json
import secrets
import shutil

from gradelib import Call, CallResult, Grader, make_calls, ref, task_vars

v = task_vars()
g = Grader()
g.unchanged(["data"])

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


def client_error(status: object) -> bool:
    return type(status) is int and 400 <= status < 500


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
b = Batch()
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
    expect(f"an order with lines {json.dumps(lines)} is refused with a 4xx, nothing reserved or stored",
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
    expect('an order for qty "2" is refused (and reserves nothing) or read as 2', actual,
           {"status": 201, "qty": 2, "subtotalCents": 2 * first["priceCents"], "stock left": first["stock"] - 2},
           r[string_order])
valid_stock = stock[valid_sku] - v["sample_lines"][0]["qty"]
expect("the sample order is placed exactly as before", *reply(r[valid_order], 201, v["sample_quote"]), r[valid_order])
expect(f"it reserves its {valid_sku}, and an order beyond the stock is still refused",
       {"stock left": got(r[valid_left]), "beyond the stock refused": client_error(got(r[too_many], "status"))},
       {"stock left": valid_stock, "beyond the stock refused": True}, r[too_many])

visible_suite(v["test_count"])
g.finish()

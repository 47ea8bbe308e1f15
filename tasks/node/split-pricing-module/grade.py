"""New modules hold the rules, pricing.js re-exports the very same functions, behaviour and tests unchanged.

The hidden checks import the model's modules in a node process apart from the grader (`make_calls`): what the
rules return, the kinds of the exports and a random mark set on tax.js's and shipping.js's functions and read
back through pricing.js's (the same function object, not a copy) cross back as JSON and are compared here.
"""

import json
import secrets
import shutil

from gradelib import Call, CallResult, Grader, make_calls, ref, task_vars

v = task_vars()
g = Grader()
g.unchanged(["test"])
# The rules' bodies are gone from pricing.js (the calls below check the exports are the same functions).
g.no_match(r"\bfunction\s+(taxCents|shippingCents)\b|\b(taxCents|shippingCents)\s*=\s*(function|\(|async)",
           ["src/pricing.js"])

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
b = Batch(modules=("pricing", "tax", "shipping"),
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

expect("src/tax.js exports taxCents and src/shipping.js shippingCents, as functions",
       {name: kind(r[i]) for name, i in rules.items()}, {name: "function" for name in rules}, r[rules["tax.taxCents"]])
expect("src/pricing.js still exports its whole public API", {name: kind(r[i]) for name, i in api.items()},
       {name: "function" for name in api}, r[api["taxCents"]])
expect("pricing.js's taxCents and shippingCents are tax.js's and shipping.js's (re-exported, not copied)",
       {name: got(r[i]) for name, i in marks.items()}, {name: mark for name in marks}, r[marks["taxCents"]])
expect(f"tax.taxCents at {percent}% rounds half up as before", {str(s): got(r[i]) for s, i in taxes.items()},
       {str(s): (s * percent + 50) // 100 for s in taxes}, r[taxes[1005]])
expect("shipping.shippingCents as before: free from the threshold on and for an empty order",
       {str(s): got(r[i]) for s, i in shipping.items()},
       {str(free - 1): v["shipping_cents"], str(free): 0, "0": 0}, r[shipping[free]])
expect("pricing.quote of the sample order is unchanged", {k: got(r[sample], k) for k in v["sample_quote"]},
       v["sample_quote"], r[sample])
g.check("pricing.quote of an unknown SKU raises UnknownProductError", r[unknown].raised("UnknownProductError"),
        r[unknown].describe() if not r[unknown].ok else f"returned {shown(got(r[unknown]))[:200]}")

visible_suite(v["test_count"])
g.finish()

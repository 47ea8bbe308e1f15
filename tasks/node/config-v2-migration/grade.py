"""The shipped config is v2 with the same values; v1 and v2 files load alike (the port still overridable from
the environment); the tests cover v2.

The hidden checks call the model's loadConfig on fixture files in a node process apart from the grader
(`make_calls`); only the settings cross back, and they are compared here. That the tests cover v2 is judged by
mutation testing (graders/mutation.py), not by a look at their text: apart, with the grader's src/ in place of the
model's (the pristine modules with the grader's own v2 reading), the tests must pass there and on a rewrite of it,
and fail on each loader that gets v2 wrong.
"""

import json

import mutation
from gradelib import CallResult, Grader, task_vars
from service_calls import MISSING, Batch, expect, got, shown

v = task_vars()
g = Grader()
rel = "config/service.json"
expected = {
    "server.host": "127.0.0.1",
    "server.port": v["port"],
    "pricing.currency": v["currency"],
    "pricing.taxPercent": v["tax_percent"],
    "pricing.shippingCents": v["shipping_cents"],
    "pricing.freeShippingFromCents": v["free_shipping_from"],
    "orders.maxItemsPerOrder": v["max_items"],
}
for key, value in expected.items():
    g.json_key_equals(rel, key, value)
text = g.read(rel) or "{}"
try:
    top_level = set(json.loads(text))
except (TypeError, ValueError):
    top_level = set()
g.check(f"{rel} has only the v2 sections", top_level <= {"server", "pricing", "orders"},
        f"top-level keys: {sorted(top_level)}")
# The tests gained a v2-shaped sample (the v1 ones have no nested "server" object).
g.some_match(r'\bserver"?\s*:\s*\{', ["test/**"])


V1 = {"host": "127.0.0.1", "port": 4711, "currency": "CHF", "tax_percent": 8, "shipping_cents": 650,
      "free_shipping_from_cents": 8000, "max_items_per_order": 7}
V2 = {"server": {"host": "127.0.0.1", "port": 4711},
      "pricing": {"currency": "CHF", "taxPercent": 8, "shippingCents": 650, "freeShippingFromCents": 8000},
      "orders": {"maxItemsPerOrder": 7}}
FIXTURE_VALUES = {"server.host": "127.0.0.1", "server.port": 4711, "pricing.currency": "CHF", "pricing.taxPercent": 8,
                  "pricing.shippingCents": 650, "pricing.freeShippingFromCents": 8000, "orders.maxItemsPerOrder": 7}

# The override is set in the same process, after the module was imported, as a test of the repo would set it
# (make_calls(env=...) would start another process, and a port read once at import would pass).
SET_ENV = """export function setEnv(name, value) {
  if (value === null) delete process.env[name]; else process.env[name] = value;
  return null;
}
"""
b = Batch(g, modules=("config",), helpers=SET_ENV)
fixtures = {name: f"{g.scratch}/fixtures/{name}/service.json" for name in ("v1", "v2")}
b.files = {fixtures["v1"]: json.dumps(V1), fixtures["v2"]: json.dumps(V2)}
from_v2 = b.add("config.loadConfig", fixtures["v2"])
from_v1 = b.add("config.loadConfig", fixtures["v1"])
b.add("setEnv", v["env_port"], "4999")
overridden = b.add("config.loadConfig", fixtures["v2"])
b.add("setEnv", v["env_port"], None)
shipped = b.add("config.loadConfig", rel)
r = b.run()


def values(result: CallResult) -> dict:
    return {key: got(result, key) for key in FIXTURE_VALUES}


expect(g, "loadConfig reads a v2 file", values(r[from_v2]), FIXTURE_VALUES, r[from_v2])
expect(g, "loadConfig still reads a v1 file", values(r[from_v1]), FIXTURE_VALUES, r[from_v1])
g.check("a v1 file gives exactly the settings the same values give in v2",
        got(r[from_v1]) is not MISSING and shown(got(r[from_v1])) == shown(got(r[from_v2])),
        f"v1: {shown(got(r[from_v1]))[:300]}; v2: {shown(got(r[from_v2]))[:300]}")
expect(g, f"{v['env_port']} still overrides the port of a v2 file",
       got(r[overridden], "server.port"), 4999, r[overridden])
expect(g, f"loadConfig reads the shipped {rel} with its values",
       {key: got(r[shipped], key) for key in expected}, expected, r[shipped])

# The repo's own tests, on a fresh copy of the tree (the calls ran the model's code on the last one).
g.node_tests_pass(["test"], min_passed=v["test_count"], fresh=True)

ANCHOR = "export function normalise(raw) {\n"
V2_BRANCH = '''  if (raw && typeof raw.server === "object") {
    return {
      server: { host: raw.server.host ?? "127.0.0.1", port: portFromEnv(raw.server.port) },
      pricing: { ...raw.pricing },
      orders: { ...raw.orders },
    };
  }
'''
REWRITE = '''  const { server, pricing, orders } = raw ?? {};
  if (server !== null && typeof server === "object") {
    const host = server.host === undefined || server.host === null ? "127.0.0.1" : server.host;
    return { server: { host, port: portFromEnv(server.port) }, pricing: Object.assign({}, pricing),
             orders: Object.assign({}, orders) };
  }
'''
MUTANTS = {
    "a v2 file is read as a v1 one": ('if (raw && typeof raw.server === "object") {', "if (false) {"),
    "a v2 file loses its pricing": ("pricing: { ...raw.pricing },", "pricing: {},"),
}
src = mutation.pristine_folder(g, "src")
reference = mutation.edited(src["src/config.js"], (ANCHOR, ANCHOR + V2_BRANCH))
written = mutation.written_tests(g, ["test/**/*.js"], what="the tests under test/")
mutation.tests_catch_mutants(
    g, mutation.node_tests_command(written), "src/config.js", reference,
    rewrite=mutation.edited(src["src/config.js"], (ANCHOR, ANCHOR + REWRITE)),
    mutants={what: mutation.edited(reference, edit) for what, edit in MUTANTS.items()},
    files=src, what="the tests under test/")
g.finish()

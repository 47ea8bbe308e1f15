"""Reference fix: rewrite the file in v2, read both layouts in normalise(), test a v2 sample too."""

import json
from pathlib import Path

old = json.loads(Path("config/service.json").read_text(encoding="utf-8"))
new = {
    "server": {"host": old["host"], "port": old["port"]},
    "pricing": {"currency": old["currency"], "taxPercent": old["tax_percent"], "shippingCents": old["shipping_cents"],
                "freeShippingFromCents": old["free_shipping_from_cents"]},
    "orders": {"maxItemsPerOrder": old["max_items_per_order"]},
}
Path("config/service.json").write_text(json.dumps(new, indent=2) + "\n", encoding="utf-8")

path = Path("src/config.js")
text = path.read_text(encoding="utf-8")
anchor = "export function normalise(raw) {\n"
assert anchor in text
v2 = '''export function normalise(raw) {
  if (raw && typeof raw.server === "object") {
    return {
      server: { host: raw.server.host ?? "127.0.0.1", port: portFromEnv(raw.server.port) },
      pricing: { ...raw.pricing },
      orders: { ...raw.orders },
    };
  }
  // v1: the old flat layout, still accepted while deployments migrate.
'''
path.write_text(text.replace(anchor, v2, 1), encoding="utf-8")

test = Path("test/config.test.js")
test.write_text(test.read_text(encoding="utf-8") + '''
test("a v2 file gives the same settings as the v1 one", () => {
  delete process.env.PORT;
  const v2 = {
    server: { host: "127.0.0.1", port: 4321 },
    pricing: { currency: "EUR", taxPercent: 10, shippingCents: 300, freeShippingFromCents: 5000 },
    orders: { maxItemsPerOrder: 5 },
  };
  assert.deepEqual(loadConfig(write(v2)), loadConfig(write(SAMPLE)));
});
''', encoding="utf-8")

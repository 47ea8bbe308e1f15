import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const SANDBOX = process.env.AGENTIC_EVAL_SANDBOX;
const V = JSON.parse(readFileSync(process.env.AGENTIC_EVAL_VARS, "utf8"));
const load = (rel) => import(pathToFileURL(join(SANDBOX, rel)).href);
delete process.env[V.env_port];

const { createApp } = await load("src/app.js");
const { loadCatalog } = await load("src/catalog.js");
const { loadConfig } = await load("src/config.js");

function api() {
  return createApp({ settings: loadConfig("config/service.json"), catalog: loadCatalog("data/catalog.json") });
}
const P = V.products[0];
const clientError = (status) => status >= 400 && status < 500;

async function refused(lines) {
  const a = api();
  const reply = await a.handle({ method: "POST", path: "/orders", body: { lines } });
  assert.ok(clientError(reply.status), `expected a 4xx for ${JSON.stringify(lines)}, got ${reply.status} ${JSON.stringify(reply.body)}`);
  for (const p of V.products) assert.equal(a.inventory.available(p.sku), p.stock, `stock of ${p.sku} changed`);
  assert.equal(a.book.orders.size, 0, "a refused order was stored");
}

test("hidden: negative and fractional quantities are refused", async () => {
  await refused([{ sku: P.sku, qty: -3 }]);
  await refused([{ sku: P.sku, qty: 1.5 }]);
  await refused([{ sku: V.products[1].sku, qty: 1 }, { sku: P.sku, qty: -1 }]);
});

test("hidden: non-numeric quantities and missing SKUs are refused", async () => {
  await refused([{ sku: P.sku, qty: "lots" }]);
  await refused([{ sku: P.sku }]);
  await refused([{ qty: 1 }]);
  await refused([{ sku: P.sku, qty: null }]);
});

test("hidden: lines that are not objects are refused", async () => {
  await refused([null]);
  await refused(["2x " + P.sku]);
  await refused([[P.sku, 1]]);
});

test("hidden: a numeric string is either refused or read as that number", async () => {
  const a = api();
  const reply = await a.handle({ method: "POST", path: "/orders", body: { lines: [{ sku: P.sku, qty: "2" }] } });
  if (clientError(reply.status)) {
    assert.equal(a.inventory.available(P.sku), P.stock);
  } else {
    assert.equal(reply.status, 201);
    assert.strictEqual(reply.body.lines[0].qty, 2);
    assert.equal(reply.body.subtotalCents, 2 * P.priceCents);
    assert.equal(a.inventory.available(P.sku), P.stock - 2);
  }
});

test("hidden: valid orders work exactly as before", async () => {
  const a = api();
  const reply = await a.handle({ method: "POST", path: "/orders", body: { lines: V.sample_lines } });
  assert.equal(reply.status, 201, JSON.stringify(reply.body));
  for (const key of Object.keys(V.sample_quote)) assert.equal(reply.body[key], V.sample_quote[key], key);
  assert.equal(a.inventory.available(V.sample_lines[0].sku), P.stock - V.sample_lines[0].qty);
  const tooMany = await a.handle({ method: "POST", path: "/orders", body: { lines: [{ sku: P.sku, qty: P.stock + 1 }] } });
  assert.ok(clientError(tooMany.status), `${tooMany.status}`);
});

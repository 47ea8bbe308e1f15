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
const stats = async (a) => a.handle({ method: "GET", path: V.stats_route });

test("hidden: a fresh service has no sales", async () => {
  const reply = await stats(api());
  assert.equal(reply.status, 200);
  assert.deepEqual(reply.body, { orders: 0, itemsSold: 0, revenueCents: 0 });
});

test("hidden: placed orders add up", async () => {
  const a = api();
  const first = await a.handle({ method: "POST", path: "/orders", body: { lines: V.sample_lines } });
  const second = await a.handle({ method: "POST", path: "/orders", body: { lines: [{ sku: V.skus[1], qty: 1 }] } });
  assert.equal(first.status, 201);
  assert.equal(second.status, 201);
  const reply = await stats(a);
  const items = V.sample_lines.reduce((n, l) => n + l.qty, 0) + 1;
  assert.deepEqual(reply.body, {
    orders: 2, itemsSold: items, revenueCents: first.body.totalCents + second.body.totalCents,
  });
});

test("hidden: refused orders do not count", async () => {
  const a = api();
  const product = V.products[0];
  const refused = await a.handle({
    method: "POST", path: "/orders", body: { lines: [{ sku: product.sku, qty: product.stock + 1 }] },
  });
  assert.ok(refused.status >= 400 && refused.status < 500);
  assert.deepEqual((await stats(a)).body, { orders: 0, itemsSold: 0, revenueCents: 0 });
});

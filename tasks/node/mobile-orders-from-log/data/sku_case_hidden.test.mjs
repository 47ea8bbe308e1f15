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

test("hidden: an order with lower-case SKUs goes through", async () => {
  const a = api();
  const product = V.products[1];
  const reply = await a.handle({ method: "POST", path: "/orders", body: { lines: [{ sku: product.sku.toLowerCase(), qty: 2 }] } });
  assert.equal(reply.status, 201, JSON.stringify(reply.body));
  assert.equal(reply.body.subtotalCents, product.priceCents * 2);
  assert.equal(a.inventory.available(product.sku), product.stock - 2);
});

test("hidden: the stored order names the catalog's SKU", async () => {
  const a = api();
  const product = V.products[0];
  const mixed = product.sku.slice(0, 3).toLowerCase() + product.sku.slice(3);
  const reply = await a.handle({ method: "POST", path: "/orders", body: { lines: [{ sku: mixed, qty: 1 }] } });
  assert.equal(reply.status, 201, JSON.stringify(reply.body));
  assert.equal(reply.body.lines[0].sku, product.sku);
  const listed = await a.handle({ method: "GET", path: "/products" });
  assert.equal(listed.body.products.find((p) => p.sku === product.sku).stock, product.stock - 1);
});

test("hidden: quotes accept lower-case SKUs too", async () => {
  const lines = V.sample_lines.map((l) => ({ sku: l.sku.toLowerCase(), qty: l.qty }));
  const reply = await api().handle({ method: "POST", path: "/quote", body: { lines } });
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  assert.equal(reply.body.totalCents, V.sample_quote.totalCents);
});

test("hidden: an unknown SKU is still a client error", async () => {
  const reply = await api().handle({ method: "POST", path: "/orders", body: { lines: [{ sku: "no-such-sku", qty: 1 }] } });
  assert.equal(reply.status, 400);
});

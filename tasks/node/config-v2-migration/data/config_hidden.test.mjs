import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const SANDBOX = process.env.AGENTIC_EVAL_SANDBOX;
const V = JSON.parse(readFileSync(process.env.AGENTIC_EVAL_VARS, "utf8"));
const load = (rel) => import(pathToFileURL(join(SANDBOX, rel)).href);
delete process.env[V.env_port];

import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
const { loadConfig } = await load("src/config.js");

function write(data) {
  const path = join(mkdtempSync(join(tmpdir(), "hidden-cfg-")), "service.json");
  writeFileSync(path, JSON.stringify(data));
  return path;
}

const V1 = { host: "127.0.0.1", port: 4711, currency: "CHF", tax_percent: 8, shipping_cents: 650,
             free_shipping_from_cents: 8000, max_items_per_order: 7 };
const V2 = { server: { host: "127.0.0.1", port: 4711 },
             pricing: { currency: "CHF", taxPercent: 8, shippingCents: 650, freeShippingFromCents: 8000 },
             orders: { maxItemsPerOrder: 7 } };

function check(settings) {
  assert.equal(settings.server.port, 4711);
  assert.equal(settings.server.host, "127.0.0.1");
  assert.equal(settings.pricing.currency, "CHF");
  assert.equal(settings.pricing.taxPercent, 8);
  assert.equal(settings.pricing.shippingCents, 650);
  assert.equal(settings.pricing.freeShippingFromCents, 8000);
  assert.equal(settings.orders.maxItemsPerOrder, 7);
}

test("hidden: a v2 file loads", () => check(loadConfig(write(V2))));

test("hidden: a v1 file still loads", () => check(loadConfig(write(V1))));

test("hidden: the environment still overrides the port for v2", () => {
  process.env[V.env_port] = "4999";
  try {
    assert.equal(loadConfig(write(V2)).server.port, 4999);
  } finally {
    delete process.env[V.env_port];
  }
});

test("hidden: the shipped file loads with its values", () => {
  const settings = loadConfig("config/service.json");
  assert.equal(settings.server.port, V.port);
  assert.equal(settings.pricing.taxPercent, V.tax_percent);
  assert.equal(settings.orders.maxItemsPerOrder, V.max_items);
});

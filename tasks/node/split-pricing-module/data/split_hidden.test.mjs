import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const SANDBOX = process.env.AGENTIC_EVAL_SANDBOX;
const V = JSON.parse(readFileSync(process.env.AGENTIC_EVAL_VARS, "utf8"));
const load = (rel) => import(pathToFileURL(join(SANDBOX, rel)).href);
delete process.env[V.env_port];

const pricing = await load("src/pricing.js");
const tax = await load("src/tax.js");
const shipping = await load("src/shipping.js");
const { loadCatalog } = await load("src/catalog.js");
const { loadConfig } = await load("src/config.js");

test("hidden: the new modules export the rules", () => {
  assert.equal(typeof tax.taxCents, "function");
  assert.equal(typeof shipping.shippingCents, "function");
});

test("hidden: pricing.js still exports its whole public API", () => {
  for (const name of ["taxCents", "shippingCents", "subtotalCents", "quote", "UnknownProductError"]) {
    assert.equal(typeof pricing[name], "function", name);
  }
});

test("hidden: each rule lives in one place (re-exported, not copied)", () => {
  assert.equal(pricing.taxCents, tax.taxCents);
  assert.equal(pricing.shippingCents, shipping.shippingCents);
});

test("hidden: the rules behave as before", () => {
  const p = V.tax_percent;
  for (const subtotal of [0, 1, 49, 1005, 123456]) {
    assert.equal(tax.taxCents(subtotal, p), Math.floor((subtotal * p + 50) / 100));
  }
  const settings = loadConfig("config/service.json").pricing;
  assert.equal(shipping.shippingCents(V.free_shipping_from - 1, settings), V.shipping_cents);
  assert.equal(shipping.shippingCents(V.free_shipping_from, settings), 0);
  assert.equal(shipping.shippingCents(0, settings), 0);
});

test("hidden: quotes are unchanged", () => {
  const q = pricing.quote(V.sample_lines, loadCatalog("data/catalog.json"), loadConfig("config/service.json").pricing);
  for (const key of Object.keys(V.sample_quote)) assert.equal(q[key], V.sample_quote[key], key);
  assert.throws(() => pricing.quote([{ sku: "NOPE", qty: 1 }], { products: [] }, {}), pricing.UnknownProductError);
});

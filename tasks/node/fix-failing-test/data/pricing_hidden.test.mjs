import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const SANDBOX = process.env.AGENTIC_EVAL_SANDBOX;
const V = JSON.parse(readFileSync(process.env.AGENTIC_EVAL_VARS, "utf8"));
const load = (rel) => import(pathToFileURL(join(SANDBOX, rel)).href);
delete process.env[V.env_port];

const { quote, taxCents } = await load("src/pricing.js");
const { loadCatalog } = await load("src/catalog.js");
const { loadConfig } = await load("src/config.js");

test("hidden: tax at this shop's rate rounds half up", () => {
  const p = V.tax_percent;
  for (const subtotal of [1, 99, 1234, 5050, 99999]) {
    assert.equal(taxCents(subtotal, p), Math.floor((subtotal * p + 50) / 100), `tax on ${subtotal}`);
  }
});

test("hidden: an exact half cent rounds up", () => {
  assert.equal(taxCents(5, 10), 1);
  assert.equal(taxCents(250, 1), 3);
});

test("hidden: the quote for a sample order", () => {
  const q = quote(V.sample_lines, loadCatalog("data/catalog.json"), loadConfig("config/service.json").pricing);
  assert.equal(q.subtotalCents, V.sample_quote.subtotalCents);
  assert.equal(q.taxCents, V.sample_quote.taxCents);
  assert.equal(q.totalCents, V.sample_quote.totalCents);
});

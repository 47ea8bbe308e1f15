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
const half = (n, p) => Math.floor((n * p + 50) / 100);

function expected(lines, coupon) {
  const prices = Object.fromEntries(V.products.map((p) => [p.sku, p.priceCents]));
  const subtotal = lines.reduce((n, l) => n + prices[l.sku] * l.qty, 0);
  const discount = coupon ? half(subtotal, V.coupon_percent) : 0;
  const net = subtotal - discount;
  const shipping = net === 0 || net >= V.free_shipping_from ? 0 : V.shipping_cents;
  const tax = half(net, V.tax_percent);
  return { subtotalCents: subtotal, discountCents: discount, taxCents: tax, shippingCents: shipping,
           totalCents: net + tax + shipping };
}

function pick(body) {
  const { subtotalCents, discountCents, taxCents, shippingCents, totalCents } = body;
  return { subtotalCents, discountCents, taxCents, shippingCents, totalCents };
}

test("hidden: a quote without a coupon is unchanged and shows no discount", async () => {
  const reply = await api().handle({ method: "POST", path: "/quote", body: { lines: V.sample_lines } });
  assert.equal(reply.status, 200);
  assert.deepEqual(pick(reply.body), expected(V.sample_lines, null));
});

test("hidden: a quote with the coupon", async () => {
  const reply = await api().handle({ method: "POST", path: "/quote", body: { lines: V.sample_lines, coupon: V.coupon_code } });
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  assert.deepEqual(pick(reply.body), expected(V.sample_lines, V.coupon_code));
});

test("hidden: the discount can cancel free shipping", async () => {
  // The cheapest quantity of one product at or just above the threshold; the discount takes it below.
  const p = V.products[0];
  const qty = Math.ceil(V.free_shipping_from / p.priceCents);
  const lines = [{ sku: p.sku, qty }];
  const reply = await api().handle({ method: "POST", path: "/quote", body: { lines, coupon: V.coupon_code } });
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  assert.deepEqual(pick(reply.body), expected(lines, V.coupon_code));
});

test("hidden: an order with the coupon stores it", async () => {
  const a = api();
  const reply = await a.handle({ method: "POST", path: "/orders", body: { lines: V.sample_lines, coupon: V.coupon_code } });
  assert.equal(reply.status, 201, JSON.stringify(reply.body));
  assert.equal(reply.body.coupon, V.coupon_code);
  assert.deepEqual(pick(reply.body), expected(V.sample_lines, V.coupon_code));
  const read = await a.handle({ method: "GET", path: `/orders/${reply.body.id}` });
  assert.equal(read.body.totalCents, reply.body.totalCents);
});

test("hidden: an unknown coupon is a 400 and reserves nothing", async () => {
  const a = api();
  const quoteReply = await a.handle({ method: "POST", path: "/quote", body: { lines: V.sample_lines, coupon: "NOT-A-CODE" } });
  assert.equal(quoteReply.status, 400);
  const p = V.products[0];
  const orderReply = await a.handle({ method: "POST", path: "/orders", body: { lines: [{ sku: p.sku, qty: 1 }], coupon: "NOT-A-CODE" } });
  assert.equal(orderReply.status, 400);
  assert.equal(a.inventory.available(p.sku), p.stock);
});

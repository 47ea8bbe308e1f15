"""Reference fix: coupons in the config, a discount in pricing.quote, the field through app and orders, tests."""

import json
from pathlib import Path

from gradelib import task_vars

v = task_vars()


def edit(rel: str, *pairs: tuple[str, str]) -> None:
    path = Path(rel)
    text = path.read_text(encoding="utf-8")
    for old, new in pairs:
        assert old in text, (rel, old)
        text = text.replace(old, new, 1)
    path.write_text(text, encoding="utf-8")


config = json.loads(Path("config/service.json").read_text(encoding="utf-8"))
config["pricing"]["coupons"] = {v["coupon_code"]: v["coupon_percent"]}
Path("config/service.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")

edit(
    "src/pricing.js",
    ("export class UnknownProductError extends Error {}\n",
     "export class UnknownProductError extends Error {}\nexport class UnknownCouponError extends Error {}\n"),
    ("export function quote(lines, catalog, pricing) {\n  const subtotal = subtotalCents(lines, catalog);\n"
     "  const tax = taxCents(subtotal, pricing.taxPercent);\n  const shipping = shippingCents(subtotal, pricing);\n",
     "export function quote(lines, catalog, pricing, coupon = undefined) {\n"
     "  const subtotal = subtotalCents(lines, catalog);\n"
     "  let discount = 0;\n"
     "  if (coupon !== undefined && coupon !== null) {\n"
     "    const percent = (pricing.coupons ?? {})[coupon];\n"
     "    if (!Object.hasOwn(pricing.coupons ?? {}, coupon)) throw new UnknownCouponError(`unknown coupon ${coupon}`);\n"
     "    discount = Math.floor((subtotal * percent + 50) / 100);\n"
     "  }\n"
     "  const tax = taxCents(subtotal - discount, pricing.taxPercent);\n"
     "  const shipping = shippingCents(subtotal - discount, pricing);\n"),
    ("    taxCents: tax,\n", "    discountCents: discount,\n    taxCents: tax,\n"),
    ("    totalCents: subtotal + tax + shipping,\n", "    totalCents: subtotal - discount + tax + shipping,\n"),
)
edit(
    "src/orders.js",
    ("  place(lines) {", "  place(lines, coupon = undefined) {"),
    ("quote(lines, this.catalog, this.settings.pricing);", "quote(lines, this.catalog, this.settings.pricing, coupon);"),
    ("const order = { id, lines: canonical, ...priced };",
     "const order = { id, lines: canonical, ...priced, ...(coupon != null ? { coupon } : {}) };"),
)
edit(
    "src/app.js",
    ('import { quote, UnknownProductError } from "./pricing.js";',
     'import { quote, UnknownCouponError, UnknownProductError } from "./pricing.js";'),
    ("    if (err instanceof UnknownProductError)",
     "    if (err instanceof UnknownCouponError) return { status: 400, body: { error: err.message } };\n"
     "    if (err instanceof UnknownProductError)"),
    ("body: quote(lines, catalog, settings.pricing) }", "body: quote(lines, catalog, settings.pricing, body.coupon) }"),
    ("body: book.place(lines) }", "body: book.place(lines, body.coupon) }"),
)
edit(
    "test/pricing.test.js",
    ("subtotalCents: 2468, taxCents: 247,", "subtotalCents: 2468, discountCents: 0, taxCents: 247,"),
)
Path("test/coupons.test.js").write_text('''import { test } from "node:test";
import assert from "node:assert/strict";
import { quote, UnknownCouponError } from "../src/pricing.js";

const PRICING = { currency: "EUR", taxPercent: 10, shippingCents: 300, freeShippingFromCents: 5000, coupons: { TEN: 10 } };
const CATALOG = { products: [{ sku: "T-1", name: "Thing", priceCents: 1005, stock: 9 }] };

test("a coupon takes its percentage off before tax", () => {
  const q = quote([{ sku: "T-1", qty: 1 }], CATALOG, PRICING, "TEN");
  assert.equal(q.discountCents, 101);
  assert.equal(q.taxCents, 90);
  assert.equal(q.totalCents, 1005 - 101 + 90 + 300);
});

test("an unknown coupon is refused", () => {
  assert.throws(() => quote([{ sku: "T-1", qty: 1 }], CATALOG, PRICING, "NOPE"), UnknownCouponError);
});
''', encoding="utf-8")

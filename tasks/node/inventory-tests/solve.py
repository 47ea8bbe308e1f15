"""Reference tests: every behaviour the instruction lists, one test each."""

from pathlib import Path

Path("test/inventory.test.js").write_text('''import { test } from "node:test";
import assert from "node:assert/strict";
import { Inventory, OutOfStockError } from "../src/inventory.js";

const CATALOG = { products: [{ sku: "A-1", name: "A", priceCents: 100, stock: 3 },
                             { sku: "B-2", name: "B", priceCents: 200, stock: 1 }] };

test("available counts stock, and nothing for an unknown SKU", () => {
  const inventory = new Inventory(CATALOG);
  assert.equal(inventory.available("A-1"), 3);
  assert.equal(inventory.available("NOPE"), 0);
});

test("reserve takes each line's quantity, down to exactly zero", () => {
  const inventory = new Inventory(CATALOG);
  inventory.reserve([{ sku: "A-1", qty: 2 }, { sku: "B-2", qty: 1 }]);
  assert.equal(inventory.available("A-1"), 1);
  assert.equal(inventory.available("B-2"), 0);
});

test("a short line refuses the whole reservation and takes nothing", () => {
  const inventory = new Inventory(CATALOG);
  assert.throws(() => inventory.reserve([{ sku: "A-1", qty: 1 }, { sku: "B-2", qty: 2 }]), OutOfStockError);
  assert.equal(inventory.available("A-1"), 3);
  assert.equal(inventory.available("B-2"), 1);
  assert.throws(() => inventory.reserve([{ sku: "NOPE", qty: 1 }]), OutOfStockError);
});
''', encoding="utf-8")

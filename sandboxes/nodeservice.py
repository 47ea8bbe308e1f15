"""Sandbox generator `nodeservice`: a small Node.js order service (plain ES modules, JSDoc types).

The generated repo runs on Node 20 with no dependencies at all; its tests use
Node's built-in test runner (`node --test test/`):

    README.md  package.json  .gitignore
    config/service.json     server, pricing and order settings (read by src/config.js)
    data/catalog.json       the products: sku, name, price in cents, stock
    src/  config.js catalog.js pricing.js inventory.js orders.js app.js server.js
    test/ config.test.js pricing.test.js orders.test.js app.test.js

`src/app.js` is the whole HTTP API as a plain function (`createApp(...).handle({method, path,
body})` returns `{status, body}`), so tests need no sockets; `src/server.js` wraps it in node:http.
Every name and constant comes from `random.Random(seed)`. `params["scenario"]`:

    base           everything consistent, all tests pass
    failing_test   tax is truncated instead of rounded half up: one named test fails
    log_bug        the catalog lookup is case-sensitive; logs/server.log shows the 500s it causes
    legacy_config  config/service.json and the loader use the old flat (v1) format

The Python functions `quote_cents` and `tax_cents` mirror the service's pricing rules, so
graders and hidden tests know the expected numbers for the seed.
"""

# No `from __future__ import annotations`: generators are loaded by file path (see pyservice.py).
import json
import random
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import Any

from agentic_eval.packs.twinspec import (
    Bind,
    Check,
    Const,
    E,
    Env,
    JsonFile,
    Ref,
    TestSpec,
    TextFile,
    js_value,
    render_node,
    twins_of,
)

SCENARIOS = ("base", "failing_test", "log_bug", "legacy_config")

SERVICE_NAMES = ("shopfront", "cartwheel", "orderly", "tillbox", "checkoutd", "basketry", "parcelpost", "stockroom")
PRODUCT_POOL = (
    ("mug", "Enamel mug"), ("tote", "Canvas tote"), ("lamp", "Desk lamp"), ("pen", "Fountain pen"),
    ("cap", "Wool cap"), ("sock", "Merino socks"), ("book", "Notebook"), ("kite", "Stunt kite"),
    ("dice", "Dice set"), ("tea", "Green tea tin"),
)
CURRENCIES = ("EUR", "USD", "GBP", "SEK")
COUPON_CODES = ("SPRING", "WELCOME", "LOYAL", "FRIENDS", "LAUNCH")
STATS_ROUTES = ("/stats", "/metrics/summary", "/admin/stats")


@dataclass(frozen=True)
class Choices:
    scenario: str
    name: str
    version: str
    port: int
    new_port: int
    currency: str
    tax_percent: int
    shipping_cents: int
    free_shipping_from: int
    max_items: int
    products: tuple[tuple[str, str, int, int], ...]  # sku, name, price_cents, stock
    coupon_code: str
    coupon_percent: int
    stats_route: str
    env_port: str


def _choose(seed: int, scenario: str) -> Choices:
    rng = random.Random(seed)
    name = rng.choice(SERVICE_NAMES)
    prefix = "".join(rng.sample("ABCDEFGHJKLMNPRSTVWXZ", 2))
    products = []
    for index, (slug, title) in enumerate(sorted(rng.sample(PRODUCT_POOL, rng.randint(4, 6)))):
        sku = f"{prefix}-{slug.upper()}-{100 + 7 * index + rng.randint(0, 6)}"
        products.append((sku, title, rng.randint(3, 90) * 50 + rng.choice((0, 25, 49, 99)), rng.randint(5, 40)))
    port, new_port = rng.sample(range(3100, 3999), 2)
    return Choices(
        scenario=scenario,
        name=name,
        version=f"{rng.randint(0, 3)}.{rng.randint(1, 9)}.{rng.randint(0, 9)}",
        port=port,
        new_port=new_port,
        currency=rng.choice(CURRENCIES),
        tax_percent=rng.choice((7, 8, 13, 19, 21, 23, 25)),
        shipping_cents=rng.choice((395, 450, 499, 590, 695)),
        free_shipping_from=rng.choice((5000, 7500, 9900, 12000)),
        max_items=rng.choice((10, 12, 20, 25)),
        products=tuple(products),
        coupon_code=f"{rng.choice(COUPON_CODES)}{rng.randint(10, 99)}",
        coupon_percent=rng.choice((5, 10, 15, 20, 25)),
        stats_route=rng.choice(STATS_ROUTES),
        env_port=f"{name.upper()}_PORT",
    )


# --------------------------------------------------------------------------- the pricing rules, in Python


def tax_cents(subtotal: int, percent: int) -> int:
    """Tax on `subtotal`, rounded half up to a cent (integer arithmetic, as the service does it)."""
    return (subtotal * percent + 50) // 100


def quote_cents(c: Choices, lines: list[tuple[str, int]]) -> dict[str, int]:
    prices = {sku: price for sku, _, price, _ in c.products}
    subtotal = sum(prices[sku] * qty for sku, qty in lines)
    shipping = 0 if subtotal >= c.free_shipping_from or subtotal == 0 else c.shipping_cents
    tax = tax_cents(subtotal, c.tax_percent)
    return {"subtotalCents": subtotal, "taxCents": tax, "shippingCents": shipping,
            "totalCents": subtotal + tax + shipping}


# --------------------------------------------------------------------------- repo files


def _t(text: str, c: Choices, **extra: Any) -> str:
    return Template(text.lstrip("\n")).substitute({**c.__dict__, **extra})


def _package_json(c: Choices) -> str:
    data = {
        "name": c.name, "version": c.version, "private": True, "type": "module",
        "description": f"Order and pricing API of the {c.name} shop",
        "main": "src/server.js",
        "scripts": {"start": "node src/server.js", "test": "node --test test/"},
        "engines": {"node": ">=20"},
    }
    return json.dumps(data, indent=2) + "\n"


def _service_json(c: Choices) -> str:
    if c.scenario == "legacy_config":
        data: dict[str, Any] = {
            "host": "127.0.0.1", "port": c.port, "currency": c.currency, "tax_percent": c.tax_percent,
            "shipping_cents": c.shipping_cents, "free_shipping_from_cents": c.free_shipping_from,
            "max_items_per_order": c.max_items,
        }
    else:
        data = {
            "server": {"host": "127.0.0.1", "port": c.port},
            "pricing": {"currency": c.currency, "taxPercent": c.tax_percent, "shippingCents": c.shipping_cents,
                        "freeShippingFromCents": c.free_shipping_from},
            "orders": {"maxItemsPerOrder": c.max_items},
        }
    return json.dumps(data, indent=2) + "\n"


def _catalog_json(c: Choices) -> str:
    items = [{"sku": sku, "name": name, "priceCents": price, "stock": stock} for sku, name, price, stock in c.products]
    return json.dumps({"products": items}, indent=2) + "\n"


def _readme(c: Choices) -> str:
    return _t('''
# $name

The order and pricing API of the $name shop: a product catalog, price quotes
(tax and shipping), and orders that reserve stock. Plain ES modules on Node 20,
no dependencies.

    npm start          # or: node src/server.js
    npm test           # or: node --test test/

## API

| route | what |
| --- | --- |
| `GET /health` | `{"status": "ok"}` |
| `GET /products` | the catalog with the stock left |
| `POST /quote` | body `{"lines": [{"sku": "...", "qty": 2}]}`: subtotal, tax, shipping, total in cents |
| `POST /orders` | same body: reserves the stock and returns the order (201) |
| `GET /orders/:id` | one order |

## Configuration

`config/service.json` (another file with `SERVICE_CONFIG=path`). The
environment variable `$env_port` overrides the configured port.
Amounts are integers in cents; tax is rounded half up to a cent.
''', c)


def _configjs_value(c: Choices) -> str:
    if c.scenario == "legacy_config":
        body = '''
  return {
    server: { host: raw.host ?? "127.0.0.1", port: portFromEnv(raw.port) },
    pricing: {
      currency: raw.currency,
      taxPercent: raw.tax_percent,
      shippingCents: raw.shipping_cents,
      freeShippingFromCents: raw.free_shipping_from_cents,
    },
    orders: { maxItemsPerOrder: raw.max_items_per_order },
  };'''
    else:
        body = '''
  return {
    server: { host: raw.server?.host ?? "127.0.0.1", port: portFromEnv(raw.server?.port) },
    pricing: { ...raw.pricing },
    orders: { ...raw.orders },
  };'''
    return _t('''
// Load config/service.json into the settings object the rest of the service uses.
import { readFileSync } from "node:fs";

export const DEFAULT_CONFIG_PATH = "config/service.json";

/**
 * @typedef {{host: string, port: number}} ServerSettings
 * @typedef {{currency: string, taxPercent: number, shippingCents: number, freeShippingFromCents: number}} PricingSettings
 * @typedef {{maxItemsPerOrder: number}} OrderSettings
 * @typedef {{server: ServerSettings, pricing: PricingSettings, orders: OrderSettings}} Settings
 */

export class ConfigError extends Error {}

/** The port: $env_port from the environment when set, else the configured one. */
function portFromEnv(configured) {
  const fromEnv = process.env.$env_port;
  const port = fromEnv !== undefined && fromEnv !== "" ? Number(fromEnv) : configured;
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new ConfigError(`invalid port: $${fromEnv ?? configured}`);
  }
  return port;
}

/**
 * Read and check the settings file.
 * @param {string} [path]
 * @returns {Settings}
 */
export function loadConfig(path = process.env.SERVICE_CONFIG || DEFAULT_CONFIG_PATH) {
  let raw;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new ConfigError(`cannot read $${path}: $${err.message}`);
  }
  return normalise(raw);
}

/** @returns {Settings} */
export function normalise(raw) {$body
}
''', c, body=body)


def _catalogjs_value(c: Choices) -> str:
    lookup = ("  return catalog.products.find((p) => p.sku === sku);" if c.scenario == "log_bug" else
              '  const wanted = String(sku ?? "").toUpperCase();\n'
              "  return catalog.products.find((p) => p.sku === wanted);")
    return _t('''
// The product catalog (data/catalog.json).
import { readFileSync } from "node:fs";

/**
 * @typedef {{sku: string, name: string, priceCents: number, stock: number}} Product
 * @typedef {{products: Product[]}} Catalog
 */

export const DEFAULT_CATALOG_PATH = "data/catalog.json";

/** @returns {Catalog} */
export function loadCatalog(path = DEFAULT_CATALOG_PATH) {
  return JSON.parse(readFileSync(path, "utf8"));
}

/**
 * The product with this SKU, or undefined.
 * @param {Catalog} catalog
 * @param {string} sku
 * @returns {Product | undefined}
 */
export function findProduct(catalog, sku) {
$lookup
}
''', c, lookup=lookup)


def _pricingjs_value(c: Choices) -> str:
    tax = ("Math.floor((subtotalCents * percent) / 100)" if c.scenario == "failing_test"
           else "Math.floor((subtotalCents * percent + 50) / 100)")
    return _t('''
// Prices, tax and shipping. Every amount is an integer number of cents.
import { findProduct } from "./catalog.js";

export class UnknownProductError extends Error {}

/**
 * Tax on a subtotal, rounded half up to a cent.
 * @param {number} subtotalCents
 * @param {number} percent
 */
export function taxCents(subtotalCents, percent) {
  return $tax;
}

/**
 * Shipping: free from `freeShippingFromCents` on, and for an empty order.
 * @param {number} subtotalCents
 * @param {import("./config.js").PricingSettings} pricing
 */
export function shippingCents(subtotalCents, pricing) {
  if (subtotalCents === 0 || subtotalCents >= pricing.freeShippingFromCents) return 0;
  return pricing.shippingCents;
}

/**
 * Sum of price times quantity over the order lines.
 * @param {{sku: string, qty: number}[]} lines
 * @param {import("./catalog.js").Catalog} catalog
 */
export function subtotalCents(lines, catalog) {
  let total = 0;
  for (const line of lines) {
    const product = findProduct(catalog, line.sku);
    if (!product) throw new UnknownProductError(`unknown sku $${line.sku}`);
    total += product.priceCents * line.qty;
  }
  return total;
}

/**
 * The full price quote for some order lines.
 * @returns {{subtotalCents: number, taxCents: number, shippingCents: number, totalCents: number, currency: string}}
 */
export function quote(lines, catalog, pricing) {
  const subtotal = subtotalCents(lines, catalog);
  const tax = taxCents(subtotal, pricing.taxPercent);
  const shipping = shippingCents(subtotal, pricing);
  return {
    subtotalCents: subtotal,
    taxCents: tax,
    shippingCents: shipping,
    totalCents: subtotal + tax + shipping,
    currency: pricing.currency,
  };
}
''', c, tax=tax)


INVENTORY_JS = '''
// Stock levels per SKU, kept in memory.

export class OutOfStockError extends Error {}

export class Inventory {
  /** @param {import("./catalog.js").Catalog} catalog */
  constructor(catalog) {
    /** @type {Map<string, number>} */
    this.stock = new Map(catalog.products.map((p) => [p.sku, p.stock]));
  }

  /** Units of `sku` left (0 for an unknown SKU). */
  available(sku) {
    return this.stock.get(sku) ?? 0;
  }

  /**
   * Take every line's quantity out of stock, or nothing at all when one line cannot be served.
   * @param {{sku: string, qty: number}[]} lines
   */
  reserve(lines) {
    for (const line of lines) {
      if (this.available(line.sku) < line.qty) {
        throw new OutOfStockError(`only ${this.available(line.sku)} of ${line.sku} left`);
      }
    }
    for (const line of lines) this.stock.set(line.sku, this.available(line.sku) - line.qty);
  }
}
'''


def _ordersjs_value(c: Choices) -> str:
    return _t('''
// Orders: quote the lines, reserve the stock, remember the order.
import { findProduct } from "./catalog.js";
import { quote } from "./pricing.js";

export class OrderError extends Error {}

export class OrderBook {
  constructor({ catalog, inventory, settings }) {
    this.catalog = catalog;
    this.inventory = inventory;
    this.settings = settings;
    /** @type {Map<string, object>} */
    this.orders = new Map();
    this.nextId = 1;
  }

  /**
   * Place an order for `lines` ([{sku, qty}]); returns the stored order.
   * @param {{sku: string, qty: number}[]} lines
   */
  place(lines) {
    if (!Array.isArray(lines) || lines.length === 0) throw new OrderError("an order needs at least one line");
    const items = lines.reduce((sum, line) => sum + line.qty, 0);
    if (items > this.settings.orders.maxItemsPerOrder) {
      throw new OrderError(`at most $${this.settings.orders.maxItemsPerOrder} items per order`);
    }
    const priced = quote(lines, this.catalog, this.settings.pricing);
    const canonical = lines.map((line) => ({ sku: findProduct(this.catalog, line.sku).sku, qty: line.qty }));
    this.inventory.reserve(canonical);
    const id = `ord-$${String(this.nextId++).padStart(4, "0")}`;
    const order = { id, lines: canonical, ...priced };
    this.orders.set(id, order);
    return order;
  }

  get(id) {
    return this.orders.get(id);
  }
}
''', c)


APP_JS = '''
// The HTTP API as a plain function: handle({method, path, body}) -> {status, body}.
import { Inventory, OutOfStockError } from "./inventory.js";
import { OrderBook, OrderError } from "./orders.js";
import { quote, UnknownProductError } from "./pricing.js";

/**
 * @param {{settings: import("./config.js").Settings, catalog: import("./catalog.js").Catalog}} deps
 */
export function createApp({ settings, catalog }) {
  const inventory = new Inventory(catalog);
  const book = new OrderBook({ catalog, inventory, settings });

  function linesOf(body) {
    return body && Array.isArray(body.lines) ? body.lines : null;
  }

  function failure(err) {
    if (err instanceof OutOfStockError) return { status: 409, body: { error: err.message } };
    if (err instanceof OrderError) return { status: 400, body: { error: err.message } };
    if (err instanceof UnknownProductError) return { status: 400, body: { error: err.message } };
    throw err;
  }

  /** @param {{method: string, path: string, body?: any}} request */
  async function handle({ method, path, body }) {
    try {
      if (method === "GET" && path === "/health") return { status: 200, body: { status: "ok" } };
      if (method === "GET" && path === "/products") {
        const products = catalog.products.map((p) => ({ ...p, stock: inventory.available(p.sku) }));
        return { status: 200, body: { products } };
      }
      if (method === "POST" && path === "/quote") {
        const lines = linesOf(body);
        if (!lines) return { status: 400, body: { error: "body needs a lines array" } };
        return { status: 200, body: quote(lines, catalog, settings.pricing) };
      }
      if (method === "POST" && path === "/orders") {
        const lines = linesOf(body);
        if (!lines) return { status: 400, body: { error: "body needs a lines array" } };
        return { status: 201, body: book.place(lines) };
      }
      const match = /^\\/orders\\/([\\w-]+)$/.exec(path);
      if (method === "GET" && match) {
        const order = book.get(match[1]);
        return order ? { status: 200, body: order } : { status: 404, body: { error: "no such order" } };
      }
      return { status: 404, body: { error: `no route for ${method} ${path}` } };
    } catch (err) {
      return failure(err);
    }
  }

  return { handle, inventory, book };
}
'''

SERVER_JS = '''
// Serve the API over HTTP: node src/server.js
import { createServer } from "node:http";
import { pathToFileURL } from "node:url";
import { createApp } from "./app.js";
import { loadCatalog } from "./catalog.js";
import { loadConfig } from "./config.js";

export function startServer(settings = loadConfig(), catalog = loadCatalog()) {
  const app = createApp({ settings, catalog });
  const server = createServer(async (req, res) => {
    let raw = "";
    for await (const chunk of req) raw += chunk;
    let body;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: "invalid JSON" }));
      return;
    }
    let reply;
    try {
      reply = await app.handle({ method: req.method, path: new URL(req.url, "http://x").pathname, body });
    } catch (err) {
      console.error(`ERROR ${req.method} ${req.url} 500 ${err.stack}`);
      reply = { status: 500, body: { error: "internal error" } };
    }
    res.writeHead(reply.status, { "content-type": "application/json" }).end(JSON.stringify(reply.body));
  });
  server.listen(settings.server.port, settings.server.host);
  return server;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const server = startServer();
  server.on("listening", () => console.log(`listening on ${JSON.stringify(server.address())}`));
}
'''


# Each test is a spec (agentic_eval/packs/twinspec.py): the node:test source the model sees is rendered from it,
# and so is its twin, the same calls and expected values as data the grader judges (variables["twins"]).


@dataclass(frozen=True)
class _TestFile:
    imports: dict[str, str]
    """name -> the module's file in the repo (src/config.js)"""
    head: str
    """What the file holds between its imports and its tests (helpers, constants)"""
    tests: tuple[TestSpec, ...]

    def render(self) -> str:
        by_module: dict[str, list[str]] = {}
        for name, module in self.imports.items():
            by_module.setdefault(module, []).append(name)
        imports = "".join(f'import {{ {", ".join(sorted(names))} }} from "../{module}";\n'
                          for module, names in by_module.items())
        return ('import { test } from "node:test";\nimport assert from "node:assert/strict";\n' + imports
                + self.head + "".join("\n" + render_node(t) for t in self.tests))

    def twins(self, file: str) -> list[dict[str, Any]]:
        return twins_of(file, self.tests, self.imports)


def _const(name: str, value: Any) -> str:
    return f"const {name} = {js_value(value)};\n"


def _test_config(c: Choices) -> _TestFile:
    if c.scenario == "legacy_config":
        sample: dict[str, Any] = {"host": "127.0.0.1", "port": 4321, "currency": "EUR", "tax_percent": 10,
                                  "shipping_cents": 300, "free_shipping_from_cents": 5000, "max_items_per_order": 5}
    else:
        sample = {"server": {"host": "127.0.0.1", "port": 4321},
                  "pricing": {"currency": "EUR", "taxPercent": 10, "shippingCents": 300,
                              "freeShippingFromCents": 5000},
                  "orders": {"maxItemsPerOrder": 5}}
    env = c.env_port
    SAMPLE = Const("SAMPLE", sample)
    loaded = Bind("settings", E("loadConfig", JsonFile(SAMPLE, "service.json")))
    head = _t('''
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

function write(data) {
  const path = join(mkdtempSync(join(tmpdir(), "cfg-")), "service.json");
  writeFileSync(path, typeof data === "string" ? data : JSON.stringify(data));
  return path;
}

''', c) + _const("SAMPLE", sample)
    tests = (
        TestSpec("loads every setting", (
            Env(env, None), loaded,
            Check(E("settings.server.port", call=False), 4321), Check(E("settings.pricing.taxPercent", call=False), 10),
            Check(E("settings.pricing.freeShippingFromCents", call=False), 5000),
            Check(E("settings.orders.maxItemsPerOrder", call=False), 5))),
        TestSpec("the environment overrides the port", (
            Env(env, "5555"), loaded, Check(E("settings.server.port", call=False), 5555), Env(env, None))),
        TestSpec("a broken file is a ConfigError", (
            Check(E("loadConfig", TextFile("{not json", "service.json")), raises="ConfigError"),)),
        TestSpec("the shipped settings load", (
            Env(env, None), Bind("settings", E("loadConfig", "config/service.json")),
            Check(E("settings.server.port", call=False), c.port))),
    )
    return _TestFile({"ConfigError": "src/config.js", "loadConfig": "src/config.js"}, head, tests)


PRICING = {"currency": "EUR", "taxPercent": 10, "shippingCents": 300, "freeShippingFromCents": 5000}


def _test_pricing(c: Choices) -> _TestFile:
    catalog = {"products": [{"sku": "T-1", "name": "Thing", "priceCents": 1234, "stock": 9}]}
    P, C = Const("PRICING", PRICING), Const("CATALOG", catalog)
    tests = (
        TestSpec("tax rounds half up to a cent", (
            Check(E("taxCents", 1005, 10), 101), Check(E("taxCents", 1004, 10), 100), Check(E("taxCents", 15, 10), 2))),
        TestSpec("shipping is free from the threshold on", (
            Check(E("shippingCents", 4999, P), 300), Check(E("shippingCents", 5000, P), 0),
            Check(E("shippingCents", 0, P), 0))),
        TestSpec("a quote adds subtotal, tax and shipping", (
            Check(E("quote", [{"sku": "T-1", "qty": 2}], C, P),
                  {"subtotalCents": 2468, "taxCents": 247, "shippingCents": 300, "totalCents": 3015,
                   "currency": "EUR"}),)),
    )
    head = "\n" + _const("PRICING", PRICING) + _const("CATALOG", catalog)
    return _TestFile({n: "src/pricing.js" for n in ("quote", "shippingCents", "taxCents")}, head, tests)


def _test_orders(c: Choices) -> _TestFile:
    catalog = {"products": [{"sku": "T-1", "name": "Thing", "priceCents": 1000, "stock": 3}]}
    settings = {"pricing": PRICING, "orders": {"maxItemsPerOrder": 5}}
    C, S = Const("CATALOG", catalog), Const("SETTINGS", settings)
    made = (Bind("inventory", E("Inventory", C, new=True)),
            Bind("orders", E("OrderBook", {"catalog": C, "inventory": Ref("inventory"), "settings": S}, new=True)))
    tests = (
        TestSpec("placing an order reserves the stock", (
            *made, Bind("order", E("orders.place", [{"sku": "T-1", "qty": 2}])),
            Check(E("order.id", call=False), "ord-0001"), Check(E("order.totalCents", call=False), 2500),
            Check(E("inventory.available", "T-1"), 1), Check(E("orders.get", "ord-0001"), Ref("order")))),
        TestSpec("an order beyond the stock takes nothing", (
            *made, Check(E("orders.place", [{"sku": "T-1", "qty": 4}]), raises="OutOfStockError"),
            Check(E("inventory.available", "T-1"), 3))),
        TestSpec("an empty order is refused", (*made, Check(E("orders.place", []), raises="OrderError"))),
    )
    head = "\n" + _const("CATALOG", catalog) + _const("SETTINGS", settings)
    return _TestFile({"Inventory": "src/inventory.js", "OutOfStockError": "src/inventory.js",
                      "OrderBook": "src/orders.js", "OrderError": "src/orders.js"}, head, tests)


def _test_app(c: Choices) -> _TestFile:
    sku, _, price, _ = c.products[0]
    made = (Env(c.env_port, None), Bind("settings", E("loadConfig", "config/service.json")),
            Bind("catalog", E("loadCatalog", "data/catalog.json")),
            Bind("api", E("createApp", {"settings": Ref("settings"), "catalog": Ref("catalog")})))
    one = {"lines": [{"sku": sku, "qty": 1}]}
    tests = (
        TestSpec("health", (*made, Check(E("api.handle", {"method": "GET", "path": "/health"}, wait=True),
                                          {"status": 200, "body": {"status": "ok"}}))),
        TestSpec(f"quote for one {sku}", (
            *made, Bind("reply", E("api.handle", {"method": "POST", "path": "/quote", "body": one}, wait=True)),
            Check(E("reply.status", call=False), 200), Check(E("reply.body.subtotalCents", call=False), price))),
        TestSpec("an order can be read back", (
            *made, Bind("placed", E("api.handle", {"method": "POST", "path": "/orders", "body": one}, wait=True)),
            Check(E("placed.status", call=False), 201),
            Bind("read", E("api.handle", {"method": "GET", "path": "/orders/ord-0001"}, wait=True)),
            Check(E("read.body", call=False), Ref("placed.body")))),
        TestSpec("unknown routes are 404", (
            *made, Bind("reply", E("api.handle", {"method": "GET", "path": "/nope"}, wait=True)),
            Check(E("reply.status", call=False), 404))),
    )
    # app() makes the app as every test above does (tests added later may use it)
    head = "\n" + _t('''
function app() {
  delete process.env.$env_port;
  return createApp({ settings: loadConfig("config/service.json"), catalog: loadCatalog("data/catalog.json") });
}
''', c)
    return _TestFile({"createApp": "src/app.js", "loadCatalog": "src/catalog.js", "loadConfig": "src/config.js"},
                     head, tests)


def _test_files(c: Choices) -> dict[str, _TestFile]:
    return {"test/config.test.js": _test_config(c), "test/pricing.test.js": _test_pricing(c),
            "test/orders.test.js": _test_orders(c), "test/app.test.js": _test_app(c)}


def _server_log(c: Choices) -> str:
    """What production logged after the mobile app started sending lower-case SKUs (log_bug scenario)."""
    lines = []
    minute = 0
    for index, (sku, _, _, _) in enumerate(c.products * 2):
        minute += 3 + index % 4
        stamp = f"2025-03-17T09:{minute:02d}:{(index * 17) % 60:02d}Z"
        if index % 3 == 1:
            body = json.dumps({"lines": [{"sku": sku.lower(), "qty": 1 + index % 2}]})
            lines.append(f"{stamp} INFO  POST /orders client=mobile-app/4.2.0 body={body}")
            lines.append(f'{stamp} WARN  POST /orders 400 {{"error":"unknown sku {sku.lower()}"}}')
        else:
            body = json.dumps({"lines": [{"sku": sku, "qty": 1}]})
            lines.append(f"{stamp} INFO  POST /orders client=web/{c.version} body={body}")
            lines.append(f"{stamp} INFO  POST /orders 201")
    return "\n".join(lines) + "\n"


def _files(c: Choices) -> dict[str, str]:
    files = {
        ".gitignore": "node_modules/\ncoverage/\n*.log.tmp\n",
        "README.md": _readme(c),
        "package.json": _package_json(c),
        "config/service.json": _service_json(c),
        "data/catalog.json": _catalog_json(c),
        "src/config.js": _configjs_value(c),
        "src/catalog.js": _catalogjs_value(c),
        "src/pricing.js": _pricingjs_value(c),
        "src/inventory.js": INVENTORY_JS.lstrip("\n"),
        "src/orders.js": _ordersjs_value(c),
        "src/app.js": APP_JS.lstrip("\n"),
        "src/server.js": SERVER_JS.lstrip("\n"),
        **{rel: tests.render() for rel, tests in _test_files(c).items()},
    }
    if c.scenario == "log_bug":
        files["logs/server.log"] = _server_log(c)
    return files


def _variables(c: Choices, files: dict[str, str]) -> dict[str, Any]:
    sample_lines = [(c.products[0][0], 2), (c.products[-1][0], 1)]
    variables: dict[str, Any] = {
        "scenario": c.scenario,
        "name": c.name,
        "version": c.version,
        "port": c.port,
        "new_port": c.new_port,
        "currency": c.currency,
        "tax_percent": c.tax_percent,
        "shipping_cents": c.shipping_cents,
        "free_shipping_from": c.free_shipping_from,
        "max_items": c.max_items,
        "products": [{"sku": s, "name": n, "priceCents": p, "stock": q} for s, n, p, q in c.products],
        "skus": [s for s, _, _, _ in c.products],
        "sample_lines": [{"sku": s, "qty": q} for s, q in sample_lines],
        "sample_quote": quote_cents(c, sample_lines),
        "coupon_code": c.coupon_code,
        "coupon_percent": c.coupon_percent,
        "stats_route": c.stats_route,
        "env_port": c.env_port,
        "test_count": sum(text.count("\ntest(") for path, text in files.items() if path.startswith("test/")),
    }
    for path, text in files.items():
        if path.startswith("test/"):
            variables[f"{Path(path).name.split('.')[0]}_test_count"] = text.count("\ntest(")
    variables["twins"] = [twin for rel, tests in _test_files(c).items() for twin in tests.twins(rel)]
    if c.scenario == "failing_test":
        variables["failing_test"] = "tax rounds half up to a cent"
    return variables


FRESH_VARIABLES = ("coupon_code", "stats_route")


def generate(root: Path, seed: int, params: dict[str, Any]) -> dict[str, Any]:
    """Write the order service for `seed` and `params["scenario"]` under `root`; return its variables."""
    scenario = str(params.get("scenario", "base"))
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r} (known: {', '.join(SCENARIOS)})")
    c = _choose(seed, scenario)
    files = _files(c)
    variables = _variables(c, files)
    for key in FRESH_VARIABLES:
        for path, text in files.items():
            if str(variables[key]) in text:
                raise AssertionError(f"generator bug: fresh name {variables[key]!r} ({key}) occurs in {path}")
    for rel_path in sorted(files):
        path = root / rel_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(files[rel_path].encode("utf-8"))
    return variables

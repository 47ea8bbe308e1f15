"""Reference answer: read config/service.json and data/catalog.json."""

import json
from pathlib import Path

config = json.loads(Path("config/service.json").read_text(encoding="utf-8"))["pricing"]
products = json.loads(Path("data/catalog.json").read_text(encoding="utf-8"))["products"]
priciest = max(products, key=lambda p: p["priceCents"])
Path("ANSWER.md").write_text(
    f"tax: {config['taxPercent']}%\n"
    f"shipping fee: {config['shippingCents']} cents\n"
    f"free shipping from: {config['freeShippingFromCents']} cents\n"
    f"most expensive product SKU: {priciest['sku']}\n",
    encoding="utf-8",
)

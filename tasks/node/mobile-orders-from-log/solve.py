"""Reference fix: look SKUs up case-insensitively (the catalog's SKUs are upper case)."""

from pathlib import Path

path = Path("src/catalog.js")
text = path.read_text(encoding="utf-8")
bug = "  return catalog.products.find((p) => p.sku === sku);\n"
assert bug in text, "the case-sensitive lookup is not where the scenario put it"
fix = ('  const wanted = String(sku ?? "").toUpperCase();\n'
       "  return catalog.products.find((p) => p.sku.toUpperCase() === wanted);\n")
path.write_text(text.replace(bug, fix), encoding="utf-8")

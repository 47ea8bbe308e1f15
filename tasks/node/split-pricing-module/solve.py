"""Reference fix: cut the two functions into their own modules; pricing.js imports and re-exports them."""

import re
from pathlib import Path

path = Path("src/pricing.js")
text = path.read_text(encoding="utf-8")


def cut(name: str) -> str:
    global text
    match = re.search(r"/\*\*(?:(?!\*/).)*?\*/\nexport function " + name + r"\(.*?\n}\n\n", text, re.DOTALL)
    assert match, name
    text = text[: match.start()] + text[match.end():]
    return match.group(0)


tax = cut("taxCents")
shipping = cut("shippingCents")
Path("src/tax.js").write_text("// The tax rule.\n\n" + tax.rstrip() + "\n", encoding="utf-8")
Path("src/shipping.js").write_text("// The shipping rule.\n\n" + shipping.rstrip() + "\n", encoding="utf-8")
text = text.replace(
    'import { findProduct } from "./catalog.js";\n',
    'import { findProduct } from "./catalog.js";\nimport { shippingCents } from "./shipping.js";\n'
    'import { taxCents } from "./tax.js";\n\nexport { shippingCents, taxCents };\n',
)
path.write_text(text, encoding="utf-8")

"""Reference fix: validate every line in OrderBook.place before anything else."""

from pathlib import Path

path = Path("src/orders.js")
text = path.read_text(encoding="utf-8")
anchor = "    const items = lines.reduce("
check = '''    for (const line of lines) {
      if (line === null || typeof line !== "object" || Array.isArray(line)) {
        throw new OrderError("every order line must be an object");
      }
      if (typeof line.sku !== "string" || line.sku === "") throw new OrderError("every order line needs a sku");
      if (!Number.isInteger(line.qty) || line.qty < 1) {
        throw new OrderError("qty must be a whole number of at least 1");
      }
    }
'''
assert anchor in text
path.write_text(text.replace(anchor, check + anchor, 1), encoding="utf-8")

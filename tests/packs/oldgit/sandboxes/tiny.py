"""A tiny sandbox generator for the harness's own tests."""

import random
from pathlib import Path


def generate(root: Path, seed: int, params: dict) -> dict:
    rng = random.Random(seed)
    port = rng.randint(2000, 9000)
    name = rng.choice(["alpha", "bravo", "charlie", "delta"]) + str(rng.randint(10, 99))
    (root / "config").mkdir()
    (root / "config" / "settings.ini").write_text(f"[server]\nname = {name}\nport = {port}\n")
    (root / "README.md").write_text(f"# {name}\n\nA tiny service.\n")
    if params.get("plant"):
        (root / "NOTES.md").write_text(str(params["plant"]).replace("PORT", str(port)) + "\n")
    return {"port": port, "name": name}

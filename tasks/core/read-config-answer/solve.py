"""Reference fix: read config/settings.json and write the three values."""

import json
from pathlib import Path

settings = json.loads(Path("config/settings.json").read_text(encoding="utf-8"))
Path("ANSWER.md").write_text(
    f"port: {settings['service']['port']}\n"
    f"requests per minute: {settings['limits']['requests_per_minute']}\n"
    f"burst: {settings['limits']['burst']}\n",
    encoding="utf-8",
)

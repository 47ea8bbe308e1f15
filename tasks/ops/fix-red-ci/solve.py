"""Reference fix: prune beyond KEEP, not beyond KEEP - 1."""

from pathlib import Path

path = Path("scripts/rotate-logs.sh")
text = path.read_text(encoding="utf-8")
assert "(( n > $((keep - 1)) ))" in text
path.write_text(text.replace("(( n > $((keep - 1)) ))", "(( n > keep ))"), encoding="utf-8")

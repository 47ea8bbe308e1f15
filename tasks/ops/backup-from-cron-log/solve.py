"""Reference fix: archive the folder itself (`-C src .`) instead of an unquoted `ls` split on spaces."""

from pathlib import Path

path = Path("scripts/backup.sh")
text = path.read_text(encoding="utf-8")
bug = 'tar -czf "$archive" -C "$src" $(ls -A "$src")'
assert bug in text
path.write_text(text.replace(bug, 'tar -czf "$archive" -C "$src" .'), encoding="utf-8")

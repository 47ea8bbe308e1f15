"""Reference fix: parse --dry-run first; route every mv/rm/truncate through a `run` helper that only echoes."""

from pathlib import Path

path = Path("scripts/rotate-logs.sh")
text = path.read_text(encoding="utf-8")
edits = [
    ('here="$(cd "$(dirname "$0")" && pwd)"\n',
     'here="$(cd "$(dirname "$0")" && pwd)"\n'
     'dry_run=0\n'
     'if [[ "${1:-}" == "--dry-run" ]]; then dry_run=1; shift; fi\n'
     'run() { if (( dry_run )); then echo "would run: $*"; else "$@"; fi; }\n'),
    ('  mv "app.log.$n" "app.log.$((n + 1))"\n', '  run mv "app.log.$n" "app.log.$((n + 1))"\n'),
    ("mv app.log app.log.1\n: > app.log\n", "run mv app.log app.log.1\nrun truncate -s 0 app.log\n"),
    ('rm -f "app.log.$n"', 'run rm -f "app.log.$n"'),
]
for old, new in edits:
    assert old in text, old
    text = text.replace(old, new, 1)
# In a dry run nothing was shifted: prune what the shift would have pushed beyond the retention.
text = text.replace("for n in $(ls app.log.* | sed", "for n in $( (( dry_run )) && ls app.log.* | sed 's/^app\\.log\\.//' "
                    "| grep -E '^[0-9]+$' | awk '{print $1 + 1}' || ls app.log.* | sed", 1)
path.write_text(text, encoding="utf-8")

"""backup.sh archives awkward file names (spaces, a leading dash, glob characters, a hidden file, a subfolder)."""

import shutil
import tarfile
import tempfile
from pathlib import Path

from gradelib import Grader, task_vars

v = task_vars()
g = Grader()
g.unchanged(["tests", "logs"])
NAMES = [*v["export_files"], "-v", "star*.txt", "[draft] notes.md", ".hidden", "plain.txt", "sub dir/inner file.txt"]
tmp = Path(tempfile.mkdtemp(prefix="grade-backup-"))
try:
    src, dest = tmp / "exports", tmp / "backups"
    for name in NAMES:
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(f"content of {name}\n")
    out = g.command_ok(["env", "BACKUP_STAMP=20250101", "bash", "scripts/backup.sh", str(src), str(dest)],
                       what="backup.sh runs on a folder with awkward file names")
    archive = dest / f"{v['service']}-backup-20250101.tar.gz"
    g.check("it prints the archive's path", out is not None and str(archive) in out, f"printed {out!r}")
    members: dict[str, str] = {}
    try:
        with tarfile.open(archive) as tar:
            for member in tar.getmembers():
                if member.isfile():
                    handle = tar.extractfile(member)
                    members[member.name.removeprefix("./")] = handle.read().decode() if handle else ""
    except (OSError, tarfile.TarError) as exc:
        g.check("the archive can be read", False, str(exc))
    missing = [n for n in NAMES if members.get(n) != f"content of {n}\n"]
    g.check("every file is in the archive with its content, by its path in the folder", not missing,
            f"missing or wrong: {missing}")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
g.command_ok(["make", "test"], expect_output="0 failed")
g.finish()

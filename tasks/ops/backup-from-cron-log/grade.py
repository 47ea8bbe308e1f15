"""backup.sh archives awkward file names (spaces, a leading dash, glob characters, a hidden file, a subfolder).

The script runs apart from the grader on a folder the grader writes to the scratch folder; the archive comes
back as bytes and is read here (decompressed with a size cap, never extracted to disk)."""

import io
import random
import tarfile
import zlib

import ops_twins
from gradelib import Grader, task_vars

v = task_vars()
g = Grader()
rng = random.Random(f"backup-from-cron-log {v['seed']}")  # hidden values, the same for a seed
g.unchanged(["tests", "logs"])
NAMES = [*v["export_files"], "-v", "star*.txt", "[draft] notes.md", ".hidden", "plain.txt", "sub dir/inner file.txt"]
token = rng.randbytes(6).hex()
src, dest = f"{g.scratch}/exports", f"{g.scratch}/backups"
contents = {name: f"content of {name} {token}\n" for name in NAMES}
archive = f"{dest}/{v['service']}-backup-20250101.tar.gz"
UNPACKED_LIMIT = 8 << 20


def members(data: bytes) -> tuple[dict[str, str], str]:
    """The regular files of a .tar.gz, by path, or ({}, why it cannot be read)."""
    try:
        inflate = zlib.decompressobj(wbits=31)
        raw = inflate.decompress(data, UNPACKED_LIMIT)
        if inflate.unconsumed_tail:
            return {}, f"it unpacks to more than {UNPACKED_LIMIT} bytes"
        found = {}
        with tarfile.open(fileobj=io.BytesIO(raw), mode="r:") as tar:
            for member in tar:
                if member.isfile():
                    handle = tar.extractfile(member)
                    found[member.name.removeprefix("./")] = handle.read().decode("utf-8", "replace") if handle else ""
        return found, ""
    except Exception as exc:  # noqa: BLE001 - whatever the model's script wrote: an unreadable archive, a fail
        return {}, f"unreadable: {type(exc).__name__}: {str(exc)[:200]}"


out = g.command_ok(["bash", "scripts/backup.sh", src, dest], env={"BACKUP_STAMP": "20250101"},
                   files={f"{src}/{name}": text for name, text in contents.items()}, collect=[archive],
                   what="backup.sh runs on a folder with awkward file names")
if out is not None and g.last_run is not None:
    g.check("it prints the archive's path", archive in out, f"printed {out[-300:]!r}")
    data = g.last_run.files.get(archive)
    found, why = members(data) if data is not None else ({}, g.last_run.why.get(archive, "no archive"))
    missing = [name for name in NAMES if found.get(name) != contents[name]]
    g.check("every file is in the archive with its content, by its path in the folder", not missing,
            why or f"missing or wrong: {missing}")
ops_twins.tests_pass(g, ["make", "test"], expect_output="0 failed")  # a fresh copy, not the one backup.sh ran on
g.finish()

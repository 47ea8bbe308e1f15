"""The pristine commit of a freshly generated tree, written without a git process.

`git init`, `git add --all --force` and `git commit` cost three processes per trial (four with the
`git maintenance run --auto` a commit starts); for a tree of plain files, folders and symlinks the result
is fixed by git's formats alone: a blob and tree object per file and folder and one commit object (each
named by the SHA-1 of `<type> <size>\\0<bytes>`), written as one pack (version 2, undeltified) with its
index, `HEAD`, the branch ref, and an index (version 2) listing every file with its lstat data, so that
`git status` in the sandbox is clean. One pack, not loose objects: on a busy disk each file and folder
made and later removed costs a few milliseconds, and loose objects are two per object, in the sandbox and
again in the pristine store. `write_pristine` writes exactly that,
and returns None for any tree it does not handle the way `git add` would (a `.gitattributes`, which may
convert contents; a nested `.git`; a FIFO, socket or device; a name git treats specially): the caller then
runs git itself. The commit id is the one `git commit` makes of the same tree (tests/test_gitwrite.py checks
it, and `git fsck`, against real git).

Only the harness runs this, on a tree its own generator just wrote, before any agent: nothing here reads a
file of the model's. Standard library only.
"""

from __future__ import annotations

import hashlib
import os
import stat
import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path

_INDEX_SIGNATURE = b"DIRC"
_INDEX_VERSION = 2
_ZERO = "0" * 40


@dataclass
class Pristine:
    """What was committed: the commit id, and every file as {path: (mode, blob id, size)} (what
    `git ls-tree -r -l` would list), with the bytes of each `.gitignore` (for gitsafe's ignore rules)."""

    commit: str
    entries: dict[str, tuple[str, str, int]] = field(default_factory=dict)
    gitignores: dict[str, bytes] = field(default_factory=dict)


class _Unsupported(Exception):
    """The tree holds something only git itself should commit."""


_SPECIAL_NAMES = frozenset({".gitattributes", ".gitmodules"})


def _plain_name(name: str) -> bool:
    """A name `git add` stores as a plain file or folder: not `.git` or a look-alike of it, no attributes or
    submodules file (they change what git stores), nothing git's path checks might refuse."""
    low = name.lower()
    return not (low.rstrip(" .") == ".git" or low in _SPECIAL_NAMES or low.startswith("git~") or "\\" in name
                or ":" in name or name.endswith((" ", ".")) or not name.isprintable())


_PACK_TYPES = {b"commit": 1, b"tree": 2, b"blob": 3}
_PACK_LIMIT = 1 << 30
"""A tree whose objects pass this many bytes is left to git (they are held in memory to be packed)."""


class _Writer:
    """Collects the objects, then writes them as one pack (and its index): two files in the repository
    and two in the store, where loose objects would be a file and a fan-out folder each, twice."""

    def __init__(self) -> None:
        self.objects: dict[str, tuple[bytes, bytes]] = {}
        self.size = 0

    def store(self, kind: bytes, data: bytes) -> str:
        oid = hashlib.sha1(b"%s %d\0%s" % (kind, len(data), data), usedforsecurity=False).hexdigest()
        if oid not in self.objects:
            self.size += len(data)
            if self.size > _PACK_LIMIT:
                raise _Unsupported("too large to pack in memory")
            self.objects[oid] = (kind, data)
        return oid

    def pack(self) -> tuple[str, bytes, bytes]:
        """(name, pack, index): a version 2 pack of every object, undeltified, and its version 2 index."""
        parts = [struct.pack(">4sII", b"PACK", 2, len(self.objects))]
        offset = 12
        rows: list[tuple[bytes, int, int]] = []  # (binary id, crc32 of the entry, offset)
        for oid, (kind, data) in self.objects.items():
            size = len(data)
            byte = (_PACK_TYPES[kind] << 4) | (size & 0x0F)
            size >>= 4
            head = bytearray()
            while size:
                head.append(byte | 0x80)
                byte = size & 0x7F
                size >>= 7
            head.append(byte)
            entry = bytes(head) + zlib.compress(data, 1)
            rows.append((bytes.fromhex(oid), zlib.crc32(entry), offset))
            parts.append(entry)
            offset += len(entry)
        if offset >= 1 << 31:  # would need the index's 64-bit offsets
            raise _Unsupported("pack too large")
        body = b"".join(parts)
        checksum = hashlib.sha1(body, usedforsecurity=False).digest()
        rows.sort()
        fanout, count = [], 0
        by_first = [0] * 256
        for oid_bytes, _, _ in rows:
            by_first[oid_bytes[0]] += 1
        for n in by_first:
            count += n
            fanout.append(count)
        index = b"".join([b"\xfftOc", struct.pack(">I", 2), struct.pack(">256I", *fanout),
                          *(r[0] for r in rows), *(struct.pack(">I", r[1]) for r in rows),
                          *(struct.pack(">I", r[2]) for r in rows), checksum])
        index += hashlib.sha1(index, usedforsecurity=False).digest()
        return f"pack-{checksum.hex()}", body + checksum, index

    def write(self, folders: list[Path]) -> None:
        """The pack and its index into each objects folder's pack/ (read-only, as git leaves them)."""
        name, pack, index = self.pack()
        for objects in folders:
            (objects / "pack").mkdir(parents=True, exist_ok=True)
            for suffix, data in ((".pack", pack), (".idx", index)):  # the index last: git looks for it first
                fd = os.open(objects / "pack" / (name + suffix), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC,
                             0o444)
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)


def _tree(writer: _Writer, root: Path, rel: str, index: list[tuple[bytes, os.stat_result, str, str]],
          found: Pristine) -> str | None:
    """The tree object of folder `rel` (None when it holds no file: git stores no empty folder)."""
    rows: list[tuple[bytes, bytes, str, str]] = []  # (sort key, name, mode, object id)
    with os.scandir(root / rel if rel else root) as it:
        listing = sorted(it, key=lambda e: e.name)
    for entry in listing:
        name = entry.name
        if not rel and name == ".git":  # the repository being written
            continue
        if not _plain_name(name):
            raise _Unsupported(name)
        path = f"{rel}/{name}" if rel else name
        st = entry.stat(follow_symlinks=False)
        bname = os.fsencode(name)
        if stat.S_ISDIR(st.st_mode):
            sub = _tree(writer, root, path, index, found)
            if sub is not None:
                rows.append((bname + b"/", bname, "40000", sub))
            continue
        if stat.S_ISLNK(st.st_mode):
            mode, data = "120000", os.fsencode(os.readlink(root / path))
        elif stat.S_ISREG(st.st_mode):
            mode = "100755" if st.st_mode & stat.S_IXUSR else "100644"
            data = (root / path).read_bytes()
            if name == ".gitignore":
                found.gitignores[path] = data
        else:
            raise _Unsupported(path)
        oid = writer.store(b"blob", data)
        found.entries[path] = (mode, oid, len(data))
        index.append((os.fsencode(path), st, mode, oid))
        rows.append((bname, bname, mode, oid))
    if not rows:
        return None
    rows.sort(key=lambda r: r[0])
    body = b"".join(b"%s %s\0%s" % (mode.encode(), name, bytes.fromhex(oid)) for _, name, mode, oid in rows)
    return writer.store(b"tree", body)


def _index(entries: list[tuple[bytes, os.stat_result, str, str]]) -> bytes:
    """An index (version 2) of `entries`, sorted by path as git sorts them."""
    out = [struct.pack(">4sII", _INDEX_SIGNATURE, _INDEX_VERSION, len(entries))]
    for path, st, mode, oid in sorted(entries, key=lambda e: e[0]):
        fields = (int(st.st_ctime), st.st_ctime_ns % 1_000_000_000, int(st.st_mtime), st.st_mtime_ns % 1_000_000_000,
                  st.st_dev, st.st_ino, int(mode, 8), st.st_uid, st.st_gid, st.st_size)
        head = struct.pack(">10I", *(v & 0xFFFFFFFF for v in fields)) + bytes.fromhex(oid)
        head += struct.pack(">H", min(len(path), 0xFFF))
        length = len(head) + len(path)
        out.append(head + path + b"\0" * (8 - length % 8))  # 1 to 8 NULs: the entry ends on 8 bytes
    data = b"".join(out)
    return data + hashlib.sha1(data, usedforsecurity=False).digest()


def write_pristine(root: Path, *, branch: str, ident: str, when: str, message: str, config: str,
                   mirror: Path | None = None) -> Pristine | None:
    """Make the folder `root` (the generated tree, no `.git` yet) a repository on `branch` with one commit of
    its whole tree (author and committer `ident`, e.g. 'Name <mail>'; `when` as '<epoch> <+zone>'), its
    index and `config` (the text of .git/config); every object is written into the objects folder `mirror`
    too (the pristine store's, not made yet: no copy is read back). None, with nothing left behind, when the
    tree needs git itself (see the module's docstring)."""
    git_dir = root / ".git"
    if git_dir.exists() or git_dir.is_symlink():
        return None
    git_dir.mkdir()
    try:
        for sub in ("objects/info", "objects/pack", "refs/heads", "refs/tags", "info", "logs/refs/heads"):
            (git_dir / sub).mkdir(parents=True)
        found = Pristine(commit="")
        index: list[tuple[bytes, os.stat_result, str, str]] = []
        writer = _Writer()
        tree = _tree(writer, root, "", index, found)
        if tree is None:  # no file at all (git would refuse it too)
            raise _Unsupported("")
        body = f"tree {tree}\nauthor {ident} {when}\ncommitter {ident} {when}\n\n{message}\n"
        found.commit = writer.store(b"commit", body.encode("utf-8"))
        writer.write([git_dir / "objects", *([mirror] if mirror is not None else [])])
        (git_dir / "index").write_bytes(_index(index))
        (git_dir / "config").write_text(config, encoding="utf-8")
        (git_dir / "HEAD").write_text(f"ref: refs/heads/{branch}\n", encoding="utf-8")
        (git_dir / "description").write_text("Unnamed repository; edit this file 'description' to name the "
                                             "repository.\n", encoding="utf-8")
        (git_dir / "info" / "exclude").write_text("", encoding="utf-8")
        (git_dir / "refs" / "heads" / branch).write_text(found.commit + "\n", encoding="utf-8")
        log = f"{_ZERO} {found.commit} {ident} {when}\tcommit (initial): {message}\n"
        (git_dir / "logs" / "HEAD").write_text(log, encoding="utf-8")
        (git_dir / "logs" / "refs" / "heads" / branch).write_text(log, encoding="utf-8")
        return found
    except _Unsupported:
        import shutil

        shutil.rmtree(git_dir)
        if mirror is not None:
            shutil.rmtree(mirror, ignore_errors=True)
        return None

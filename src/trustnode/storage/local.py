"""The embedded blob store: IPFS blocks on the local disk, under the node's data directory.

Blocks are kept one file each, named by their CID exactly as a daemon names them, so a blob
added here has the same CID as on IPFS and can be pushed there later without changing identity.
Writes are atomic (temp file + rename, fsync by default) so a crash never leaves a block
that does not match its name; every read re-hashes the block.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from trustnode.storage.base import BlobStore
from trustnode.storage.cids import cid_binary, cid_string, verify_block
from trustnode.storage.errors import BlobNotFoundError, BlobTooLargeError
from trustnode.storage.unixfs import child_links, declared_size, file_chunks, import_bytes, import_chunks


class LocalStore(BlobStore):
    """Content-addressed store in `root` (blocks/, pins/), CID-compatible with Kubo and js-ipfs."""

    def __init__(self, root: Path | str, *, fsync: bool = True, max_fetch_bytes: int | None = None) -> None:
        self.root = Path(root)
        self.fsync = fsync
        self.max_fetch_bytes = max_fetch_bytes
        self._blocks = self.root / "blocks"
        self._pins = self.root / "pins"
        # Blocks may be plaintext (the embedded store of a node without a daemon): owner only.
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._blocks.mkdir(mode=0o700, exist_ok=True)
        self._pins.mkdir(mode=0o700, exist_ok=True)
        self._lock_path = self.root / ".lock"
        self._lock_path.touch(mode=0o600, exist_ok=True)

    def __repr__(self) -> str:
        return f"LocalStore({str(self.root)!r})"

    # -- paths and locking ------------------------------------------------------------------

    def _block_path(self, cid: str) -> Path:
        # Shard like flatfs (next-to-last two characters) so no directory grows huge.
        return self._blocks / cid[-3:-1] / cid

    @contextlib.contextmanager
    def _locked(self, exclusive: bool) -> Iterator[None]:
        """Writers share the lock; `gc` takes it exclusively so it never deletes a block being added."""
        with open(self._lock_path, "rb") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def _write_atomic(self, path: Path, data: bytes) -> None:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                if self.fsync:
                    fh.flush()
                    os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise

    # -- BlobStore --------------------------------------------------------------------------

    def add(self, data: bytes, *, pin: bool = True) -> str:
        if not isinstance(data, bytes | bytearray | memoryview):
            raise TypeError(f"add() takes bytes, not {type(data).__name__}")
        imported = import_bytes(bytes(data))
        with self._locked(exclusive=False):
            # Children first, root last: a present root means a complete DAG.
            for cid, block in imported.blocks:
                path = self._block_path(cid)
                if not path.exists():
                    self._write_atomic(path, block)
            if pin:
                self._write_atomic(self._pins / imported.cid, b"")
        return imported.cid

    def add_file(self, path: Path | str, *, pin: bool = True) -> str:
        """Stream a file in, block by block (constant memory), with the same CID as `add`."""

        def write(cid: str, block: bytes) -> None:
            dest = self._block_path(cid)
            if not dest.exists():
                self._write_atomic(dest, block)

        with open(path, "rb") as fh, self._locked(exclusive=False):
            cid, _size = import_chunks(file_chunks(fh), write)
            if pin:
                self._write_atomic(self._pins / cid, b"")
        return cid

    def put_block(self, cid: str, block: bytes) -> str:
        """Store one block fetched elsewhere after checking it matches `cid` (used to mirror DAGs)."""
        c = cid_binary(cid)
        verify_block(c, block)
        name = cid_string(c)
        with self._locked(exclusive=False):
            path = self._block_path(name)
            if not path.exists():
                self._write_atomic(path, block)
        return name

    def get_block(self, cid: str | bytes) -> bytes:
        """One verified block; BlobNotFoundError if it is not here."""
        c = cid_binary(cid)
        name = cid_string(c)
        try:
            block = self._block_path(name).read_bytes()
        except FileNotFoundError:
            raise BlobNotFoundError(f"{name} is not in the local store {self.root}") from None
        verify_block(c, block)
        return block

    def cat(self, cid: str, *, max_bytes: int | None = None) -> bytes:
        root = cid_binary(cid)
        limit = self.max_fetch_bytes if max_bytes is None else max_bytes
        if limit is not None:
            size = declared_size(root, self.get_block(root))
            if size > limit:
                raise BlobTooLargeError(
                    f"{cid_string(root)} declares {size:,} bytes, more than the {limit:,} allowed",
                    cid=cid_string(root),
                    size=size,
                    limit=limit,
                )
        out = bytearray()
        stack: list[bytes] = [root]
        # Depth-first, left to right: the order the file's bytes were chunked in.
        while stack:
            c = stack.pop()
            try:
                inline, children = child_links(c, self.get_block(c))
            except BlobNotFoundError:
                if c == root:
                    raise
                raise BlobNotFoundError(
                    f"{cid_string(root)} is incomplete in {self.root}: block {cid_string(c)} is missing"
                ) from None
            out += inline
            stack.extend(reversed(children))
        return bytes(out)

    def pin(self, cid: str) -> None:
        norm = cid_string(cid_binary(cid))
        self.cat(norm)  # proves the whole DAG is present and intact before promising to keep it
        with self._locked(exclusive=False):
            self._write_atomic(self._pins / norm, b"")

    def unpin(self, cid: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            (self._pins / cid_string(cid_binary(cid))).unlink()

    def pins(self) -> list[str]:
        return sorted(p.name for p in self._pins.iterdir() if not p.name.startswith("."))

    def has(self, cid: str) -> bool:
        return self._block_path(cid_string(cid_binary(cid))).is_file()

    # -- maintenance ------------------------------------------------------------------------

    def _reachable(self, roots: list[str]) -> set[str]:
        seen: set[str] = set()
        stack = [cid_binary(r) for r in roots]
        while stack:
            c = stack.pop()
            key = cid_string(c)
            if key in seen:
                continue
            seen.add(key)
            try:
                _inline, children = child_links(c, self.get_block(c))
            except BlobNotFoundError:
                continue
            stack.extend(children)
        return seen

    def gc(self) -> int:
        """Delete blocks no pin reaches; returns how many were removed."""
        with self._locked(exclusive=True):
            keep = self._reachable(self.pins())
            removed = 0
            for path in self._blocks.glob("*/*"):
                if path.name.startswith(".tmp-") or path.name not in keep:
                    path.unlink()
                    removed += 1
            return removed

    def disk_usage(self) -> int:
        """Bytes held in block files."""
        return sum(p.stat().st_size for p in self._blocks.glob("*/*"))

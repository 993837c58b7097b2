"""The blob store interface shared by the embedded store, the Kubo RPC client and the spool wrapper."""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path

#: Most bytes one `cat` returns unless the caller asks otherwise: CIDs come from the chain and a
#: provider chooses them, so a read is bounded before it starts (segments and bundles are small).
DEFAULT_MAX_FETCH_BYTES = 16 * 1024 * 1024


class BlobStore(ABC):
    """Content-addressed bytes: `add` returns the CIDv1 (base32) a Kubo daemon would return.

    Every implementation accepts any CID spelling (v0, base58, base32) and returns the
    canonical base32 CIDv1 strings, so callers can compare CIDs as strings.
    """

    @abstractmethod
    def add(self, data: bytes, *, pin: bool = True) -> str:
        """Store `data`, optionally pin it, and return its CID."""

    def add_file(self, path: Path | str, *, pin: bool = True) -> str:
        """Store a file's content; stores that can stream override this to use constant memory."""
        return self.add(Path(path).read_bytes(), pin=pin)

    @abstractmethod
    def cat(self, cid: str) -> bytes:
        """The bytes of `cid`; BlobNotFoundError if absent, BlobIntegrityError if they do not match,
        BlobTooLargeError if it is larger than the store's fetch limit (stores that fetch from
        elsewhere have one; it is set when the store is built, and a `max_bytes=` keyword may
        lower or raise it per call)."""

    @abstractmethod
    def pin(self, cid: str) -> None:
        """Keep `cid` (and everything below it) from garbage collection; BlobNotFoundError if absent."""

    @abstractmethod
    def unpin(self, cid: str) -> None:
        """Release a pin; unpinning a CID that is not pinned is a no-op."""

    @abstractmethod
    def pins(self) -> list[str]:
        """Every recursively pinned CID, sorted."""

    @abstractmethod
    def has(self, cid: str) -> bool:
        """Whether the root block of `cid` is held by this store (no network lookup)."""

    def close(self) -> None:  # noqa: B027 - optional hook, most stores hold nothing to release
        """Release connections; the default holds none."""

    def __enter__(self) -> BlobStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

"""Storage errors: each names what failed and what the caller can do about it."""

from __future__ import annotations


class StorageError(Exception):
    """Base class of every storage failure."""


class InvalidCIDError(StorageError, ValueError):
    """A string that is not a CID was given where a CID is required."""


class StorageUnavailableError(StorageError):
    """The blob service could not be reached (after the bounded retries); nothing was changed remotely."""


class BlobNotFoundError(StorageError, KeyError):
    """The blob is not in the store (or could not be found within the lookup timeout)."""

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0]) if self.args else "blob not found"


class BlobIntegrityError(StorageError):
    """Bytes do not match their CID: corrupt storage, a tampered response or a foreign import layout."""


class BlobTooLargeError(StorageError):
    """The blob declares (or delivers) more bytes than the caller accepts; nothing more was read."""

    def __init__(self, message: str, *, cid: str = "", size: int | None = None, limit: int = 0) -> None:
        super().__init__(message)
        self.cid = cid
        self.size = size
        self.limit = limit


class RemotePinPendingError(StorageUnavailableError):
    """The blob is safe in the local spool under `cid` but not yet pinned remotely; `flush()` pushes it."""

    def __init__(self, message: str, *, cid: str) -> None:
        super().__init__(message)
        self.cid = cid

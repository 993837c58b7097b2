"""Blob storage entry point: the BlobStore interface, its implementations and `store_from_settings`.

- LocalStore: the embedded default (no daemon), CID-compatible with IPFS.
- KuboStore: any Kubo-compatible `/api/v0` RPC (Kubo, js-ipfs).
- ResilientStore: KuboStore in front of a local spool, so an outage loses nothing.
"""

from __future__ import annotations

from pathlib import Path

from trustnode.config import Settings
from trustnode.storage.base import BlobStore
from trustnode.storage.cids import normalize_cid
from trustnode.storage.errors import (
    BlobIntegrityError,
    BlobNotFoundError,
    BlobTooLargeError,
    InvalidCIDError,
    RemotePinPendingError,
    StorageError,
    StorageUnavailableError,
)
from trustnode.storage.kubo import KuboStore
from trustnode.storage.local import LocalStore
from trustnode.storage.resilient import FlushResult, ResilientStore
from trustnode.storage.unixfs import compute_cid

__all__ = [
    "BlobIntegrityError",
    "BlobNotFoundError",
    "BlobTooLargeError",
    "BlobStore",
    "FlushResult",
    "InvalidCIDError",
    "KuboStore",
    "LocalStore",
    "RemotePinPendingError",
    "ResilientStore",
    "StorageError",
    "StorageUnavailableError",
    "compute_cid",
    "normalize_cid",
    "store_from_settings",
]


def local_store_dir(settings: Settings) -> Path:
    """Where the embedded store lives when no daemon is configured."""
    return settings.data_dir / "blobs"


def spool_dir(settings: Settings) -> Path:
    """Where blobs wait for the daemon (write-behind spool) when one is configured."""
    return settings.data_dir / "ipfs-spool"


def store_from_settings(
    settings: Settings, *, durable: bool = True, max_fetch_bytes: int | None = None
) -> BlobStore:
    """The node's blob store: the daemon at `ipfs.api_url` (behind a local spool unless
    `durable=False`), else the embedded LocalStore under `data_dir/blobs`.

    Reads are capped at `max_fetch_bytes` (default: `ipfs.max_fetch_bytes`), and failed reads of
    a CID are remembered for a while (see `storage.failures`).
    """
    ipfs = settings.ipfs
    limit = ipfs.max_fetch_bytes if max_fetch_bytes is None else max_fetch_bytes
    if not ipfs.api_url:
        return LocalStore(local_store_dir(settings), max_fetch_bytes=limit)
    kubo = KuboStore(ipfs.api_url, timeout_s=ipfs.timeout_s, retries=ipfs.retries, max_fetch_bytes=limit)
    if not durable:
        return kubo
    return ResilientStore(kubo, LocalStore(spool_dir(settings)))

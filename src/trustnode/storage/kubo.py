"""A blob store over any Kubo-compatible `/api/v0` RPC (Kubo, js-ipfs), spoken with httpx.

Transport failures and 502/503/504 are retried a bounded number of times with exponential
backoff, then surface as StorageUnavailableError naming the URL and the last cause. Every
add is checked against the CID computed locally (so a daemon with other import defaults is
caught, not silently trusted), and every cat is re-verified against the requested CID.

A cat is bounded, because CIDs come from the chain and their providers choose them: the root
block is read first (itself capped) and the size it declares is checked against the limit
before anything else is fetched; the rest is streamed, never past the declared size, and
verified while it arrives. Failures that belong to the CID (missing, too large, corrupt)
are remembered for a while, so a bad CID is not fetched again on every request.
"""

from __future__ import annotations

import io
import json
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, NoReturn, cast

import httpx

from trustnode.storage.base import DEFAULT_MAX_FETCH_BYTES, BlobStore
from trustnode.storage.cids import RAW, cid_binary, cid_codec, normalize_cid, verify_block
from trustnode.storage.errors import (
    BlobIntegrityError,
    BlobNotFoundError,
    BlobTooLargeError,
    StorageError,
    StorageUnavailableError,
)
from trustnode.storage.failures import FailureCache
from trustnode.storage.unixfs import CHUNK_SIZE, compute_cid, compute_file_cid, declared_size, import_chunks

#: No IPFS block is larger than this (Kubo refuses blocks over 2 MiB; leave room).
MAX_BLOCK_BYTES = 4 * 1024 * 1024
_READ_BYTES = 64 * 1024

_RETRY_STATUS = {502, 503, 504}
_NOT_FOUND = re.compile(r"timed out|deadline exceeded|not found|could not find|no link named", re.I)
_NOT_PINNED = re.compile(r"not pinned", re.I)


def api_base(api_url: str) -> str:
    """`http://host:port/api/v0` from an http URL (with or without the suffix) or a multiaddr."""
    url = api_url.strip()
    m = re.fullmatch(r"/(ip4|ip6|dns|dns4|dns6)/([^/]+)/tcp/(\d+)(?:/(https?))?/?", url)
    if m:
        host = f"[{m.group(2)}]" if m.group(1) == "ip6" else m.group(2)
        url = f"{m.group(4) or 'http'}://{host}:{m.group(3)}"
    if not re.match(r"https?://", url):
        raise ValueError(
            f"IPFS API URL must be http(s)://host:port or a /ip4/.../tcp/... multiaddr: {api_url!r}"
        )
    url = url.rstrip("/")
    return url if url.endswith("/api/v0") else url + "/api/v0"


def _read_capped(
    resp: httpx.Response, cap: int, *, what: str = "the answer", truncate: bool = False
) -> bytes:
    """Read a streamed response body and close it; past `cap` bytes refuse (or, with
    `truncate`, keep the first `cap`: enough to name an error)."""
    out = bytearray()
    try:
        for part in resp.iter_raw(_READ_BYTES):
            out += part
            if len(out) > cap:
                if truncate:
                    return bytes(out[:cap])
                raise BlobTooLargeError(f"{what} exceeds {cap:,} bytes", size=None, limit=cap)
    except httpx.TransportError as exc:
        raise StorageUnavailableError(f"the IPFS daemon broke off {what}: {exc}") from exc
    finally:
        resp.close()
    return bytes(out)


def _slices(view: memoryview, size: int) -> Iterator[bytes]:
    """CHUNK_SIZE windows of `view`, each released once used (so the buffer can be handed out)."""
    for offset in range(0, size, CHUNK_SIZE):
        window = view[offset : offset + CHUNK_SIZE]
        try:
            yield cast(bytes, window)
        finally:
            window.release()


def _duration(seconds: float) -> str:
    return f"{max(1, int(seconds * 1000))}ms"


class KuboStore(BlobStore):
    """BlobStore on a daemon's RPC; `timeout_s` bounds each request, `retries` the extra attempts."""

    def __init__(
        self,
        api_url: str,
        timeout_s: float = 30.0,
        retries: int = 3,
        *,
        backoff_s: float = 0.25,
        lookup_timeout_s: float = 10.0,
        has_timeout_s: float = 1.0,
        verify: bool = True,
        max_fetch_bytes: int = DEFAULT_MAX_FETCH_BYTES,
        failures: FailureCache | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if retries < 0 or timeout_s <= 0:
            raise ValueError("retries must be >= 0 and timeout_s > 0")
        self.api_url = api_url
        self.base = api_base(api_url)
        self.timeout_s = timeout_s
        self.retries = retries
        self.backoff_s = backoff_s
        self.lookup_timeout_s = min(lookup_timeout_s, timeout_s)
        self.has_timeout_s = has_timeout_s
        self.verify = verify
        self.max_fetch_bytes = max_fetch_bytes
        self.failures = failures if failures is not None else FailureCache()
        self._sleep = sleep
        self._client = httpx.Client(timeout=httpx.Timeout(timeout_s, connect=min(5.0, timeout_s)))

    def __repr__(self) -> str:
        return f"KuboStore({self.base!r})"

    def close(self) -> None:
        self._client.close()

    # -- transport ------------------------------------------------------------------------

    def _request(
        self,
        command: str,
        params: dict[str, Any],
        *,
        files: Any = None,
        rewind: BinaryIO | None = None,
        stream: bool = False,
    ) -> httpx.Response:
        """POST one RPC command with bounded retries; map failures to storage errors.

        With `stream=True` the body of a 200 answer is left unread (the caller reads it, bounded,
        and closes the response); error bodies are read, capped, to name the failure.
        """
        url = f"{self.base}/{command}"
        last: str = ""
        for attempt in range(self.retries + 1):
            if attempt:
                self._sleep(min(self.backoff_s * 2 ** (attempt - 1), 5.0))
                if rewind is not None:
                    rewind.seek(0)
            try:
                request = self._client.build_request("POST", url, params=params, files=files)
                resp = self._client.send(request, stream=stream)
            except httpx.TransportError as exc:
                last = f"{type(exc).__name__}: {exc}"
                continue
            if resp.status_code == 200:
                return resp
            body = _read_capped(resp, 64 * 1024, truncate=True) if stream else resp.content
            if resp.status_code in _RETRY_STATUS:
                last = f"HTTP {resp.status_code}"
                continue
            self._raise_for(command, params, resp.status_code, body)
        raise StorageUnavailableError(
            f"IPFS API {self.base} unreachable for {command} after {self.retries + 1} attempts: {last}"
        )

    def _raise_for(self, command: str, params: dict[str, Any], status: int, body: bytes) -> NoReturn:
        text = body.decode("utf-8", "replace")
        try:
            message = str(json.loads(text).get("Message", text))
        except (ValueError, AttributeError):
            message = text[:500]
        arg = params.get("arg", "")
        if _NOT_FOUND.search(message):
            raise BlobNotFoundError(f"{arg} not found via {self.base} ({command}: {message})")
        raise StorageError(f"IPFS {command} {arg} failed (HTTP {status}): {message}")

    @staticmethod
    def _json_lines(resp: httpx.Response) -> list[dict[str, Any]]:
        """Parse a response that may be one JSON object or newline-delimited JSON."""
        out: list[dict[str, Any]] = []
        for line in resp.text.splitlines():
            line = line.strip()
            if line:
                try:
                    out.append(json.loads(line))
                except ValueError as exc:
                    raise StorageError(f"unparseable IPFS response line: {line[:200]!r}") from exc
        return out

    # -- BlobStore --------------------------------------------------------------------------

    def version(self) -> dict[str, Any]:
        """The daemon's `/version` answer (also a cheap liveness check)."""
        return dict(self._request("version", {}).json())

    def _add_params(self, pin: bool) -> dict[str, str]:
        return {
            "cid-version": "1",
            "raw-leaves": "true",
            "chunker": f"size-{CHUNK_SIZE}",
            "hash": "sha2-256",
            "pin": "true" if pin else "false",
            "cid-base": "base32",
            "progress": "false",
        }

    def _added_cid(self, resp: httpx.Response, expected: str | None) -> str:
        entries = [e for e in self._json_lines(resp) if "Hash" in e]
        if not entries:
            raise StorageError(f"IPFS add returned no hash: {resp.text[:300]!r}")
        cid = normalize_cid(str(entries[-1]["Hash"]))
        if expected is not None and cid != expected:
            raise BlobIntegrityError(
                f"daemon {self.base} returned CID {cid} but these bytes import to {expected}: "
                "its import layout differs (need CIDv1, raw leaves, 256 KiB chunks, balanced)"
            )
        return cid

    def add(self, data: bytes, *, pin: bool = True) -> str:
        expected = compute_cid(bytes(data)) if self.verify else None
        files = {"file": ("blob", bytes(data), "application/octet-stream")}
        return self._added_cid(self._request("add", self._add_params(pin), files=files), expected)

    def add_file(self, path: Path | str, *, pin: bool = True) -> str:
        """Stream a file to the daemon (httpx uploads file objects in chunks); re-opened per retry."""
        expected = compute_file_cid(path) if self.verify else None
        with open(path, "rb") as fh:
            files = {"file": (Path(path).name, fh, "application/octet-stream")}
            resp = self._request("add", self._add_params(pin), files=files, rewind=fh)
        return self._added_cid(resp, expected)

    def cat(self, cid: str, *, max_bytes: int | None = None) -> bytes:
        """The verified bytes of `cid`, at most `max_bytes` (default: `max_fetch_bytes`) of them."""
        norm = normalize_cid(cid)
        self.failures.check(norm)
        try:
            return self._cat(norm, self.max_fetch_bytes if max_bytes is None else max_bytes)
        except (BlobNotFoundError, BlobTooLargeError, BlobIntegrityError) as exc:
            self.failures.remember(norm, exc)
            raise

    def _root_block(self, norm: str) -> bytes:
        """The root block of `norm`, read with a cap and checked against the CID."""
        params = {"arg": norm, "timeout": _duration(self.lookup_timeout_s)}
        resp = self._request("block/get", params, stream=True)
        block = _read_capped(resp, MAX_BLOCK_BYTES, what=f"the root block of {norm}")
        try:
            verify_block(cid_binary(norm), block)
        except BlobIntegrityError as exc:
            raise BlobIntegrityError(
                f"the daemon returned a root block for {norm} that does not match it: truncated or "
                f"tampered response ({exc})"
            ) from exc
        return block

    def _cat(self, norm: str, limit: int) -> bytes:
        c = cid_binary(norm)
        root = self._root_block(norm)
        size = declared_size(c, root)
        if size > limit:
            raise BlobTooLargeError(
                f"{norm} declares {size:,} bytes, more than the {limit:,} this node fetches",
                cid=norm,
                size=size,
                limit=limit,
            )
        if cid_codec(c) == RAW:
            return root
        resp = self._request("cat", {"arg": norm, "timeout": _duration(self.lookup_timeout_s)}, stream=True)
        # BytesIO keeps one bytes object that getvalue() hands out without a copy: peak ~ size.
        out = io.BytesIO()
        try:
            for part in resp.iter_raw(_READ_BYTES):
                if out.tell() + len(part) > size:
                    raise BlobIntegrityError(
                        f"the daemon sent more than the {size:,} bytes {norm} declares: tampered response"
                    )
                out.write(part)
        except httpx.TransportError as exc:
            raise StorageUnavailableError(f"IPFS API {self.base} broke off cat {norm}: {exc}") from exc
        finally:
            resp.close()
        if out.tell() != size:
            raise BlobIntegrityError(f"{norm}: {out.tell():,} of {size:,} bytes arrived: truncated response")
        if self.verify:
            with out.getbuffer() as view:  # re-import in place with the daemons' layout, no copies
                got, _ = import_chunks(_slices(view, size), lambda _c, _b: None)
            if got != norm:
                raise BlobIntegrityError(
                    f"bytes returned for {norm} import to {got}: truncated or tampered response"
                )
        return out.getvalue()

    def pin(self, cid: str) -> None:
        norm = normalize_cid(cid)
        self._request(
            "pin/add", {"arg": norm, "recursive": "true", "timeout": _duration(self.lookup_timeout_s)}
        )

    def unpin(self, cid: str) -> None:
        norm = normalize_cid(cid)
        try:
            self._request("pin/rm", {"arg": norm, "recursive": "true"})
        except StorageError as exc:
            if not _NOT_PINNED.search(str(exc)):
                raise

    def pins(self) -> list[str]:
        resp = self._request("pin/ls", {"type": "recursive", "cid-base": "base32"})
        keys: set[str] = set()
        for entry in self._json_lines(resp):
            if "Keys" in entry:
                keys.update(entry["Keys"])
            elif "Cid" in entry:  # Kubo's streaming form
                keys.add(str(entry["Cid"]))
        return sorted(normalize_cid(k) for k in keys)

    def has(self, cid: str) -> bool:
        norm = normalize_cid(cid)
        try:
            self._request(
                "block/stat", {"arg": norm, "offline": "true", "timeout": _duration(self.has_timeout_s)}
            )
        except BlobNotFoundError:
            return False
        return True

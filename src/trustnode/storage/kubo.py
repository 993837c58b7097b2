"""A blob store over any Kubo-compatible `/api/v0` RPC (Kubo, js-ipfs), spoken with httpx.

Transport failures and 502/503/504 are retried a bounded number of times with exponential
backoff, then surface as StorageUnavailableError naming the URL and the last cause. Every
add is checked against the CID computed locally (so a daemon with other import defaults is
caught, not silently trusted), and every cat is re-verified against the requested CID.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import httpx

from trustnode.storage.base import BlobStore
from trustnode.storage.errors import (
    BlobIntegrityError,
    BlobNotFoundError,
    StorageError,
    StorageUnavailableError,
)
from trustnode.storage.unixfs import (
    CHUNK_SIZE,
    RAW,
    cid_binary,
    cid_codec,
    compute_cid,
    compute_file_cid,
    import_bytes,
    normalize_cid,
    verify_block,
)

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
        self._sleep = sleep
        self._client = httpx.Client(timeout=httpx.Timeout(timeout_s, connect=min(5.0, timeout_s)))

    def __repr__(self) -> str:
        return f"KuboStore({self.base!r})"

    def close(self) -> None:
        self._client.close()

    # -- transport ------------------------------------------------------------------------

    def _request(
        self, command: str, params: dict[str, Any], *, files: Any = None, rewind: BinaryIO | None = None
    ) -> httpx.Response:
        """POST one RPC command with bounded retries; map failures to storage errors."""
        url = f"{self.base}/{command}"
        last: str = ""
        for attempt in range(self.retries + 1):
            if attempt:
                self._sleep(min(self.backoff_s * 2 ** (attempt - 1), 5.0))
                if rewind is not None:
                    rewind.seek(0)
            try:
                resp = self._client.post(url, params=params, files=files)
            except httpx.TransportError as exc:
                last = f"{type(exc).__name__}: {exc}"
                continue
            if resp.status_code in _RETRY_STATUS:
                last = f"HTTP {resp.status_code}"
                continue
            if resp.status_code != 200:
                self._raise_for(command, params, resp)
            return resp
        raise StorageUnavailableError(
            f"IPFS API {self.base} unreachable for {command} after {self.retries + 1} attempts: {last}"
        )

    def _raise_for(self, command: str, params: dict[str, Any], resp: httpx.Response) -> None:
        try:
            message = str(resp.json().get("Message", resp.text))
        except (ValueError, AttributeError):
            message = resp.text[:500]
        arg = params.get("arg", "")
        if _NOT_FOUND.search(message):
            raise BlobNotFoundError(f"{arg} not found via {self.base} ({command}: {message})")
        raise StorageError(f"IPFS {command} {arg} failed (HTTP {resp.status_code}): {message}")

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

    def cat(self, cid: str) -> bytes:
        norm = normalize_cid(cid)
        resp = self._request("cat", {"arg": norm, "timeout": _duration(self.lookup_timeout_s)})
        data = resp.content
        if self.verify:
            self._check(norm, data)
        return data

    def _check(self, cid: str, data: bytes) -> None:
        """Raw CIDs are checked exactly; dag-pb ones by re-importing with our (the daemons') layout."""
        c = cid_binary(cid)
        if cid_codec(c) == RAW:
            verify_block(c, data)
            return
        got = import_bytes(data).cid
        if got != cid:
            raise BlobIntegrityError(
                f"bytes returned for {cid} import to {got}: truncated or tampered response"
            )

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

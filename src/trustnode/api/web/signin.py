"""Sign-in of human auditors: an EIP-191 signature over a challenge, then a signed cookie.

The challenge is stateless (an HMAC of the node's secret over the message), expires after a
few minutes and is accepted once; the signature proves the key of the address the seats
belong to. The session cookie carries the address, an expiry and a CSRF token, signed with
the same secret, so no server-side session table is needed and a restart keeps people
signed in (the secret lives in `data_dir`).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import re
import secrets
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from eth_account import Account
from eth_account.messages import encode_defunct
from pydantic import BaseModel

CHALLENGE_TTL_S = 300
SESSION_TTL_S = 8 * 3600
COOKIE_NAME = "trustnode_audit"

_MESSAGE = re.compile(
    r"^Sign in to the trustnode audit page at (?P<host>[A-Za-z0-9.:\[\]-]{1,100}) "
    r"\(nonce (?P<nonce>[0-9a-f]{32}), valid until (?P<until>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)\)$"
)


class SignInError(ValueError):
    """Why a sign-in was refused (shown to the person)."""


class Challenge(BaseModel):
    message: str
    token: str
    expires: int


class WebSession(BaseModel):
    address: str
    expires: int
    csrf: str


def load_or_create_secret(path: Path) -> bytes:
    """The node's web secret (32 random bytes, created once with mode 0600)."""
    try:
        data = path.read_bytes()
        if len(data) >= 32:
            return data
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_bytes(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(key)
    return key


def safe_host(host: str) -> str:
    """The Host header reduced to characters that cannot break the message or a shell quote."""
    cleaned = re.sub(r"[^A-Za-z0-9.:\[\]-]", "", host)[:100]
    return cleaned or "localhost"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class SignIn:
    """Issues challenges, checks signatures, and signs/reads session cookies."""

    def __init__(self, secret: bytes) -> None:
        self._secret = secret
        self._used: dict[str, float] = {}
        self._lock = threading.Lock()

    def _mac(self, purpose: str, data: str) -> str:
        return _b64(hmac.new(self._secret, f"{purpose}|{data}".encode(), hashlib.sha256).digest())

    # -- challenge ---------------------------------------------------------------------------

    def challenge(self, host: str, now: float | None = None) -> Challenge:
        t = time.time() if now is None else now
        expires = int(t) + CHALLENGE_TTL_S
        until = datetime.fromtimestamp(expires, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        message = (
            f"Sign in to the trustnode audit page at {safe_host(host)} "
            f"(nonce {secrets.token_hex(16)}, valid until {until})"
        )
        return Challenge(message=message, token=self._mac("challenge", message), expires=expires)

    def verify(self, message: str, token: str, signature: str, now: float | None = None) -> str:
        """The checksummed address that signed a challenge of ours; SignInError otherwise."""
        t = time.time() if now is None else now
        if not hmac.compare_digest(self._mac("challenge", message), token):
            raise SignInError("this challenge was not issued by this node: reload the sign-in page")
        match = _MESSAGE.match(message)
        if match is None:
            raise SignInError("malformed challenge: reload the sign-in page")
        until = datetime.strptime(match["until"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()
        if t > until:
            raise SignInError("the challenge has expired: sign the new one")
        sig = signature.strip()
        if not re.fullmatch(r"(0x)?[0-9a-fA-F]{130}", sig):
            raise SignInError("the signature must be 65 bytes in hex (0x followed by 130 hex digits)")
        try:
            address = str(Account.recover_message(encode_defunct(text=message), signature=sig))
        except Exception:  # noqa: BLE001 - any malformed signature is the same user error
            raise SignInError("the signature is not valid for this message") from None
        with self._lock:
            self._used = {n: exp for n, exp in self._used.items() if exp >= t}
            nonce = match["nonce"]
            if nonce in self._used:
                raise SignInError("this challenge was already used: sign the new one")
            self._used[nonce] = until
        return address

    # -- cookie --------------------------------------------------------------------------------

    def issue(self, address: str, now: float | None = None) -> tuple[str, WebSession]:
        t = time.time() if now is None else now
        sess = WebSession(address=address, expires=int(t) + SESSION_TTL_S, csrf=secrets.token_urlsafe(24))
        body = _b64(json.dumps(sess.model_dump(), separators=(",", ":")).encode())
        return f"{body}.{self._mac('session', body)}", sess

    def read(self, cookie: str | None, now: float | None = None) -> WebSession | None:
        """The session in a cookie we signed and that has not expired; None otherwise."""
        if not cookie or "." not in cookie:
            return None
        body, mac = cookie.rsplit(".", 1)
        if not hmac.compare_digest(self._mac("session", body), mac):
            return None
        try:
            sess = WebSession.model_validate_json(_unb64(body))
        except ValueError:
            return None
        t = time.time() if now is None else now
        return sess if sess.expires > t else None

"""Sign-in of human auditors: an EIP-191 signature over a challenge, then a signed cookie.

The challenge names this node's canonical origin (`api.public_origin`, else the address the
server listens on), never the request's `Host` header, and the check refuses a challenge that
names another origin: a message signed on a phishing site that relays our challenges says so
to the signer, and one minted for another origin does not work here. A challenge is
stateless (an HMAC of the node's secret over the message), expires after a few minutes and is
accepted once: its nonce is claimed in the durable `UsedOnce` record, so a restart or a
second process on the same data directory refuses a replay.

The session cookie carries the address, an expiry, a CSRF token and a session id, signed with
the same secret (a restart keeps people signed in). Signing out revokes the session id on the
server, in the same durable record, so a copied cookie stops working at once.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import re
import secrets
import time
from datetime import UTC, datetime
from pathlib import Path

from eth_account import Account
from eth_account.messages import encode_defunct
from pydantic import BaseModel

from trustnode.api.once import REVOKED_SESSION, SIGNIN_CHALLENGE, UsedOnce

CHALLENGE_TTL_S = 300
SESSION_TTL_S = 8 * 3600
COOKIE_NAME = "trustnode_audit"

_ORIGIN = r"https?://[A-Za-z0-9.:\[\]-]{1,200}"
_MESSAGE = re.compile(
    rf"^Sign in to the trustnode audit page at (?P<origin>{_ORIGIN}) "
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
    sid: str


def load_or_create_secret(path: Path) -> bytes:
    """The node's web secret (32 random bytes, created once with mode 0600)."""
    try:
        data = path.read_bytes()
        if len(data) >= 32:
            return data
    except FileNotFoundError:
        pass
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    key = secrets.token_bytes(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(key)
    return key


def safe_origin(origin: str) -> str:
    """`scheme://host[:port]`, lower-case, with nothing that could break the message or a shell quote."""
    m = re.fullmatch(r"(https?)://([A-Za-z0-9.\-]+|\[[0-9A-Fa-f:.]+\])(?::(\d{1,5}))?/?", origin.strip())
    if m is None:
        raise ValueError(f"not an origin (scheme://host[:port]): {origin!r}")
    scheme, host, port = m.group(1).lower(), m.group(2).lower(), m.group(3)
    default = {"http": "80", "https": "443"}[scheme]
    return f"{scheme}://{host}" + (f":{port}" if port and port != default else "")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class SignIn:
    """Issues challenges, checks signatures, and signs/reads/revokes session cookies."""

    def __init__(self, secret: bytes, used: UsedOnce) -> None:
        self._secret = secret
        self.used = used

    def _mac(self, purpose: str, data: str) -> str:
        return _b64(hmac.new(self._secret, f"{purpose}|{data}".encode(), hashlib.sha256).digest())

    # -- challenge ---------------------------------------------------------------------------

    def challenge(self, origin: str, now: float | None = None) -> Challenge:
        t = time.time() if now is None else now
        expires = int(t) + CHALLENGE_TTL_S
        until = datetime.fromtimestamp(expires, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        message = (
            f"Sign in to the trustnode audit page at {safe_origin(origin)} "
            f"(nonce {secrets.token_hex(16)}, valid until {until})"
        )
        return Challenge(message=message, token=self._mac("challenge", message), expires=expires)

    def verify(self, message: str, token: str, signature: str, origin: str, now: float | None = None) -> str:
        """The checksummed address that signed a challenge of ours for `origin`; SignInError otherwise."""
        t = time.time() if now is None else now
        if not hmac.compare_digest(self._mac("challenge", message).encode(), token.encode()):
            raise SignInError("this challenge was not issued by this node: reload the sign-in page")
        match = _MESSAGE.match(message)
        if match is None:
            raise SignInError("malformed challenge: reload the sign-in page")
        own = safe_origin(origin)
        if match["origin"] != own:
            raise SignInError(
                f"this challenge names {match['origin']}, but this node's audit page is {own}: "
                f"sign in on {own} itself (a page elsewhere that shows our challenges may be phishing)"
            )
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
        if not self.used.claim(SIGNIN_CHALLENGE, match["nonce"], until + 1):
            raise SignInError("this challenge was already used: sign the new one")
        return address

    # -- cookie --------------------------------------------------------------------------------

    def issue(self, address: str, now: float | None = None) -> tuple[str, WebSession]:
        t = time.time() if now is None else now
        sess = WebSession(
            address=address,
            expires=int(t) + SESSION_TTL_S,
            csrf=secrets.token_urlsafe(24),
            sid=secrets.token_hex(16),
        )
        body = _b64(json.dumps(sess.model_dump(), separators=(",", ":")).encode())
        return f"{body}.{self._mac('session', body)}", sess

    def read(self, cookie: str | None, now: float | None = None) -> WebSession | None:
        """The session in a cookie we signed, unexpired and not signed out; None otherwise."""
        if not cookie or "." not in cookie or len(cookie) > 4096:
            return None
        body, mac = cookie.rsplit(".", 1)
        if not hmac.compare_digest(self._mac("session", body).encode(), mac.encode()):
            return None
        try:
            sess = WebSession.model_validate_json(_unb64(body))
        except ValueError:
            return None
        t = time.time() if now is None else now
        if sess.expires <= t or self.used.contains(REVOKED_SESSION, sess.sid):
            return None
        return sess

    def revoke(self, session: WebSession) -> None:
        """Sign a session out on the server: its cookie is refused from now on, anywhere."""
        self.used.claim(REVOKED_SESSION, session.sid, session.expires + 1)

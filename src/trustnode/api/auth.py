"""Provider authentication: an API key, or an EIP-191 signature over the request.

A signed request carries `X-Signer`, `X-Timestamp` and `X-Signature`; the signed message
is `trustnode:<timestamp>:<sha256 of the body in hex>`, so a signature cannot be moved to
another body and is refused after `signature_max_age_s`. Within that window it is accepted
once: the signed message is claimed in the durable `UsedOnce` record, so sending the same
request again (from this process, another one, or after a restart) is refused with 409.

Whom the node serves is explicit: API keys, `allowed_signers`, or `accept_any_signer`, which
lets anyone who can sign spend the node's tokens. With none of them the API cannot be used,
so `check_api_settings` reports that at start-up and `trustnode api serve` refuses to start.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import time
from typing import Any

from eth_account import Account
from eth_account.messages import encode_defunct
from fastapi import Request
from fastapi.concurrency import run_in_threadpool
from web3 import Web3

from trustnode.api.errors import APIError
from trustnode.api.once import SIGNED_REQUEST, UsedOnce
from trustnode.config import APISettings, Settings

#: OpenAPI security schemes of the provider routes (see `SUBMIT_SECURITY`).
SECURITY_SCHEMES: dict[str, dict[str, Any]] = {
    "BearerKey": {"type": "http", "scheme": "bearer", "description": "A provider API key (`api.api_keys`)."},
    "ApiKeyHeader": {
        "type": "apiKey",
        "in": "header",
        "name": "X-API-Key",
        "description": "A provider API key (`api.api_keys`), as a header.",
    },
    "EIP191Signer": {
        "type": "apiKey",
        "in": "header",
        "name": "X-Signer",
        "description": "Address of the signer (with X-Timestamp and X-Signature).",
    },
    "EIP191Timestamp": {
        "type": "apiKey",
        "in": "header",
        "name": "X-Timestamp",
        "description": "Unix seconds; within `api.signature_max_age_s` of the node's clock.",
    },
    "EIP191Signature": {
        "type": "apiKey",
        "in": "header",
        "name": "X-Signature",
        "description": "EIP-191 personal_sign of `trustnode:<X-Timestamp>:<sha256 of the body, hex>`; "
        "each signed request is accepted once.",
    },
}
#: One of: a bearer key, a key header, or all three signature headers together.
SUBMIT_SECURITY: list[dict[str, list[str]]] = [
    {"BearerKey": []},
    {"ApiKeyHeader": []},
    {"EIP191Signer": [], "EIP191Timestamp": [], "EIP191Signature": []},
]
#: The same, or no credentials at all (then public fields only).
OPTIONAL_SECURITY: list[dict[str, list[str]]] = [*SUBMIT_SECURITY, {}]
CREDENTIAL_HEADERS = ("authorization", "x-api-key", "x-signer", "x-timestamp", "x-signature")


def signing_message(timestamp: int, body: bytes) -> str:
    return f"trustnode:{timestamp}:{hashlib.sha256(body).hexdigest()}"


def sign_request(private_key: str, body: bytes, timestamp: int | None = None) -> dict[str, str]:
    """Headers for a signed request (used by `trustnode submit` and tests)."""
    ts = int(time.time()) if timestamp is None else timestamp
    acct = Account.from_key(private_key)
    sig = acct.sign_message(encode_defunct(text=signing_message(ts, body)))
    return {
        "X-Signer": acct.address,
        "X-Timestamp": str(ts),
        "X-Signature": "0x" + sig.signature.hex().removeprefix("0x"),
    }


def api_key_id(key: str) -> str:
    """A stable, non-secret name for an API key (what the job records as its provider)."""
    return "key:" + hashlib.sha256(key.encode()).hexdigest()[:16]


def _unauthorized(message: str) -> APIError:
    return APIError(401, message, headers={"WWW-Authenticate": "Bearer"})


def has_credentials(request: Request) -> bool:
    return any(h in request.headers for h in CREDENTIAL_HEADERS)


class Authenticator:
    """Checks the credentials of a request against the API settings and the used-once record."""

    def __init__(self, settings: APISettings, used: UsedOnce) -> None:
        self.settings = settings
        self.used = used
        self._allowed = {a.lower() for a in settings.allowed_signers}

    def _api_key(self, key: str) -> str:
        for accepted in self.settings.api_keys:
            if hmac.compare_digest(key.encode(), accepted.get_secret_value().encode()):
                return api_key_id(key)
        raise _unauthorized("unknown API key")

    async def __call__(self, request: Request) -> str:
        """The provider identity of the request, or an APIError saying what is wrong."""
        auth = request.headers.get("authorization", "")
        key = request.headers.get("x-api-key") or (
            auth[7:].strip() if auth.lower().startswith("bearer ") else None
        )
        if key:
            return self._api_key(key)
        signer = request.headers.get("x-signer")
        signature = request.headers.get("x-signature")
        ts_raw = request.headers.get("x-timestamp")
        if not (signer or signature or ts_raw):
            raise _unauthorized(
                "authentication required: an API key (Authorization: Bearer ...) or an EIP-191 signature"
            )
        if not (signer and signature and ts_raw):
            raise _unauthorized("a signed request needs all of X-Signer, X-Timestamp and X-Signature")
        if not re.fullmatch(r"-?\d{1,15}", ts_raw.strip()):
            raise _unauthorized("X-Timestamp must be an integer (unix seconds)")
        ts = int(ts_raw)
        max_age = self.settings.signature_max_age_s
        if abs(time.time() - ts) > max_age:
            raise _unauthorized(f"X-Timestamp is more than {max_age}s away from now")
        if not Web3.is_address(signer):
            raise _unauthorized("X-Signer is not an address")
        message = signing_message(ts, await request.body())
        try:
            recovered = str(Account.recover_message(encode_defunct(text=message), signature=signature))
        except Exception:  # noqa: BLE001 - any malformed signature is the same client error
            raise _unauthorized("X-Signature is not a valid signature") from None
        if recovered.lower() != signer.lower():
            raise _unauthorized("X-Signature was not made by X-Signer over this body and timestamp")
        if not (self.settings.accept_any_signer or recovered.lower() in self._allowed):
            raise APIError(
                403,
                f"signer {recovered} is not allowed to submit: the operator lists it in "
                "api.allowed_signers (TRUSTNODE_API__ALLOWED_SIGNERS)",
            )
        # The signed message, not the signature bytes, is the key: a second valid signature of
        # the same message (ECDSA malleability) is the same request.
        used_key = hashlib.sha256(f"{recovered.lower()}|{message}".encode()).hexdigest()
        fresh = await run_in_threadpool(self.used.claim, SIGNED_REQUEST, used_key, ts + max_age + 1)
        if not fresh:
            raise APIError(
                409,
                "this signed request was already accepted: a signature is used once. Sign the "
                "request again (a new X-Timestamp); to retry a submission safely, send the same "
                "Idempotency-Key",
            )
        return "addr:" + Web3.to_checksum_address(recovered)

    async def optional(self, request: Request) -> str | None:
        """The identity when credentials are sent (and valid); None for an anonymous request."""
        return await self(request) if has_credentials(request) else None


# -- start-up checks (called by `trustnode api serve`) ---------------------------------------------

_ORIGIN = re.compile(r"^https?://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$")


def check_api_settings(settings: Settings) -> list[str]:
    """Problems that make the API unusable or unsafe as configured; `api serve` refuses on any.

    Each message says what to set. An empty list means the API may start.
    """
    api = settings.api
    problems: list[str] = []
    if not api.api_keys and not api.allowed_signers and not api.accept_any_signer:
        problems.append(
            "nobody can submit traces: no API key (TRUSTNODE_API__API_KEYS='[\"<secret>\"]'), no "
            "allowed signer (TRUSTNODE_API__ALLOWED_SIGNERS='[\"0x...\"]') and "
            "TRUSTNODE_API__ACCEPT_ANY_SIGNER is false. Configure keys or signers; set "
            "accept_any_signer=true only if anyone may spend this node's tokens"
        )
    for i, address in enumerate(api.allowed_signers):
        if not Web3.is_address(address):
            problems.append(f"api.allowed_signers[{i}] = {address!r} is not an Ethereum address")
    if api.public_origin is not None and not _ORIGIN.match(api.public_origin):
        problems.append(
            f"api.public_origin = {api.public_origin!r} is not an origin: give scheme, host and "
            "optional port only, e.g. https://audit.example.org"
        )
    return problems


def api_warnings(settings: Settings) -> list[str]:
    """Configurations that work but that the operator must know about; said loudly at start-up."""
    api = settings.api
    out: list[str] = []
    if api.accept_any_signer:
        out.append(
            "api.accept_any_signer is true: ANYONE who signs a request can submit traces and spend "
            "this node's tokens on audit fees. Set TRUSTNODE_API__ALLOWED_SIGNERS or API keys instead"
        )
    for i, key in enumerate(api.api_keys):
        if len(key.get_secret_value()) < 16:
            out.append(f"api.api_keys[{i}] is shorter than 16 characters: use a long random secret")
    if api.public_origin is None and api.host not in ("127.0.0.1", "localhost", "::1"):
        out.append(
            f"the API listens on {api.host} without api.public_origin: sign-in messages name the "
            "address each request reached. Set TRUSTNODE_API__PUBLIC_ORIGIN to the URL people use"
        )
    return out

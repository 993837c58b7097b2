"""Provider authentication: an API key, or an EIP-191 signature over the request.

A signed request carries `X-Signer`, `X-Timestamp` and `X-Signature`; the signed message
is `trustnode:<timestamp>:<sha256 of the body in hex>`, so a signature cannot be replayed
after `signature_max_age_s` nor moved to another body.
"""

from __future__ import annotations

import hashlib
import hmac
import time

from eth_account import Account
from eth_account.messages import encode_defunct
from fastapi import HTTPException, Request, status
from web3 import Web3

from trustnode.config import APISettings


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


def _unauthorized(message: str) -> HTTPException:
    return HTTPException(status.HTTP_401_UNAUTHORIZED, detail=message, headers={"WWW-Authenticate": "Bearer"})


async def authenticate(request: Request, settings: APISettings) -> str:
    """The provider identity of the request, or 401 saying what is wrong."""
    auth = request.headers.get("authorization", "")
    key = request.headers.get("x-api-key") or (
        auth[7:].strip() if auth.lower().startswith("bearer ") else None
    )
    if key:
        for accepted in settings.api_keys:
            if hmac.compare_digest(key.encode(), accepted.get_secret_value().encode()):
                return api_key_id(key)
        raise _unauthorized("unknown API key")
    signer = request.headers.get("x-signer")
    signature = request.headers.get("x-signature")
    ts_raw = request.headers.get("x-timestamp")
    if not (signer or signature or ts_raw):
        raise _unauthorized(
            "authentication required: an API key (Authorization: Bearer ...) or an EIP-191 signature"
        )
    if not (signer and signature and ts_raw):
        raise _unauthorized("a signed request needs all of X-Signer, X-Timestamp and X-Signature")
    try:
        ts = int(ts_raw)
    except ValueError:
        raise _unauthorized("X-Timestamp must be an integer (unix seconds)") from None
    if abs(time.time() - ts) > settings.signature_max_age_s:
        raise _unauthorized(f"X-Timestamp is more than {settings.signature_max_age_s}s away from now")
    if not Web3.is_address(signer):
        raise _unauthorized("X-Signer is not an address")
    body = await request.body()
    try:
        recovered = Account.recover_message(
            encode_defunct(text=signing_message(ts, body)), signature=signature
        )
    except Exception:  # noqa: BLE001 - any malformed signature is the same client error
        raise _unauthorized("X-Signature is not a valid signature") from None
    if recovered.lower() != signer.lower():
        raise _unauthorized("X-Signature was not made by X-Signer over this body and timestamp")
    if settings.allowed_signers and recovered.lower() not in {a.lower() for a in settings.allowed_signers}:
        raise HTTPException(status.HTTP_403_FORBIDDEN, detail=f"signer {recovered} is not allowed to submit")
    return "addr:" + Web3.to_checksum_address(recovered)

"""Turn EVM revert data into Python exceptions that name the contract's custom error.

Every custom error of every shipped artifact is indexed by selector once, so a revert
from any contract (or from a library it calls) decodes the same way.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from eth_abi import decode as abi_decode
from eth_utils import function_signature_to_4byte_selector

from trustnode.chain.artifacts_io import all_artifacts

PANIC_CODES = {
    0x01: "assertion failed",
    0x11: "arithmetic overflow or underflow",
    0x12: "division or modulo by zero",
    0x21: "invalid enum value",
    0x31: "pop on empty array",
    0x32: "array index out of bounds",
    0x41: "out of memory",
    0x51: "call to uninitialised function",
}


REDACTED = "***"

# A path segment that looks like an access token (Infura /v3/<32 hex>, Alchemy /v2/<key>, ...):
# long, and made of token characters with at least one digit or a mix of cases.
_TOKEN_SEGMENT = re.compile(r"^[A-Za-z0-9_\-.~]{16,}$")
_URL_IN_TEXT = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s'\"<>]+")


def _looks_like_token(segment: str) -> bool:
    if not _TOKEN_SEGMENT.match(segment):
        return False
    return any(c.isdigit() for c in segment) or (segment.lower() != segment and segment.upper() != segment)


def url_secrets(url: str) -> list[str]:
    """The parts of `url` that are credentials: user info, query values, token-like path segments."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return []
    found: list[str] = []
    if parts.username:
        found.append(parts.username)
    if parts.password:
        found.append(parts.password)
    found += [v for _k, v in parse_qsl(parts.query, keep_blank_values=False) if v]
    found += [seg for seg in parts.path.split("/") if _looks_like_token(seg)]
    return [s for s in found if len(s) >= 3]


def redact_url(url: str) -> str:
    """`url` without credentials, for anything a person or a public page sees.

    Provider URLs often carry an API key (in the user info, the query or the path, as Infura and
    Alchemy do); they are replaced by `***`, the scheme, host, port and the rest of the path stay.
    """
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return REDACTED
    if not parts.scheme or not parts.hostname:
        return REDACTED if url_secrets(url) else url
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    netloc = (f"{REDACTED}@" if parts.username or parts.password else "") + host
    if port is not None:
        netloc += f":{port}"
    path = "/".join(REDACTED if _looks_like_token(seg) else seg for seg in parts.path.split("/"))
    query = urlencode([(k, REDACTED) for k, _v in parse_qsl(parts.query, keep_blank_values=True)], safe="*")
    return urlunsplit((parts.scheme, netloc, path, query, ""))


def redact(text: str, *urls: str | None) -> str:
    """`text` with every URL in it redacted, and the secrets of `urls` removed wherever they appear
    (transport errors often quote only the path, e.g. "Max retries exceeded with url: /v3/<key>")."""
    out = _URL_IN_TEXT.sub(lambda m: redact_url(m.group(0)), text)
    for url in urls:
        for secret in url_secrets(url or ""):
            out = out.replace(secret, REDACTED)
    return out


class ChainError(RuntimeError):
    """Any failure talking to the chain."""


class ChainUnavailableError(ChainError):
    """The RPC endpoint does not answer."""


class ContractRevertError(ChainError):
    """A call or transaction reverted; `name` is the custom error (or Error / Panic)."""

    def __init__(self, name: str, args: dict[str, Any], data: str, tx_hash: str | None = None) -> None:
        self.name = name
        self.args_by_name = args
        self.data = data
        self.tx_hash = tx_hash
        shown = ", ".join(f"{k}={v!r}" for k, v in args.items())
        super().__init__(f"reverted with {name}({shown})" + (f" in tx {tx_hash}" if tx_hash else ""))


def _type_string(inp: dict[str, Any]) -> str:
    if inp["type"].startswith("tuple"):
        inner = ",".join(_type_string(c) for c in inp["components"])
        return f"({inner}){inp['type'][5:]}"
    return str(inp["type"])


@cache
def error_index() -> dict[bytes, tuple[str, list[str], list[str]]]:
    """selector -> (error name, argument names, argument types) over all artifacts."""
    index: dict[bytes, tuple[str, list[str], list[str]]] = {}
    for art in all_artifacts().values():
        for item in art.abi:
            if item.get("type") != "error":
                continue
            types = [_type_string(i) for i in item.get("inputs", [])]
            names = [i.get("name") or f"arg{n}" for n, i in enumerate(item.get("inputs", []))]
            sig = f"{item['name']}({','.join(types)})"
            index[function_signature_to_4byte_selector(sig)] = (item["name"], names, types)
    return index


def decode_revert(data: str | bytes | None, tx_hash: str | None = None) -> ContractRevertError:
    """Decode revert data into a ContractRevertError; unknown data keeps its raw hex."""
    if data is None:
        return ContractRevertError("UnknownRevert", {}, "0x", tx_hash)
    raw = bytes.fromhex(data[2:] if data.startswith("0x") else data) if isinstance(data, str) else bytes(data)
    hexdata = "0x" + raw.hex()
    if len(raw) < 4:
        return ContractRevertError("EmptyRevert", {}, hexdata, tx_hash)
    selector, body = raw[:4], raw[4:]
    if selector == function_signature_to_4byte_selector("Error(string)"):
        (msg,) = abi_decode(["string"], body)
        return ContractRevertError("Error", {"message": msg}, hexdata, tx_hash)
    if selector == function_signature_to_4byte_selector("Panic(uint256)"):
        (code,) = abi_decode(["uint256"], body)
        return ContractRevertError(
            "Panic", {"code": code, "reason": PANIC_CODES.get(code, "unknown")}, hexdata, tx_hash
        )
    known = error_index().get(selector)
    if known is None:
        return ContractRevertError("UnknownError", {"selector": "0x" + selector.hex()}, hexdata, tx_hash)
    name, names, types = known
    values = abi_decode(types, body)
    return ContractRevertError(name, dict(zip(names, values, strict=True)), hexdata, tx_hash)

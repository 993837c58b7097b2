"""Turn EVM revert data into Python exceptions that name the contract's custom error.

Every custom error of every shipped artifact is indexed by selector once, so a revert
from any contract (or from a library it calls) decodes the same way.
"""

from __future__ import annotations

from functools import cache
from typing import Any

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

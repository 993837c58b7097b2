"""Follow contract events from a checkpointed block, handling each log exactly once.

The checkpoint and the set of handled logs live in the node's SQLite file, so a daemon
that restarts (or is killed) continues where it stopped and never handles a log twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from web3 import Web3
from web3.contract import Contract

from trustnode.node.sqlite import Database

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS checkpoints (name TEXT PRIMARY KEY, block INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS handled_logs (tx_hash TEXT NOT NULL, log_index INTEGER NOT NULL, PRIMARY KEY (tx_hash, log_index));
"""


@dataclass(frozen=True)
class ChainEvent:
    name: str
    args: dict[str, Any]
    block: int
    tx_hash: str
    log_index: int
    address: str


class EventFollower:
    """Poll logs of `contracts` in block ranges; call `handler` once per decoded event."""

    def __init__(
        self,
        w3: Web3,
        db: Database,
        contracts: Iterable[Contract],
        *,
        name: str = "default",
        start_block: int = 0,
        max_range: int = 2000,
    ) -> None:
        self.w3 = w3
        self.db = db
        db.conn().executescript(SCHEMA)
        self.name = name
        self.start_block = start_block
        self.max_range = max_range
        self._by_topic: dict[bytes, tuple[Contract, str]] = {}
        self._addresses: list[str] = []
        for c in contracts:
            self._addresses.append(c.address)
            abi: list[dict[str, Any]] = [dict(i) for i in c.abi]
            for item in abi:
                if item.get("type") == "event":
                    sig = f"{item['name']}({','.join(_type(i) for i in item['inputs'])})"
                    topic = Web3.keccak(text=sig)
                    self._by_topic[bytes(topic)] = (c, item["name"])

    @property
    def checkpoint(self) -> int:
        row = self.db.conn().execute("SELECT block FROM checkpoints WHERE name = ?", (self.name,)).fetchone()
        return int(row["block"]) if row else self.start_block - 1

    def poll(self, handler: Callable[[ChainEvent], None]) -> int:
        """Handle every new event up to the latest block; returns how many were handled."""
        latest = int(self.w3.eth.block_number)
        handled = 0
        frm = self.checkpoint + 1
        while frm <= latest:
            to = min(latest, frm + self.max_range - 1)
            logs = self.w3.eth.get_logs(
                {"fromBlock": frm, "toBlock": to, "address": self._addresses}  # type: ignore[typeddict-item]
            )
            for raw in sorted(logs, key=lambda lg: (lg["blockNumber"], lg["logIndex"])):
                ev = self._decode(raw)
                if ev is None or self._seen(ev):
                    continue
                handler(ev)
                with self.db.tx() as conn:
                    conn.execute(
                        "INSERT OR IGNORE INTO handled_logs (tx_hash, log_index) VALUES (?, ?)",
                        (ev.tx_hash, ev.log_index),
                    )
                handled += 1
            with self.db.tx() as conn:
                conn.execute(
                    "INSERT INTO checkpoints (name, block) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET block = excluded.block",
                    (self.name, to),
                )
            frm = to + 1
        return handled

    def _seen(self, ev: ChainEvent) -> bool:
        row = (
            self.db.conn()
            .execute(
                "SELECT 1 FROM handled_logs WHERE tx_hash = ? AND log_index = ?", (ev.tx_hash, ev.log_index)
            )
            .fetchone()
        )
        return row is not None

    def _decode(self, raw: Any) -> ChainEvent | None:
        if not raw["topics"]:
            return None
        found = self._by_topic.get(bytes(raw["topics"][0]))
        if found is None:
            return None
        contract, name = found
        decoded = contract.events[name]().process_log(raw)
        return ChainEvent(
            name=name,
            args=dict(decoded["args"]),
            block=int(raw["blockNumber"]),
            tx_hash="0x" + bytes(raw["transactionHash"]).hex(),
            log_index=int(raw["logIndex"]),
            address=str(raw["address"]),
        )


def _type(inp: dict[str, Any]) -> str:
    if inp["type"].startswith("tuple"):
        return "(" + ",".join(_type(c) for c in inp["components"]) + ")" + inp["type"][5:]
    return str(inp["type"])

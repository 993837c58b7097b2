"""Protocol v2 on a real anvil chain, driven directly with web3.

The chain consistency test and `scripts/bench_gas.py` need the v2 contracts (AuditSessions core,
DrawModule, VotingModule, SettlementModule, Staking v2, LookaheadRandomness) before the Python
chain layer (`trustnode.chain`) speaks v2, so this module compiles `contracts/src` with the
project's pinned compiler (`chain.build.compile_contracts`, no files written), deploys and wires
them, and offers the few session steps both need.  It only reads the contracts' ABIs: every
rule it checks comes from `consensus.rules`.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from eth_account.signers.local import LocalAccount
from web3.contract import Contract
from web3.logs import DISCARD
from web3.types import Nonce, TxReceipt
from web3.utils import get_create_address

from trustnode.chain.accounts import dev_account
from trustnode.chain.build import Artifact, compile_contracts
from trustnode.chain.client import ChainClient
from trustnode.chain.devnet import start_anvil, stop_pid
from trustnode.consensus.rules import commitment, panel_key

SUPPLY = 10**9 * 10**18
RANDOMNESS_DELAY = 2
DEFAULT_SESSION_PARAMS: dict[str, Any] = {
    "tauBps": 6000, "betaBps": 7000, "seatCap": 8, "seatsPerTier": [3, 3, 3], "tierWeight": [0, 0, 0],
    "gamma": 10**17, "pMin": 2 * 10**17, "pMax": 5 * 10**17, "reward": 6 * 10**18, "slashAmount": 8 * 10**18,
    "drawBlocks": 40, "keyBlocks": 40, "commitBlocks": 40, "revealBlocks": 40, "canaryCommitBlocks": 8,
}  # fmt: skip
DEFAULT_STAKING_PARAMS: dict[str, Any] = {
    "minStake": [100 * 10**18] * 3, "cooldown": 86400, "commissionDelay": 3600,
    "initialReputation": 5 * 10**17, "reputationFloor": 5 * 10**17, "maxCommissionBps": 2000,
}  # fmt: skip


def _abi(contract: Contract) -> list[dict[str, Any]]:
    return cast(list[dict[str, Any]], contract.abi)


def as_dict(contract: Contract, fn: str, value: Any) -> dict[str, Any]:
    """Name the fields of a returned struct from the ABI."""
    abi = next(x for x in _abi(contract) if x.get("type") == "function" and x["name"] == fn)
    comps = abi["outputs"][0]["components"]
    return {c["name"]: v for c, v in zip(comps, value, strict=True)}


def _as_tuple(contract: Contract, fn: str, arg: str, values: dict[str, Any]) -> tuple[Any, ...]:
    """A struct argument in ABI order from named fields (a missing field is an error)."""
    abi = next(x for x in _abi(contract) if x.get("type") == fn or x.get("name") == fn)
    comps = next(i for i in abi["inputs"] if i["name"] == arg)["components"]
    return tuple(values[c["name"]] for c in comps)


@dataclass
class V2Chain:
    """One anvil chain with the v2 protocol deployed; account 0 owns everything."""

    rpc_url: str
    artifacts: dict[str, Artifact]
    epoch_blocks: int
    clients: dict[int, ChainClient] = field(default_factory=dict)
    c: dict[str, Contract] = field(default_factory=dict)

    def client(self, index: int) -> ChainClient:
        if index not in self.clients:
            self.clients[index] = ChainClient.connect(self.rpc_url, dev_account(index), timeout_s=60)
        return self.clients[index]

    @property
    def owner(self) -> ChainClient:
        return self.client(0)

    def account(self, index: int) -> LocalAccount:
        return dev_account(index)

    def _deploy(self, name: str, *args: Any) -> Contract:
        art = self.artifacts[name]
        w3 = self.owner.w3
        receipt = self.owner.transact(w3.eth.contract(abi=art.abi, bytecode=art.bytecode).constructor(*args))
        return w3.eth.contract(address=receipt["contractAddress"], abi=art.abi)

    def deploy(
        self,
        session_params: dict[str, Any],
        staking_params: dict[str, Any],
        appeal_params: dict[str, Any] | None = None,
    ) -> None:
        o = self.owner.address
        token = self._deploy("TrustToken", o, SUPPLY)
        treasury = self._deploy("Treasury", token.address, o)
        st_art = self.artifacts["Staking"]
        probe = self.owner.w3.eth.contract(abi=st_art.abi)
        sp = _as_tuple(probe, "constructor", "params_", staking_params)
        staking = self._deploy("Staking", token.address, o, treasury.address, self.epoch_blocks, sp)
        registry = self._deploy("AuditorRegistry", staking.address, o)
        randomness = self._deploy("LookaheadRandomness", RANDOMNESS_DELAY)
        probe = self.owner.w3.eth.contract(abi=self.artifacts["AuditSessions"].abi)
        params = _as_tuple(probe, "constructor", "params_", session_params)
        sessions = self._deploy(
            "AuditSessions", token.address, staking.address, randomness.address, treasury.address, o, params
        )
        draw = self._deploy("DrawModule", sessions.address, staking.address)
        voting = self._deploy("VotingModule", sessions.address, draw.address)
        settlement = self._deploy(
            "SettlementModule", token.address, sessions.address, draw.address, voting.address, staking.address
        )
        self.owner.transact(sessions.functions.setModules(draw.address, voting.address, settlement.address))
        self.owner.transact(staking.functions.wire(registry.address, draw.address, settlement.address))
        self.c = {
            "token": token, "treasury": treasury, "staking": staking, "registry": registry,
            "randomness": randomness, "sessions": sessions, "draw": draw, "voting": voting,
            "settlement": settlement,
        }  # fmt: skip
        if appeal_params is not None:
            self._deploy_issue15(appeal_params)

    def _deploy_issue15(self, appeal_params: dict[str, Any]) -> None:
        """The AppealSettlement (bound to the AppealModule's predicted address), the AppealModule and
        the CanaryModule, wired like `chain.deploy.deploy_protocol` does, the Treasury funded for
        appeal budgets and refunds."""
        o, c, w3 = self.owner.address, self.c, self.owner.w3
        probe = w3.eth.contract(abi=self.artifacts["AppealSettlement"].abi)
        params = _as_tuple(probe, "constructor", "p", appeal_params)
        nonce = w3.eth.get_transaction_count(self.owner.account.address, "pending")
        predicted = get_create_address(self.owner.account.address, Nonce(nonce + 1))
        escrow = self._deploy("AppealSettlement", c["sessions"].address, predicted, o, params)
        appeals = self._deploy("AppealModule", c["sessions"].address, escrow.address)
        assert appeals.address == predicted and self.call(appeals.functions.settlement()) == escrow.address
        canaries = self._deploy("CanaryModule", c["sessions"].address)
        self.owner.transact(c["sessions"].functions.setExtensions(appeals.address, canaries.address))
        # the owner doubles as the canary operator here (it is never a provider)
        self.owner.transact(canaries.functions.setCanaryOperator(o, True))
        for spender in (escrow.address, canaries.address):
            self.owner.transact(c["treasury"].functions.setSpender(spender, 2**256 - 1))
        self.c.update({"appeals": appeals, "escrow": escrow, "canaries": canaries})

    # -- reads ---------------------------------------------------------------------------------

    def call(self, fn: Any) -> Any:
        return self.owner.call(fn)

    def session(self, sid: int) -> dict[str, Any]:
        s = self.c["sessions"]
        return as_dict(s, "sessionOf", self.call(s.functions.sessionOf(sid)))

    def balance(self, who: str) -> int:
        return int(self.call(self.c["token"].functions.balanceOf(who)))

    def pool(self, auditor: str) -> dict[str, Any]:
        st = self.c["staking"]
        return as_dict(st, "poolOf", self.call(st.functions.poolOf(auditor)))

    def seats_of(self, sid: int, auditor: str, round: int = 0) -> list[int]:
        return [int(x) for x in self.call(self.c["draw"].functions.seatsOf(sid, round, auditor))]

    def seat_word(self, sid: int, auditor: str, round: int = 0) -> int:
        return int(self.call(self.c["draw"].functions.seatWordOf(panel_key(sid, round), auditor)))

    def segment_words(self, sid: int, n: int) -> list[int]:
        fn = self.c["sessions"].functions.segmentWord
        return [int(self.call(fn(sid, 0, w))) for w in range((n + 7) // 8)]

    def randomness_value(self, request_id: int) -> bytes:
        return bytes(self.call(self.c["randomness"].functions.valueOf(request_id)))

    # -- steps ---------------------------------------------------------------------------------

    def mine_to(self, block: int) -> None:
        now = self.owner.block_number()
        if block > now:
            self.owner.mine(block - now)

    def next_epoch(self) -> None:
        """Move to the first block of the next epoch, so stake changes so far are in its snapshot."""
        self.mine_to((self.owner.block_number() // self.epoch_blocks + 1) * self.epoch_blocks)

    def fund(self, to: str, amount: int) -> None:
        self.owner.transact(self.c["token"].functions.transfer(to, amount))

    def register(self, index: int, tier: int, stake: int, commission_bps: int = 0) -> str:
        """Register dev account `index` as an auditor of `tier` with `stake` of self-stake."""
        cl = self.client(index)
        self.fund(cl.address, stake)
        cl.transact(self.c["registry"].functions.register(tier, 1 << tier, (index + 1).to_bytes(32, "big")))
        cl.transact(self.c["token"].functions.approve(self.c["staking"].address, 2**256 - 1))
        cl.transact(self.c["staking"].functions.stake(cl.address, stake))
        if commission_bps:
            cl.transact(self.c["staking"].functions.setCommission(commission_bps))
        return cl.address

    def open(
        self, provider: ChainClient, root: bytes, tiers_weights: bytes, fee: int
    ) -> tuple[int, TxReceipt]:
        s = self.c["sessions"]
        receipt = provider.transact(s.functions.openSession(root, tiers_weights, fee))
        return int(self.call(s.functions.sessionCount())), receipt

    def wait_draw_randomness(self, sid: int) -> None:
        target = self.call(self.c["randomness"].functions.targetBlockOf(self.session(sid)["drawRequest"]))
        self.mine_to(int(target) + 1)

    def draw_all(self, sid: int, max_seats: int) -> list[TxReceipt]:
        """Draw calls until every seat is drawn (bounded by the seats and the call's rejection cap)."""
        receipts = []
        total = self.session(sid)["totalSeats"]
        for _ in range(total + 2):
            receipts.append(self.owner.transact(self.c["sessions"].functions.draw(sid, max_seats)))
            s = self.session(sid)
            if s["drawnSeats"] == total or s["status"] != 2:  # 2 = Drawing
                return receipts
        raise AssertionError(f"session {sid}: draw did not complete")

    def commit_signed(self, sid: int, votes: dict[str, tuple[int, bytes]], round: int = 0) -> TxReceipt:
        """One relayed commitBatch of EIP-712 signed commitments (first commits: nonce 0)."""
        voting = self.c["voting"]
        chain_id = self.owner.chain_id
        items = []
        for auditor, (word, salt) in votes.items():
            digest_c = commitment(chain_id, voting.address, sid, auditor, word, salt, round=round)
            digest = bytes(self.call(voting.functions.commitDigest(sid, round, auditor, digest_c, 0)))
            account = next(cl.account for cl in self.clients.values() if cl.address == auditor)
            sig = account.unsafe_sign_hash(digest).signature
            items.append((auditor, digest_c, bytes(sig)))
        return self.owner.transact(voting.functions.commitBatch(sid, round, items))

    def reveal_batch(self, sid: int, openings: Sequence[tuple[str, int, bytes]], round: int = 0) -> TxReceipt:
        return self.owner.transact(self.c["voting"].functions.revealBatch(sid, round, list(openings)))

    def settle_batch(self, sid: int, auditors: Sequence[str], round: int = 0) -> TxReceipt:
        return self.owner.transact(self.c["settlement"].functions.settleBatch(sid, round, list(auditors)))

    def events(self, contract: str, event: str, receipt: TxReceipt) -> list[dict[str, Any]]:
        ev = getattr(self.c[contract].events, event)()
        return [dict(x["args"]) for x in ev.process_receipt(receipt, errors=DISCARD)]


@contextmanager
def v2_chain(
    *,
    session_params: dict[str, Any] | None = None,
    staking_params: dict[str, Any] | None = None,
    epoch_blocks: int = 50,
    port: int,
    log_dir: Path | None = None,
    appeal_params: dict[str, Any] | None = None,
) -> Iterator[V2Chain]:
    """Start anvil on 127.0.0.1:port, deploy the v2 contracts compiled from contracts/src, stop on exit."""
    artifacts, _ = compile_contracts()
    with tempfile.TemporaryDirectory(prefix="v2chain-") as tmp:
        log = (log_dir or Path(tmp)) / "anvil.log"
        pid = start_anvil(port, log)
        try:
            chain = V2Chain(
                rpc_url=f"http://127.0.0.1:{port}", artifacts=artifacts, epoch_blocks=epoch_blocks
            )
            chain.deploy(
                {**DEFAULT_SESSION_PARAMS, **(session_params or {})},
                {**DEFAULT_STAKING_PARAMS, **(staking_params or {})},
                appeal_params,
            )
            yield chain
        finally:
            stop_pid(pid)

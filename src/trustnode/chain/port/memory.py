"""`ChainPort` over an in-memory chain that applies `consensus.rules`, for unit tests in milliseconds.

It follows protocol v2's meaning where v2 differs from v1: the draw samples without
replacement and cancels only when no eligible auditor is left, saying why (`DrawFailure`);
a seat can abstain (verdict word bit 128 + j: counted in no tally, no reward, no slash,
reputation moves as for an incorrect vote); settlement waits for the slash randomness
requested at finalization (`slash_delay` blocks, 2 by default as the devnet's lookahead); a
session that ends without a verdict keeps R per drawn seat, paid (and the seat's stake
unlocked) when its auditor settles. Quorum, outcomes, the trace verdict, commitments, slash
coins, reputation and settlement amounts come from `consensus.rules`. Issue 15's canaries and
appeal rounds (`memory_canaries`, `memory_appeals`, `memory_rounds`) apply `consensus.appeals`,
`canaries` and `final_settlement`. Not simulated: staking epochs (every stake counts at once),
the FIFO ledger, commissions. A session draws from the weights of its opening instead of an epoch
snapshot, and protocol-v2 5.1's hold follows from that: a withdrawal by a pool that an undrawn
session counts is parked (no weight, still lockable and slashable) until no such session is left,
then leaves at the pool's next touch (`release_withdrawal`, a stake, a request or a result). Hence one timing differs: an appeal round nobody starts drawing ends
UNFILLABLE `draw_blocks` after its randomness target here, where the contracts end it when its
randomness lapses (256 blocks for the lookahead source) or its snapshot epoch ages out of the
ring (within three epochs), whichever comes first; the outcome and the money are the same. And
`advance` here ends every due appeal round at once, where the contracts end at most two per call
(a bound on its gas): a caller that loops until nothing changes sees the same end state.
"""

from __future__ import annotations

from collections.abc import Sequence

from eth_utils import to_checksum_address

from trustnode.chain.errors import ChainError
from trustnode.chain.port import memory_staking as staking
from trustnode.chain.port.memory_appeals import AppealOps
from trustnode.chain.port.memory_canaries import CanaryOps
from trustnode.chain.port.memory_draw import DrawOps
from trustnode.chain.port.memory_state import MemoryChain, Session, revert
from trustnode.chain.port.memory_voting import VotingOps
from trustnode.chain.port.types import (
    Capabilities,
    KeysPublished,
    Opened,
    OpenRequest,
    SeatsDrawn,
    SegmentTally,
    SessionInfo,
    TxRef,
)
from trustnode.chain.protocol import SessionParams
from trustnode.consensus import rules
from trustnode.consensus.canaries import canary_commit_window, canary_count
from trustnode.consensus.session_stake import StakeBelowSessionLocks, check_session_stake
from trustnode.models.enums import SegmentOutcome
from trustnode.models.verdict import SessionState


class MemoryPort(staking.StakingOps, VotingOps, AppealOps, CanaryOps, DrawOps):
    """One signer's view of a `MemoryChain`."""

    def __init__(self, chain: MemoryChain, address: str, *, abstain: bool = True) -> None:
        self.c = chain
        self._address = to_checksum_address(address)
        self.capabilities = Capabilities(protocol_version=2, abstain=abstain, refund_cancel=False)

    @property
    def chain_id(self) -> int:
        return self.c.chain_id

    @property
    def contract(self) -> str:
        return self.c.contract

    @property
    def address(self) -> str:
        return self._address

    @property
    def deploy_block(self) -> int:
        return 0

    def block_number(self) -> int:
        with self.c.op():
            return self.c.block

    def chain_time(self) -> int:
        with self.c.op():
            return self.c.now()

    def block_timestamp(self, block: int) -> int:
        with self.c.op():
            return self.c.genesis + block * self.c.block_time_s

    def params(self, version: int | None = None) -> SessionParams:
        with self.c.op():
            return self.c.versions[-1 if version is None else version]

    def max_segments(self) -> int:
        return self.c.max_segments

    def _check_stake_backs_locks(self, tiers: Sequence[int], p: SessionParams) -> None:
        """`SessionOps._checkStakeBacksLocks` (outside review 22): with appeals on, every tier's minimum
        stake (one for all tiers here) backs every lock the session can ask of one of its auditors."""
        m = self.c.min_stake if self.c.premise_min_stake is None else self.c.premise_min_stake
        try:
            check_session_stake(tiers, (m, m, m), seat_cap=p.seat_cap, max_rounds=p.max_rounds,
                                appeal_blocks=p.appeal_blocks, slash_amount=p.slash_amount)  # fmt: skip
        except StakeBelowSessionLocks as e:
            raise revert(
                "MinStakeBelowSessionLocks", tier=e.tier, minStake=e.min_stake, required=e.required
            ) from e

    # -- provider ------------------------------------------------------------------------------
    def open_session(
        self, merkle_root: bytes, tiers: Sequence[int], weights: Sequence[int], fee: int
    ) -> Opened:
        with self.c.op():
            n = len(tiers)
            if n == 0 or n > self.c.max_segments or len(weights) != n:
                raise revert("InvalidSegments")
            version = len(self.c.versions) - 1
            p = self.c.versions[version]
            for i, (t, w) in enumerate(zip(tiers, weights, strict=True)):
                if not 0 <= t <= 2:
                    raise revert("InvalidTier", index=i, tier=t)
                if w <= 0 or (p.tier_weight[t] and w != p.tier_weight[t]):
                    raise revert("InvalidWeight", index=i, weight=w)
            seats = sum(p.seats_per_tier[t] for t in tiers)
            self._check_stake_backs_locks(tiers, p)
            pool, fee_share = rules.fee_split(fee)
            if not rules.fee_covers_seats(fee, seats, p.reward):
                raise revert("FeeTooLow", pool=pool, required=seats * p.reward)
            have = self.c.balances.get(self.address, 0)
            if have < fee:
                raise revert("ERC20InsufficientBalance", sender=self.address, balance=have, needed=fee)
            self.c.balances[self.address] = have - fee
            self.c.treasury += fee_share
            tx = self.c.tx()
            s = Session(
                id=len(self.c.sessions) + 1,
                provider=self.address,
                version=version,
                root="0x" + merkle_root.hex(),
                tiers=list(tiers),
                weights=list(weights),
                fee=fee,
                pool=pool,
                target=tx.block
                + canary_commit_window(
                    self.c.randomness_delay, p.canary_commit_blocks, canary_count(n, p.canary_rate_bps)
                ),
                total_seats=seats,
                segment_auditors=[set() for _ in tiers],
                tally=[[0, 0] for _ in tiers],
                snapshot=self.c.snapshot(),
            )
            self.c.sessions.append(s)
            s.note("open", tx)
            opened = Opened(session_id=s.id, merkle_root=s.root, tx=tx)
            self.c.emit("SessionOpened", tx, opened)
            return opened

    def find_opened(self, merkle_root: bytes) -> Opened | None:
        with self.c.op():
            root = "0x" + merkle_root.hex()
            for lg in self.c.logs:
                if (
                    lg.name == "SessionOpened"
                    and lg.data.merkle_root == root
                    and self.c.session(lg.data.session_id).provider == self.address
                ):
                    return Opened.model_validate(lg.data.model_dump())
            return None

    def send_opens(self, requests: Sequence[OpenRequest]) -> list[str | ChainError]:
        """Each open is mined as it is sent (an automining chain): a request that would revert
        is not sent and gets its revert, as estimation does on a real chain."""
        sent: list[str | ChainError] = []
        for r in requests:
            try:
                sent.append(self.open_session(r.merkle_root, r.tiers, r.weights, r.fee).tx.tx_hash)
            except ChainError as exc:
                sent.append(exc)
        return sent

    def open_receipt(self, tx_hash: str, *, wait: bool = True) -> Opened | None:
        with self.c.op():
            for lg in self.c.logs:
                if lg.name == "SessionOpened" and lg.tx.tx_hash == tx_hash:
                    return Opened.model_validate(lg.data.model_dump())
        if wait:
            raise ChainError(f"no receipt for {tx_hash}: this chain never mined it")
        return None

    def seats(self, session_id: int, round: int = 0) -> dict[str, list[int]]:
        with self.c.op():
            panel = self._panel(self.c.session(session_id), round)
            return {a: list(v) for a, v in panel.seats.items()}

    def publish_keys(self, session_id: int, manifest_cid: str, round: int = 0) -> TxRef:
        with self.c.op():
            s = self.c.session(session_id)
            self._sync(s)
            if round:
                return self._publish_round_keys(s, round, manifest_cid)
            if self.address != s.provider:
                raise revert("NotProvider", sessionId=session_id)
            if s.state != SessionState.DRAWING:
                raise revert("WrongStatus", sessionId=session_id, status=s.state.value)
            if s.drawn != s.total_seats:
                raise revert("DrawIncomplete", sessionId=session_id)
            if not manifest_cid:
                raise revert("EmptyManifest")
            p = self.c.params_of(s)
            tx = self.c.tx()
            s.commit_deadline = tx.block + p.commit_blocks
            s.reveal_deadline = s.commit_deadline + p.reveal_blocks
            s.state = SessionState.KEYS_PUBLISHED
            s.note("publish_keys", tx)
            self.c.emit("KeysPublished", tx, KeysPublished(session_id=s.id, manifest_cid=manifest_cid, tx=tx))
            return tx

    def keys_published(self, session_id: int, round: int = 0) -> KeysPublished | None:
        with self.c.op():
            for lg in self.c.logs:
                if lg.name == "KeysPublished" and lg.data.session_id == session_id and lg.data.round == round:
                    return lg.data.model_copy(update={"log_index": lg.log_index})
            return None

    def events(self, from_block: int, to_block: int) -> list[KeysPublished]:
        with self.c.op():
            return [
                lg.data.model_copy(update={"log_index": lg.log_index})
                for lg in self.c.logs
                if lg.name == "KeysPublished" and from_block <= lg.tx.block <= to_block
            ]

    def seats_drawn(self, from_block: int, to_block: int) -> list[SeatsDrawn]:
        with self.c.op():
            return [
                lg.data.model_copy(update={"log_index": lg.log_index})
                for lg in self.c.logs
                if lg.name == "SeatsDrawn" and from_block <= lg.tx.block <= to_block
            ]

    def _sync(self, s: Session) -> None:
        """The deadline transitions every call applies first (like the contract's `_sync`)."""
        b = self.c.block
        if s.state == SessionState.DRAWING:
            if (s.drawn < s.total_seats and b > s.draw_deadline) or (
                s.drawn == s.total_seats and b > s.key_deadline
            ):
                self._expire(s)
        elif s.state in (SessionState.KEYS_PUBLISHED, SessionState.COMMIT) and b > s.commit_deadline:
            s.state = SessionState.REVEAL

    def _expire(self, s: Session) -> None:
        """Abandoned (draw unfinished or keys withheld): R per drawn seat stays for its auditor (paid
        when it settles), the rest is forfeited (the contracts send it to the treasury)."""
        p = self.c.params_of(s)
        s.pool = min(s.pool, s.drawn * p.reward)
        s.state = SessionState.EXPIRED
        s.termination = "draw_abandoned" if s.drawn < s.total_seats else "keys_withheld"

    def advance(self, session_id: int) -> tuple[SessionState, TxRef]:
        with self.c.op():
            s = self.c.session(session_id)
            tx = self.c.tx()
            self._sync(s)
            if s.state == SessionState.REVEAL and (
                self.c.block > s.reveal_deadline
                or sum(v.word is not None for v in s.votes.values()) == len(s.seats)
            ):
                self._finalize(s, tx)
            elif s.state == SessionState.FINALIZED:
                self._advance_rounds(s, tx)
                self._check_final(s, tx.block)
            return s.state, tx

    def _finalize(self, s: Session, tx: TxRef) -> None:
        """Round 0's outcomes; the appeal phase opens (and the outcome is final at once without
        canaries or appeals, when the slash randomness is requested)."""
        p = self.c.params_of(s)
        s.outcomes = [
            rules.segment_outcome(ps, fl, p.seats_per_tier[t], p.tau_bps)
            for (ps, fl), t in zip(s.tally, s.tiers, strict=True)
        ]
        s.state = SessionState.FINALIZED
        s.note("finalize", tx)
        self._open_appeal_phase(s, tx)

    def finalized(self, session_id: int) -> TxRef | None:
        with self.c.op():
            hashes = self.c.session(session_id).txs.get("finalize")
            return TxRef(tx_hash=hashes[0], block=0) if hashes else None

    # -- public reads ---------------------------------------------------------------------------
    def session_count(self) -> int:
        with self.c.op():
            return len(self.c.sessions)

    def session(self, session_id: int) -> SessionInfo:
        with self.c.op():
            s = self.c.session(session_id)
            committed = sum(v.commitment is not None for v in s.votes.values())
            revealed = sum(v.word is not None for v in s.votes.values())
            return SessionInfo(
                session_id=s.id, provider=s.provider, state=s.state, params_version=s.version,
                segment_count=len(s.tiers), auditor_count=len(s.seats), merkle_root=s.root, fee=s.fee,
                total_seats=s.total_seats, drawn_seats=s.drawn, committed_count=committed, revealed_count=revealed,
                draw_deadline=s.draw_deadline, key_deadline=s.key_deadline, commit_deadline=s.commit_deadline,
                reveal_deadline=s.reveal_deadline, passed=s.passed, score_bps=s.score_bps,
                pass_weight=s.pass_weight, total_weight=s.total_weight, termination=s.termination,
            )  # fmt: skip

    def segments(self, session_id: int) -> list[SegmentTally]:
        with self.c.op():
            s = self.c.session(session_id)
            return [
                SegmentTally(
                    index=i,
                    tier=t,
                    weight=s.weights[i],
                    pass_votes=s.tally[i][0],
                    fail_votes=s.tally[i][1],
                    outcome=s.outcomes[i] if s.outcomes else SegmentOutcome.NONE,
                )
                for i, t in enumerate(s.tiers)
            ]

    def session_transactions(self, session_id: int) -> dict[str, list[str]]:
        with self.c.op():
            return {k: list(v) for k, v in self.c.session(session_id).txs.items()}

    def verify_segment(
        self, session_id: int, index: int, cid: str, tier: int, weight: int, proof: Sequence[bytes]
    ) -> bool:
        from trustnode.storage.merkle import segment_leaf, verify

        with self.c.op():
            s = self.c.session(session_id)
            if not 0 <= index < len(s.tiers) or (s.tiers[index], s.weights[index]) != (tier, weight):
                return False
            return verify(segment_leaf(index, cid, tier, weight), list(proof), bytes.fromhex(s.root[2:]))

"""The in-memory chain's registry, staking pools, withdrawals and settlement (see `memory.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from eth_utils import keccak, to_checksum_address

from trustnode.chain.port.memory_state import Auditor, Round, Session, Vote, WithdrawalRow, revert
from trustnode.chain.port.types import (
    PENDING_READY_AT,
    AuditorProfile,
    EligibleAuditor,
    NotReady,
    PoolState,
    Settlement,
    TxRef,
    Withdrawal,
)
from trustnode.consensus import rules
from trustnode.consensus.appeal_settlement import effects_map
from trustnode.consensus.appeals import Vote as AppealVote
from trustnode.consensus.final_settlement import SessionSettlement
from trustnode.models.enums import SegmentOutcome, Tier
from trustnode.models.verdict import SessionState, TierName

if TYPE_CHECKING:
    from trustnode.chain.port.memory_state import MemoryChain


class StakingOps:
    """Registry and staking operations of `MemoryPort` (mixed in; `c` is the chain)."""

    c: MemoryChain

    if TYPE_CHECKING:  # provided by the port class this is mixed into

        @property
        def address(self) -> str: ...

    if TYPE_CHECKING:  # provided by the other mixins of MemoryPort

        def _panel(self, s: Session, round: int) -> Session | Round: ...
        def _check_final(self, s: Session, block: int) -> None: ...
        def _final_settlement(self, s: Session, seed: bytes) -> SessionSettlement: ...

    def register(self, tier: Tier, expertise: int, encryption_key: bytes) -> TxRef:
        with self.c.op():
            if len(encryption_key) != 32 or not any(encryption_key):
                raise revert("ZeroEncryptionKey")
            if self.address in self.c.auditors and self.c.auditors[self.address].registered:
                raise revert("AlreadyRegistered", auditor=self.address)
            old = self.c.auditors.get(self.address)
            if old is not None and old.tier != int(tier) and old.locked != 0:
                # Staking refuses a tier move while the pool holds seat locks (Review26): they would
                # count against its seats in the other tier, which the stake premise rule does not bound.
                raise revert("TierLocked", auditor=self.address, locked=old.locked)
            a = Auditor(tier=int(tier), expertise=expertise, key="0x" + encryption_key.hex())
            a.reputation = old.reputation if old else self.c.initial_reputation
            if old is not None:
                a.assets, a.locked, a.total_shares, a.shares = (
                    old.assets,
                    old.locked,
                    old.total_shares,
                    old.shares,
                )
            self.c.auditors[self.address] = a
            return self.c.tx()

    def update_profile(self, expertise: int, encryption_key: bytes) -> TxRef:
        with self.c.op():
            a = self._me()
            a.expertise, a.key = expertise, "0x" + encryption_key.hex()
            return self.c.tx()

    def _me(self) -> Auditor:
        a = self.c.auditors.get(self.address)
        if a is None or not a.registered:
            raise revert("NotRegistered", auditor=self.address)
        return a

    def stake(self, amount: int) -> TxRef:
        with self.c.op():
            a = self._me()
            if amount <= 0:
                raise revert("ZeroAmount")
            have = self.c.balances.get(self.address, 0)
            if have < amount:
                raise revert("ERC20InsufficientBalance", sender=self.address, balance=have, needed=amount)
            self.c.release_held(self.address)
            shares = amount if a.total_shares == 0 else amount * (a.total_shares + 1) // (a.assets + 1)
            self.c.balances[self.address] = have - amount
            a.assets += amount
            a.total_shares += shares
            a.shares[self.address] = a.shares.get(self.address, 0) + shares
            return self.c.tx()

    def self_stake(self, auditor: str) -> tuple[int, int]:
        with self.c.op():
            a = self.c.auditors.get(auditor)
            if a is None:
                return 0, 0
            shares = a.shares.get(auditor, 0)
            return shares, a.value(shares)

    def request_withdrawal(self, shares: int) -> int:
        with self.c.op():
            a = self._me()
            self.c.release_held(self.address)
            held = a.shares.get(self.address, 0)
            if shares <= 0 or shares > held:
                raise revert("InsufficientShares", requested=shares, held=held)
            if self.c.in_undrawn_snapshot(self.address):
                # protocol-v2 5.1: a session that may still draw counts this stake, so it cannot refuse
                # that session's lock: the shares are parked (no weight, still lockable and slashable)
                # until no such session is left, and only then redeemed at the price of that moment.
                a.shares[self.address] = held - shares
                a.parked += shares
                self.c.tx()
                row = WithdrawalRow(
                    owner=self.address, auditor=self.address, amount=0, ready_at=PENDING_READY_AT,
                    shares=shares, held=True,
                )  # fmt: skip
                self.c.withdrawals.append(row)
                return len(self.c.withdrawals) - 1
            amount = a.value(shares)
            free = a.assets - a.locked
            if amount > free:
                # Simplified v2 ledger: stake behind pending seats is not withdrawable yet (the
                # contracts queue it behind those sessions instead); the daemon retries later.
                raise revert("InsufficientShares", requested=shares, held=held * free // max(1, a.assets))
            a.shares[self.address] = held - shares
            a.total_shares -= shares
            a.assets -= amount
            self.c.tx()
            row = WithdrawalRow(
                owner=self.address,
                auditor=self.address,
                amount=amount,
                ready_at=self.c.now() + self.c.cooldown_s,
            )
            self.c.withdrawals.append(row)
            return len(self.c.withdrawals) - 1

    def release_withdrawal(self, withdrawal_id: int) -> TxRef | None:
        with self.c.op():
            if not 0 <= withdrawal_id < len(self.c.withdrawals):
                raise revert("UnknownWithdrawal", id=withdrawal_id)
            w = self.c.withdrawals[withdrawal_id]
            if not w.held or self.c.in_undrawn_snapshot(w.auditor):
                return None
            released = self.c.release_held(w.auditor)
            return self.c.tx() if released else None

    def claim_withdrawal(self, withdrawal_id: int) -> TxRef:
        with self.c.op():
            if not 0 <= withdrawal_id < len(self.c.withdrawals):
                raise revert("UnknownWithdrawal", id=withdrawal_id)
            w = self.c.withdrawals[withdrawal_id]
            if w.owner != self.address:
                raise revert("NotWithdrawalOwner", id=withdrawal_id)
            if w.claimed:
                raise revert("AlreadyClaimed", id=withdrawal_id)
            if w.held:
                raise revert("WithdrawalPending", id=withdrawal_id)
            if self.c.now() < w.ready_at:
                raise revert("WithdrawalNotReady", id=withdrawal_id, readyAt=w.ready_at)
            w.claimed = True
            self.c.balances[w.owner] = self.c.balances.get(w.owner, 0) + w.amount
            return self.c.tx()

    # -- settlement ----------------------------------------------------------------------------
    def settle(self, session_id: int, auditor: str, round: int = 0) -> Settlement | None:
        with self.c.op():
            s = self.c.session(session_id)
            if s.state not in (SessionState.FINALIZED, SessionState.CANCELLED, SessionState.EXPIRED):
                raise revert("WrongStatus", sessionId=session_id, status=s.state.value)
            panel = self._panel(s, round)
            segs = panel.seats.get(auditor)
            if not segs:
                raise revert("NotSeated", sessionId=session_id, auditor=auditor)
            v = panel.votes.setdefault(auditor, Vote())
            if v.settled:
                return None
            p = self.c.params_of(s)
            a = self.c.auditors[auditor]
            if s.state != SessionState.FINALIZED:  # no verdict: R per drawn seat, nothing else
                tx = self.c.tx()
                result = rules.settle_auditor(
                    auditor=auditor, seats=[rules.Seat(segment_index=g) for g in segs],
                    outcomes=[SegmentOutcome.NONE] * len(s.tiers), reputation=a.reputation,
                    pool_assets=a.assets, commission_bps=0, rules=p.econ, finalized=False,
                )  # fmt: skip
                reward, counts, reputation = result.gross_reward, (0, 0, 0), a.reputation
                a.assets += result.reward_to_pool
            else:
                money = self._final_settlement(s, self._slash_seed(s))
                tx = self.c.tx()
                votes = [
                    x
                    for x in [*(v for g in money.segments for v in g.votes), *(v for c in money.canaries for v in c.votes)]
                    if x.auditor == auditor and x.round == round
                ]  # fmt: skip
                votes.sort(key=lambda x: x.segment)
                reward = sum(x.rewarded for x in votes)
                applied = rules.apply_result(
                    assets=a.assets, reward=reward, slash=sum(x.slashed for x in votes), commission_bps=0
                )
                mul, add = effects_map([(x.effect, x.gamma) for x in votes])
                reputation = rules.apply_reputation(a.reputation, mul, add)
                a.assets = applied.assets_after
                counts = (
                    sum(x.agreed is True for x in votes),
                    sum(x.agreed is False or x.vote is AppealVote.UNREVEALED for x in votes),
                    sum(x.slashed > 0 for x in votes),
                )
            v.settled = True
            a.locked -= len(segs) * p.slash_amount
            self.c.release_held(auditor)  # a result touches the pool (held shares bore it)
            a.reputation = reputation
            if round == 0:
                s.pool -= reward
            settled = Settlement(
                session_id=s.id, auditor=auditor, round=round, correct=counts[0], incorrect=counts[1],
                slashes=counts[2], reward=reward, reputation=a.reputation, tx=tx,
            )  # fmt: skip
            s.note("settle", tx)
            self.c.emit("AuditorSettled", tx, settled)
            return settled

    def _slash_seed(self, s: Session) -> bytes:
        """The slash coins' randomness, requested when the outcome became final (`slash_delay` later)."""
        if not s.outcome_final:
            self._check_final(s, self.c.block)
        if not s.outcome_final:
            last = max([s.canary_end, *s.window_ends])
            raise NotReady(
                f"session {s.id}: the outcome can change until block {last} (canary reveals, appeals)",
                retry_blocks=max(1, last + 1 - self.c.block),
            )
        target = s.slash_target or 0
        if self.c.block <= target:
            raise NotReady(
                f"session {s.id}: slash randomness at block {target}",
                retry_blocks=target + 1 - self.c.block,
            )
        return keccak(b"slash" + target.to_bytes(32, "big") + s.id.to_bytes(32, "big"))

    # -- reads -------------------------------------------------------------------------------
    def eligible_auditors(self, tier: Tier) -> list[EligibleAuditor]:
        with self.c.op():
            p = self.c.versions[-1]
            out = []
            for addr, a in self.c.auditors.items():
                if a.tier != int(tier) or self.c.weight(a) == 0:
                    continue
                free = a.assets - a.locked
                seats = p.seat_cap if p.slash_amount == 0 else min(p.seat_cap, free // p.slash_amount)
                if seats > 0:
                    out.append(EligibleAuditor(address=addr, tier=TierName.of(tier), free_seats=seats))
            return out

    def profile(self, auditor: str) -> AuditorProfile:
        with self.c.op():
            a = self.c.auditors.get(to_checksum_address(auditor))
            if a is None:
                return AuditorProfile(
                    registered=False, tier=None, expertise=0, encryption_key="0x" + "00" * 32
                )
            return AuditorProfile(
                registered=a.registered, tier=TierName.of(a.tier), expertise=a.expertise, encryption_key=a.key
            )

    def pool(self, auditor: str) -> PoolState:
        with self.c.op():
            a = self.c.auditors.get(to_checksum_address(auditor))
            if a is None:
                return PoolState(assets=0, locked=0, total_shares=0, reputation=0, commission_bps=0)
            return PoolState(
                assets=a.assets,
                locked=a.locked,
                total_shares=a.total_shares,
                reputation=a.reputation,
                commission_bps=0,
            )

    def token_balance(self, holder: str) -> int:
        with self.c.op():
            return self.c.balances.get(to_checksum_address(holder), 0)

    def withdrawal(self, withdrawal_id: int) -> Withdrawal:
        with self.c.op():
            if not 0 <= withdrawal_id < len(self.c.withdrawals):
                raise revert("UnknownWithdrawal", id=withdrawal_id)
            w = self.c.withdrawals[withdrawal_id]
            return Withdrawal(id=withdrawal_id, amount=w.amount, ready_at=w.ready_at, claimed=w.claimed)

    def settlements(self, *, auditor: str | None = None, session_id: int | None = None) -> list[Settlement]:
        with self.c.op():
            who = None if auditor is None else to_checksum_address(auditor)
            return [
                lg.data
                for lg in self.c.logs
                if lg.name == "AuditorSettled"
                and (who is None or lg.data.auditor == who)
                and (session_id is None or lg.data.session_id == session_id)
            ]

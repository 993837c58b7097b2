"""The in-memory chain's registry, staking pools, withdrawals and settlement (see `memory.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from eth_utils import keccak, to_checksum_address

from trustnode.chain.port.memory_state import Auditor, Session, Vote, WithdrawalRow, revert
from trustnode.chain.port.types import (
    AuditorProfile,
    EligibleAuditor,
    NotReady,
    PoolState,
    SeatVote,
    Settlement,
    TxRef,
    Withdrawal,
)
from trustnode.consensus import rules
from trustnode.models.enums import SegmentOutcome, Tier
from trustnode.models.verdict import SessionState, TierName

if TYPE_CHECKING:
    from trustnode.chain.port.memory_state import MemoryChain


class StakingOps:
    """Registry and staking operations of `MemoryPort` (mixed in; `c` is the chain)."""

    c: MemoryChain

    @property
    def address(self) -> str:
        raise NotImplementedError

    def register(self, tier: Tier, expertise: int, encryption_key: bytes) -> TxRef:
        with self.c.op():
            if len(encryption_key) != 32 or not any(encryption_key):
                raise revert("ZeroEncryptionKey")
            if self.address in self.c.auditors and self.c.auditors[self.address].registered:
                raise revert("AlreadyRegistered", auditor=self.address)
            old = self.c.auditors.get(self.address)
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
            return shares, shares * (a.assets + 1) // (a.total_shares + 1)

    def request_withdrawal(self, shares: int) -> int:
        with self.c.op():
            a = self._me()
            held = a.shares.get(self.address, 0)
            if shares <= 0 or shares > held:
                raise revert("InsufficientShares", requested=shares, held=held)
            amount = shares * (a.assets + 1) // (a.total_shares + 1)
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

    def claim_withdrawal(self, withdrawal_id: int) -> TxRef:
        with self.c.op():
            if not 0 <= withdrawal_id < len(self.c.withdrawals):
                raise revert("UnknownWithdrawal", id=withdrawal_id)
            w = self.c.withdrawals[withdrawal_id]
            if w.owner != self.address:
                raise revert("NotWithdrawalOwner", id=withdrawal_id)
            if w.claimed:
                raise revert("AlreadyClaimed", id=withdrawal_id)
            if self.c.now() < w.ready_at:
                raise revert("WithdrawalNotReady", id=withdrawal_id, readyAt=w.ready_at)
            w.claimed = True
            self.c.balances[w.owner] = self.c.balances.get(w.owner, 0) + w.amount
            return self.c.tx()

    # -- settlement ----------------------------------------------------------------------------
    def settle(self, session_id: int, auditor: str, round: int = 0) -> Settlement | None:
        from trustnode.chain.port.ballots import word_ballot

        with self.c.op():
            if round != 0:
                raise NotImplementedError("appeal rounds (issue 15) are not simulated yet")
            s = self.c.session(session_id)
            if s.state not in (SessionState.FINALIZED, SessionState.CANCELLED, SessionState.EXPIRED):
                raise revert("WrongStatus", sessionId=session_id, status=s.state.value)
            segs = s.seats.get(auditor)
            if not segs:
                raise revert("NotSeated", sessionId=session_id, auditor=auditor)
            v = s.votes.setdefault(auditor, Vote())
            if v.settled:
                return None
            seed = self._slash_seed(s)
            p = self.c.params_of(s)
            a = self.c.auditors[auditor]
            ballot = None if v.word is None else word_ballot(v.word, len(segs))
            tx = self.c.tx()
            v.settled = True
            a.locked -= len(segs) * p.slash_amount
            finalized = s.state == SessionState.FINALIZED
            votes = ballot.votes if ballot else (None,) * len(segs)
            counted = [
                rules.Seat(
                    segment_index=g,
                    vote_fail=None if vote is None else vote == SeatVote.FAIL,
                    abstain=vote == SeatVote.ABSTAIN,
                )
                for g, vote in zip(segs, votes, strict=True)
            ]
            econ = rules.EconomicRules(
                reward=p.reward, penalty=p.slash_amount, p_min=p.p_min, p_max=p.p_max, gamma=p.gamma
            )
            result = rules.settle_auditor(
                auditor=auditor, seats=counted, outcomes=s.outcomes or [SegmentOutcome.NONE] * len(s.tiers),
                reputation=a.reputation, draw_reputation=s.draw_reputation.get(auditor, a.reputation),
                pool_assets=a.assets, commission_bps=0, slash_seed=seed, rules=econ, finalized=finalized,
            )  # fmt: skip
            correct, slashes, reward = result.correct, result.slashes, result.gross_reward
            incorrect = result.incorrect
            a.reputation = result.reputation_after
            a.assets += result.reward_to_pool - result.slashed
            s.pool -= reward
            settled = Settlement(
                session_id=s.id, auditor=auditor, correct=correct, incorrect=incorrect, slashes=slashes,
                reward=reward, reputation=a.reputation, tx=tx,
            )  # fmt: skip
            s.note("settle", tx)
            self.c.emit("AuditorSettled", tx, settled)
            return settled

    def _slash_seed(self, s: Session) -> bytes | None:
        """The slash coins' randomness, requested at finalization (`slash_delay` blocks later)."""
        if s.state != SessionState.FINALIZED:
            return None  # no verdict: nothing is scored
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

"""The in-memory chain's commit-reveal (see `memory.py`): protocol v2's verdict word, with abstentions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from eth_utils import to_checksum_address

from trustnode.chain.port.ballots import ballot_word, word_ballot
from trustnode.chain.port.memory_state import Session, Vote, revert
from trustnode.chain.port.types import AbstainNotSupported, Ballot, Capabilities, SeatVote, TxRef, VoteState
from trustnode.consensus import rules
from trustnode.models.verdict import SessionState

if TYPE_CHECKING:
    from trustnode.chain.port.memory_state import MemoryChain


class VotingOps:
    """Commit, reveal and vote reads of `MemoryPort` (mixed in)."""

    c: MemoryChain
    capabilities: Capabilities

    @property
    def address(self) -> str:
        raise NotImplementedError

    def _sync(self, s: Session) -> None:
        raise NotImplementedError

    # -- voting ---------------------------------------------------------------------------------
    def _word(self, ballot: Ballot) -> int:
        if SeatVote.ABSTAIN in ballot.votes and not self.capabilities.abstain:
            raise AbstainNotSupported("this chain cannot record an abstaining seat")
        return ballot_word(ballot)

    def _commitment(self, s: Session, word: int, salt: bytes) -> bytes:
        return rules.commitment(self.c.chain_id, self.c.contract, s.id, self.address, word, salt)

    def vote(self, session_id: int, auditor: str, round: int = 0) -> VoteState:
        with self.c.op():
            self._round0(round)
            s = self.c.session(session_id)
            a = to_checksum_address(auditor)
            v = s.votes.get(a, Vote())
            n = len(s.seats.get(a, []))
            ballot = None if v.word is None else word_ballot(v.word, n)
            return VoteState(
                seat_count=n,
                committed=v.commitment is not None,
                revealed=v.word is not None,
                settled=v.settled,
                ballot=ballot,
            )

    def commitment_matches(self, session_id: int, ballot: Ballot, salt: bytes, round: int = 0) -> bool:
        with self.c.op():
            self._round0(round)
            s = self.c.session(session_id)
            v = s.votes.get(self.address)
            if v is None or v.commitment is None:
                return False
            if v.word is not None:
                return v.word == self._word(ballot)
            return v.commitment == self._commitment(s, self._word(ballot), salt)

    def commit(self, session_id: int, ballot: Ballot, salt: bytes, round: int = 0) -> TxRef:
        with self.c.op():
            self._round0(round)
            s = self.c.session(session_id)
            self._sync(s)
            if s.state not in (SessionState.KEYS_PUBLISHED, SessionState.COMMIT):
                raise revert("WrongStatus", sessionId=session_id, status=s.state.value)
            if self.address not in s.seats:
                raise revert("NotSeated", sessionId=session_id, auditor=self.address)
            commitment = self._commitment(s, self._word(ballot), salt)
            tx = self.c.tx()
            s.votes.setdefault(self.address, Vote()).commitment = commitment
            s.state = SessionState.COMMIT
            if all(s.votes.get(a, Vote()).commitment is not None for a in s.seats):
                s.reveal_deadline = tx.block + self.c.params_of(s).reveal_blocks
                s.state = SessionState.REVEAL
            s.note("commit", tx)
            return tx

    def reveal(self, session_id: int, ballot: Ballot, salt: bytes, round: int = 0) -> TxRef | None:
        with self.c.op():
            self._round0(round)
            s = self.c.session(session_id)
            self._sync(s)
            if s.state != SessionState.REVEAL or self.c.block > s.reveal_deadline:
                raise revert("WrongStatus", sessionId=session_id, status=s.state.value)
            v = s.votes.get(self.address)
            if v is None or v.commitment is None:
                raise revert("NotCommitted", sessionId=session_id, auditor=self.address)
            if v.word is not None:
                return None
            word = self._word(ballot)
            if self._commitment(s, word, salt) != v.commitment:
                raise revert("CommitmentMismatch", sessionId=session_id, auditor=self.address)
            seats = s.seats[self.address]
            if len(ballot.votes) != len(seats):
                raise revert("InvalidVerdicts", verdicts=word, seatCount=len(seats))
            tx = self.c.tx()
            v.word = word
            for seg, vote in zip(seats, ballot.votes, strict=True):
                if vote != SeatVote.ABSTAIN:
                    s.tally[seg][1 if vote == SeatVote.FAIL else 0] += 1
            s.note("reveal", tx)
            return tx

    @staticmethod
    def _round0(round: int) -> None:
        if round != 0:
            raise NotImplementedError("appeal rounds (issue 15) are not simulated yet")

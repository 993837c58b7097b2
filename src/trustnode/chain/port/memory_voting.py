"""The in-memory chain's commit-reveal (see `memory.py`): protocol v2's verdict word, with abstentions,
for round 0 (the session's own panel) and every appeal round alike."""

from __future__ import annotations

from typing import TYPE_CHECKING

from eth_utils import to_checksum_address

from trustnode.chain.port.ballots import ballot_word, word_ballot
from trustnode.chain.port.memory_state import Round, Session, Vote, revert
from trustnode.chain.port.types import AbstainNotSupported, Ballot, Capabilities, SeatVote, TxRef, VoteState
from trustnode.chain.port.types_appeals import RoundState
from trustnode.consensus import rules
from trustnode.models.verdict import SessionState

if TYPE_CHECKING:
    from trustnode.chain.port.memory_state import MemoryChain

#: A panel: the session itself for round 0, a `Round` for an appeal round.
Panel = Session | Round


def set_phase(panel: Panel, phase: str) -> None:
    """Move a panel to the commit or reveal phase (the names both lifecycles share)."""
    if isinstance(panel, Round):
        panel.state = RoundState(phase)
    else:
        panel.state = SessionState(phase)


class VotingOps:
    """Commit, reveal and vote reads of `MemoryPort` (mixed in)."""

    c: MemoryChain
    capabilities: Capabilities

    if TYPE_CHECKING:  # provided by the port class this is mixed into

        @property
        def address(self) -> str: ...

        def _sync(self, s: Session) -> None: ...

    def _panel(self, s: Session, round: int) -> Panel:
        """Round 0 is the session; UnknownRound for a round never opened."""
        if round == 0:
            return s
        if not 1 <= round <= len(s.rounds):
            raise revert("UnknownRound", sessionId=s.id, round=round)
        return s.rounds[round - 1]

    # -- voting ---------------------------------------------------------------------------------
    def _word(self, ballot: Ballot) -> int:
        if SeatVote.ABSTAIN in ballot.votes and not self.capabilities.abstain:
            raise AbstainNotSupported("this chain cannot record an abstaining seat")
        return ballot_word(ballot)

    def _commitment(self, s: Session, word: int, salt: bytes, round: int) -> bytes:
        return rules.commitment(self.c.chain_id, self.c.contract, s.id, self.address, word, salt, round=round)

    def vote(self, session_id: int, auditor: str, round: int = 0) -> VoteState:
        with self.c.op():
            panel = self._panel(self.c.session(session_id), round)
            a = to_checksum_address(auditor)
            v = panel.votes.get(a, Vote())
            n = len(panel.seats.get(a, []))
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
            s = self.c.session(session_id)
            v = self._panel(s, round).votes.get(self.address)
            if v is None or v.commitment is None:
                return False
            if v.word is not None:
                return v.word == self._word(ballot)
            return v.commitment == self._commitment(s, self._word(ballot), salt, round)

    def commit(self, session_id: int, ballot: Ballot, salt: bytes, round: int = 0) -> TxRef:
        with self.c.op():
            s = self.c.session(session_id)
            self._sync(s)
            panel = self._panel(s, round)
            if panel.state.value not in (SessionState.KEYS_PUBLISHED.value, SessionState.COMMIT.value):
                raise self._wrong_phase(s, panel)
            if self.address not in panel.seats:
                raise revert("NotSeated", sessionId=session_id, auditor=self.address)
            commitment = self._commitment(s, self._word(ballot), salt, round)
            tx = self.c.tx()
            panel.votes.setdefault(self.address, Vote()).commitment = commitment
            set_phase(panel, "commit")
            if all(panel.votes.get(a, Vote()).commitment is not None for a in panel.seats):
                panel.reveal_deadline = tx.block + self.c.params_of(s).reveal_blocks
                set_phase(panel, "reveal")
            s.note("commit", tx)
            return tx

    def reveal(self, session_id: int, ballot: Ballot, salt: bytes, round: int = 0) -> TxRef | None:
        with self.c.op():
            s = self.c.session(session_id)
            self._sync(s)
            panel = self._panel(s, round)
            if panel.state.value != SessionState.REVEAL.value or self.c.block > panel.reveal_deadline:
                raise self._wrong_phase(s, panel)
            v = panel.votes.get(self.address)
            if v is None or v.commitment is None:
                raise revert("NotCommitted", sessionId=session_id, auditor=self.address)
            if v.word is not None:
                return None
            word = self._word(ballot)
            if self._commitment(s, word, salt, round) != v.commitment:
                raise revert("CommitmentMismatch", sessionId=session_id, auditor=self.address)
            seats = panel.seats[self.address]
            if len(ballot.votes) != len(seats):
                raise revert("InvalidVerdicts", verdicts=word, seatCount=len(seats))
            tx = self.c.tx()
            v.word = word
            for seg, vote in zip(seats, ballot.votes, strict=True):
                if vote != SeatVote.ABSTAIN:
                    panel.tally[seg][1 if vote == SeatVote.FAIL else 0] += 1
            s.note("reveal", tx)
            return tx

    @staticmethod
    def _wrong_phase(s: Session, panel: Panel) -> Exception:
        if isinstance(panel, Round):
            return revert("WrongRoundStatus", sessionId=s.id, round=panel.number, status=panel.state.value)
        return revert("WrongStatus", sessionId=s.id, status=s.state.value)

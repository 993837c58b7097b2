"""A `Ballot` as the v2 contracts store it: the verdicts word (`Verdicts` library).

Bit j = seat j votes FAIL, bit 128 + j = seat j abstains, neither = PASS; seat order is the
auditor's segments in ascending order.
"""

from __future__ import annotations

from trustnode.chain.port.types import Ballot, SeatVote

ABSTAIN_BIT = 128


def ballot_word(ballot: Ballot) -> int:
    """The verdicts word of `ballot`."""
    word = 0
    for j, v in enumerate(ballot.votes):
        if v == SeatVote.FAIL:
            word |= 1 << j
        elif v == SeatVote.ABSTAIN:
            word |= 1 << (ABSTAIN_BIT + j)
    return word


def word_ballot(word: int, seats: int) -> Ballot:
    """The ballot of a verdicts word over `seats` seats."""
    votes = []
    for j in range(seats):
        if word >> (ABSTAIN_BIT + j) & 1:
            votes.append(SeatVote.ABSTAIN)
        else:
            votes.append(SeatVote.FAIL if word >> j & 1 else SeatVote.PASS)
    return Ballot(votes=tuple(votes))

"""Where a drawn panel stands, for the auditor daemon: round 0's session phases, or an appeal
round's own (issue 15), read as the same phase names so one set of vote steps serves both."""

from __future__ import annotations

from typing import NamedTuple

from trustnode.chain.port import ChainPort
from trustnode.chain.port.types_appeals import RoundState
from trustnode.models.verdict import SessionState

ENDED = (SessionState.CANCELLED, SessionState.EXPIRED)


class Phase(NamedTuple):
    """A panel's phase as the daemon needs it."""

    name: str
    state: SessionState
    commit_deadline: int
    ended: str  # why there is nothing to vote on, or ""


#: An appeal round's states read as the session phases the vote steps follow; the other two
#: (KEYS_WITHHELD, UNFILLABLE) end the round without a vote.
_ROUND_PHASE = {
    RoundState.CREATED: SessionState.CREATED,
    RoundState.DRAWING: SessionState.DRAWING,
    RoundState.KEYS_PUBLISHED: SessionState.KEYS_PUBLISHED,
    RoundState.COMMIT: SessionState.COMMIT,
    RoundState.REVEAL: SessionState.REVEAL,
    RoundState.FINALIZED: SessionState.FINALIZED,
}


def panel_phase(port: ChainPort, session_id: int, round: int) -> Phase:
    """The session's own phase for round 0; the round's for an appeal round."""
    if round == 0:
        info = port.session(session_id)
        ended = f"session {info.state.value}; nothing to vote on" if info.state in ENDED else ""
        return Phase("session", info.state, info.commit_deadline, ended)
    rnd = next((r for r in port.rounds(session_id) if r.round == round), None)
    if rnd is None:
        return Phase(f"round {round}", SessionState.CREATED, 0, f"no appeal round {round} on chain")
    state = _ROUND_PHASE.get(rnd.state)
    ended = "" if state is not None else f"appeal round {round} {rnd.state.value}; nothing to vote on"
    return Phase(f"appeal round {round}", state or SessionState.FINALIZED, rnd.commit_deadline, ended)

"""Where a drawn panel stands, for the auditor daemon: round 0's session phases, or an appeal
round's own (issue 15), read as the same phase names so one set of vote steps serves both; and
the permissionless appeal steps any node may take (draw a round's panel, close the appeal phase),
which the provider's service and the auditors' watchdog share."""

from __future__ import annotations

import logging
from typing import NamedTuple

from trustnode.chain.errors import ChainError, ContractRevertError
from trustnode.chain.port import ChainPort, DrawStep, NotReady, TxRef
from trustnode.chain.port.types_appeals import AppealStatus, RoundInfo, RoundState
from trustnode.models.verdict import SessionState

log = logging.getLogger(__name__)

#: Seats one draw transaction seats at most (a page; the draw resumes where it stopped).
DRAW_PAGE = 64

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


def draw_round(port: ChainPort, rnd: RoundInfo) -> DrawStep | None:
    """Draw a page of an appeal round's panel if it still needs seats and its randomness is there
    (anyone may); None when there was nothing to do yet."""
    if rnd.state not in (RoundState.CREATED, RoundState.DRAWING) or rnd.drawn_seats >= rnd.total_seats:
        return None
    try:
        return port.draw(rnd.session_id, DRAW_PAGE, round=rnd.round)
    except NotReady as exc:
        log.debug("session %d round %d: %s", rnd.session_id, rnd.round, exc)
        return None


def close_if_due(port: ChainPort, sid: int, status: AppealStatus, rounds: list[RoundInfo]) -> bool:
    """End the appeal phase once no window is open and no round runs (so settlement can start);
    True when it sent the transaction that did."""
    if status.final or any(not r.state.ended for r in rounds):
        return False
    block = port.block_number()
    opens = status.opens_at
    if status.appealable_until is None and (opens is None or block < opens) and status.enabled:
        return False  # the first window has not opened yet (the canary reveal window runs first)
    if status.appealable_until is not None and block <= status.appealable_until:
        return False
    try:
        port.advance(sid)
    except ChainError as exc:
        log.debug("session %d: appeal phase not closable yet: %s", sid, exc)
        return False
    return True


def advance_if_due(port: ChainPort, rnd: RoundInfo) -> TxRef | None:
    """End a running appeal round's phase whose deadline passed, or whose votes are all revealed
    (anyone may); the transaction, or None when nothing was due."""
    block = port.block_number()
    if rnd.state in (RoundState.KEYS_PUBLISHED, RoundState.COMMIT):
        due = block > rnd.commit_deadline
    elif rnd.state == RoundState.REVEAL:
        voters = len(port.seats(rnd.session_id, rnd.round))
        due = block > rnd.reveal_deadline or bool(voters and rnd.revealed_count >= voters)
    elif rnd.state == RoundState.DRAWING:  # an unfinished draw, or keys never published
        due = block > (rnd.key_deadline if rnd.drawn_seats == rnd.total_seats else rnd.draw_deadline)
    else:
        due = False
    return port.advance(rnd.session_id)[1] if due else None


def watch_appeals(port: ChainPort, sid: int) -> None:
    """What an auditor waiting for a session's final outcome does for it: draw every appeal round
    nobody has drawn (an appellant that never draws would otherwise make the outcome final
    unreviewed, scoring the auditors against it), end rounds whose deadline passed, and close the
    appeal phase when it is due (a provider that walked away would otherwise leave every seat
    unsettled). Another node doing the same first is no error."""
    for rnd in port.rounds(sid):
        if rnd.state.ended:
            continue
        try:
            if draw_round(port, rnd) is not None:
                log.info("session %d: drew a page of appeal round %d's panel", sid, rnd.round)
                rnd = next(x for x in port.rounds(sid) if x.round == rnd.round)
            advance_if_due(port, rnd)
        except (ContractRevertError, NotReady) as exc:
            log.debug("session %d round %d: %s", sid, rnd.round, exc)
    close_if_due(port, sid, port.appeal_status(sid), port.rounds(sid))

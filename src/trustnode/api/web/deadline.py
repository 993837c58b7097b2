"""Whether a human verdict can still reach the chain, and how long is left, per session.

The auditor daemon commits a decided seat in its session's commit phase, which ends at the
session's commit deadline block (or earlier, when every drawn auditor has committed). The page
asks the chain: the session's status and deadline, the head block, and the recent block time
(to turn blocks into seconds). A verdict is accepted only while at least
`COMMIT_MARGIN_BLOCKS` blocks are left, so the daemon has a block to see it and one to land its
commit. When the chain cannot be read, the seat's own deadline (unix time, set by the daemon)
is used if it has one, and the page says so. An appeal round's seat (round > 0, issue 15) is
timed by its round's own phase and commit deadline (`node.panels.panel_phase`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Literal

from pydantic import BaseModel

from trustnode.chain.port import ChainPort
from trustnode.models.human import HumanSeat
from trustnode.models.verdict import SessionState
from trustnode.node.panels import panel_phase

#: Blocks a decision needs before the deadline: one for the daemon to see it, one for its commit.
COMMIT_MARGIN_BLOCKS = 2
#: Blocks over which the recent block time is measured.
BLOCK_TIME_WINDOW = 32

_CLOSED = {
    SessionState.REVEAL: "the commit phase is over: the session is revealing its votes",
    SessionState.FINALIZED: "the commit phase is over: the session is finalized",
    SessionState.CANCELLED: "the session was cancelled",
    SessionState.EXPIRED: "the session expired",
    SessionState.CREATED: "the session's keys are not published yet",
    SessionState.DRAWING: "the session's keys are not published yet",
}
_NO_SESSION = "there is no such session on this chain"
_COMMITTING = (SessionState.KEYS_PUBLISHED, SessionState.COMMIT)


class CommitWindow(BaseModel):
    """How a session's commit phase stands for a person deciding a seat now."""

    session_id: int
    round: int = 0
    open: bool
    reason: str = ""
    source: Literal["chain", "seat", "none"]
    basis: str = ""  # why the seat's own deadline is used (source "seat")
    status: str | None = None
    deadline_block: int | None = None
    head_block: int | None = None
    blocks_left: int | None = None
    seconds_left: float | None = None

    def countdown(self) -> str:
        """'12 blocks (~40 s) left', or why nothing is left."""
        if not self.open:
            return self.reason
        parts = []
        if self.blocks_left is not None:
            parts.append(f"{self.blocks_left} block{'s' if self.blocks_left != 1 else ''}")
        if self.seconds_left is not None:
            secs = self.seconds_left
            parts.append(f"~{secs:.0f} s" if secs < 120 else f"~{secs / 60:.1f} min")
        if len(parts) == 2:
            return f"{parts[0]} ({parts[1]}) left"
        return f"{parts[0]} left" if parts else "open"


class CommitWindows:
    """Reads commit windows through the chain port, falling back to the seats' own deadlines.

    `block_timestamp(n)` gives block n's time, for the recent block time.
    """

    def __init__(
        self,
        port: Callable[[], ChainPort],
        block_timestamp: Callable[[int], int],
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._port = port
        self._block_timestamp = block_timestamp
        self.clock = clock

    def _seconds_per_block(self, head: int) -> float | None:
        back = min(BLOCK_TIME_WINDOW, head)
        if back < 1:
            return None
        span = self._block_timestamp(head) - self._block_timestamp(head - back)
        return max(0.0, span / back) or None

    def from_chain(self, session_ids: Iterable[int]) -> dict[int, CommitWindow]:
        """Windows of these sessions read from the chain (raises when the chain cannot be read)."""
        port = self._port()
        head = port.block_number()
        per_block = self._seconds_per_block(head)
        count = port.session_count()
        out: dict[int, CommitWindow] = {}
        for sid in sorted(set(session_ids)):
            if not 1 <= sid <= count:
                out[sid] = CommitWindow(session_id=sid, open=False, source="chain", reason=_NO_SESSION)
                continue
            s = port.session(sid)
            out[sid] = _window(sid, s.state, s.commit_deadline, head, per_block)
        return out

    def from_rounds(self, seats: Iterable[HumanSeat]) -> dict[str, CommitWindow]:
        """Windows of appeal-round seats (round > 0), by seat id, from each round's own phase and
        commit deadline on chain (raises when the chain cannot be read)."""
        port = self._port()
        head = port.block_number()
        per_block = self._seconds_per_block(head)
        count = port.session_count()
        out: dict[str, CommitWindow] = {}
        for seat in seats:
            if not 1 <= seat.session_id <= count:
                out[seat.seat_id] = CommitWindow(
                    session_id=seat.session_id,
                    round=seat.round,
                    open=False,
                    source="chain",
                    reason=_NO_SESSION,
                )
                continue
            if not any(r.round == seat.round for r in port.rounds(seat.session_id)):
                why = f"the chain has no appeal round {seat.round} of this session: timed by the daemon's deadline"
                out |= self.from_seats([seat], why)
                continue
            phase = panel_phase(port, seat.session_id, seat.round)
            if phase.ended:
                out[seat.seat_id] = CommitWindow(
                    session_id=seat.session_id,
                    round=seat.round,
                    open=False,
                    source="chain",
                    reason=phase.ended,
                )
                continue
            window = _window(seat.session_id, phase.state, phase.commit_deadline, head, per_block)
            out[seat.seat_id] = window.model_copy(update={"round": seat.round})
        return out

    def from_seats(self, seats: Iterable[HumanSeat], why: str) -> dict[str, CommitWindow]:
        """Windows from the seats' own unix-time deadlines, by seat id, when the chain cannot
        give them (`why`)."""
        now = self.clock()
        out: dict[str, CommitWindow] = {}
        for seat in seats:
            base = {"session_id": seat.session_id, "round": seat.round, "basis": why}
            deadline = seat.commit_deadline
            if deadline is None:
                reason = f"cannot tell whether a verdict can still be committed: {why}"
                out[seat.seat_id] = CommitWindow(open=False, source="none", reason=reason, **base)  # type: ignore[arg-type]
            elif deadline <= now:
                reason = f"the commit deadline passed {now - deadline:.0f} s ago"
                out[seat.seat_id] = CommitWindow(open=False, source="seat", reason=reason, **base)  # type: ignore[arg-type]
            else:
                out[seat.seat_id] = CommitWindow(
                    open=True, source="seat", seconds_left=deadline - now, **base
                )  # type: ignore[arg-type]
        return out


def _window(sid: int, state: SessionState, deadline: int, head: int, per_block: float | None) -> CommitWindow:
    """A panel's commit window from its phase and commit deadline block."""
    base = {"session_id": sid, "source": "chain", "status": state.value, "head_block": head}
    if state not in _COMMITTING:
        return CommitWindow(open=False, reason=_CLOSED[state], **base)  # type: ignore[arg-type]
    left = deadline - head
    seconds = None if per_block is None else max(0.0, left * per_block)
    timing = {"deadline_block": deadline, "blocks_left": max(0, left), "seconds_left": seconds}
    if left <= 0:
        reason = f"the commit deadline (block {deadline}) has passed"
        return CommitWindow(open=False, reason=reason, **base, **timing)  # type: ignore[arg-type]
    if left < COMMIT_MARGIN_BLOCKS:
        reason = (
            f"too late: {left} block left before the commit deadline (block {deadline}); "
            f"your daemon needs {COMMIT_MARGIN_BLOCKS} to commit"
        )
        return CommitWindow(open=False, reason=reason, **base, **timing)  # type: ignore[arg-type]
    return CommitWindow(open=True, **base, **timing)  # type: ignore[arg-type]

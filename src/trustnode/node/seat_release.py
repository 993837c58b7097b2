"""Seats whose keys never come.

An auditor learns of its seats from the draw (`SeatsDrawn`), not only from key publications. A
session its provider abandons before publishing keys (or an appeal round whose keys are withheld,
or a draw that ran out of auditors) still holds the seat's locked stake and an open entry in the
auditor's staking ledger, which holds back its later deposits and withdrawals. Settling is
permissionless, so the auditor does not wait for the provider's node to do it: once the round has
ended (applying the deadline itself when it has passed) it settles its own seats, which pays R per
locked seat and unlocks the stake.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from trustnode.chain.errors import ContractRevertError
from trustnode.chain.port import ChainPort, NotReady, SeatsDrawn, reverts
from trustnode.chain.units import format_trust
from trustnode.models.verdict import SessionState
from trustnode.node.panels import panel_phase
from trustnode.node.votes import VoteRecord, VoteState, VoteStore

log = logging.getLogger("trustnode.node.auditor")

#: Seats looked at per check (each costs a few chain reads).
PER_TICK = 16
#: Seconds between checks: abandonment is the slow path (a key deadline is tens of blocks), and the
#: daemon's tick must stay quick for the seats it votes on.
EVERY_S = 15.0


class SeatRelease:
    """Record this account's drawn seats; settle those whose round ended without keys."""

    def __init__(
        self, port: Callable[[], ChainPort], votes: VoteStore, address: str, *, every_s: float = EVERY_S
    ) -> None:
        self._port, self.votes, self.address = port, votes, address
        self.every_s = every_s
        self._last = float("-inf")

    @property
    def port(self) -> ChainPort:
        return self._port()  # the daemon's current port (it is rebuilt after an outage)

    def on_drawn(self, ev: SeatsDrawn) -> None:
        """A draw call seated these auditors: remember the round if this account is one of them."""
        me = self.address.lower()
        if any(a.lower() == me for a in ev.auditors):
            self.votes.add_drawn(ev.session_id, ev.round)

    def tick(self) -> int:
        """Every `every_s`, look at up to PER_TICK remembered seats; returns how many it settled."""
        if time.monotonic() - self._last < self.every_s:
            return 0
        self._last = time.monotonic()
        settled = 0
        for sid, rnd in self.votes.drawn(PER_TICK):
            done, paid = self._step(sid, rnd)
            settled += paid
            if done:
                self.votes.drop_drawn(sid, rnd)
        return settled

    def _step(self, sid: int, rnd: int) -> tuple[bool, bool]:
        """(nothing left to do for this round, this call settled it)."""
        if self.votes.get(sid, rnd) is not None:
            return True, False  # keys came: the voting path owns the round
        p = self.port
        if p.vote(sid, self.address, rnd).settled:
            return True, False  # somebody (the provider's node) settled it already
        if not self._ended(sid, rnd):
            return False, False
        try:
            done = p.settle(sid, self.address, rnd)
        except NotReady as exc:
            log.debug("session %d round %d: cannot settle yet: %s", sid, rnd, exc)
            return False, False
        except ContractRevertError as exc:
            log.debug("session %d round %d: settle refused: %s", sid, rnd, reverts.explain(exc))
            return False, False
        seats = p.seats(sid, rnd).get(self.address, [])
        ended = panel_phase(p, sid, rnd).ended.split(";")[0]
        note = f"{ended} before its keys came; settled the locked seat(s) myself"
        rec = VoteRecord(
            session_id=sid, round=rnd, manifest_cid="", seats=seats, state=VoteState.SETTLED, note=note
        )
        if done is not None:
            rec.tx_hashes["settle"] = done.tx.tx_hash
        self.votes.put(rec)
        log.info(
            "auditor %s session %d%s: %s (reward %s)",
            self.address,
            sid,
            f" round {rnd}" if rnd else "",
            note,
            format_trust(done.reward) if done is not None else "already paid",
        )
        return True, True

    def _ended(self, sid: int, rnd: int) -> bool:
        """Whether the round ended without a vote; applies a passed draw or key deadline (anyone may)."""
        p = self.port
        phase = panel_phase(p, sid, rnd)
        if phase.ended or phase.state != SessionState.DRAWING:
            return bool(phase.ended)
        if rnd == 0:
            s = p.session(sid)
            drawn, total, draw_end, key_end = s.drawn_seats, s.total_seats, s.draw_deadline, s.key_deadline
        else:
            r = next(x for x in p.rounds(sid) if x.round == rnd)
            drawn, total, draw_end, key_end = r.drawn_seats, r.total_seats, r.draw_deadline, r.key_deadline
        if p.block_number() <= (key_end if drawn == total else draw_end):
            return False
        p.advance(sid)
        return bool(panel_phase(p, sid, rnd).ended)

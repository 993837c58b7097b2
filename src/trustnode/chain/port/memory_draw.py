"""The in-memory chain's round-0 draw, as the DrawModule does it in protocol v2.

It samples the weights fixed when the session opened (`Session.snapshot`), so stake moved after
the opening changes no draw; the free stake a lock needs is read live. Weighted sampling without replacement per segment (an auditor already on the segment is
excluded), a cap of seats per auditor, `slash_amount` locked per seat; a draw that runs out of
eligible weight cancels the session and says why (`DrawFailure`), keeping R per seat already
drawn. Appeal rounds draw in `memory_rounds`. The seed also records what has left each pool by
withdrawal so far (`Session.withdrawn_at_seed`): the appeal rounds add what left after it back to an
auditor's stake when they judge its refusal (rule S'), so a withdrawal cannot make one uncounted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from eth_utils import keccak

from trustnode.chain.port.memory_state import Session, revert, weighted_pick
from trustnode.chain.port.types import DrawFailure, DrawStep, NotReady, SeatsDrawn, TxRef
from trustnode.chain.protocol import SessionParams
from trustnode.models.verdict import SessionState, TierName

if TYPE_CHECKING:
    from trustnode.chain.port.memory_state import MemoryChain


class DrawOps:
    """Round-0 draw of `MemoryPort` (mixed in)."""

    c: MemoryChain

    if TYPE_CHECKING:  # provided by the port class this is mixed into

        def _sync(self, s: Session) -> None: ...

        def _draw_round(self, s: Session, number: int, max_seats: int) -> DrawStep: ...

    def draw(self, session_id: int, max_seats: int, round: int = 0) -> DrawStep:
        with self.c.op():
            s = self.c.session(session_id)
            self._sync(s)
            if round:
                return self._draw_round(s, round, max_seats)
            p = self.c.params_of(s)
            if s.state == SessionState.CREATED:
                if self.c.block <= s.target:
                    raise NotReady(
                        f"session {session_id}: randomness at block {s.target}",
                        retry_blocks=s.target + 1 - self.c.block,
                    )
                s.seed = keccak(s.target.to_bytes(32, "big") + s.id.to_bytes(32, "big"))
                s.withdrawn_at_seed = self.c.withdrawn()
                s.state = SessionState.DRAWING
                s.draw_deadline = self.c.block + p.draw_blocks
            elif s.state != SessionState.DRAWING:
                raise revert(
                    "WrongStatus", sessionId=session_id, status=list(SessionState).index(s.state) + 1
                )
            if s.drawn == s.total_seats:
                raise revert("DrawComplete", sessionId=session_id)
            tx = self.c.tx()
            drawn = 0
            seated: list[str] = []
            while drawn < max_seats and s.drawn < s.total_seats:
                seg, j = s.cursor
                tier = s.tiers[seg]
                s.refusers |= self._refusing(s, seg, tier, p)
                picked = self._pick(s, seg, tier, p)
                if picked is None:
                    self._draw_failed(s, tier, p, tx)
                    break
                a = self.c.auditors[picked]
                a.locked += p.slash_amount
                s.draw_reputation.setdefault(picked, a.reputation)
                s.seats.setdefault(picked, []).append(seg)
                s.segment_auditors[seg].add(picked)
                seated.append(picked)
                drawn += 1
                s.drawn += 1
                s.cursor = (seg + 1, 0) if j + 1 == p.seats_per_tier[tier] else (seg, j + 1)
            if seated:
                self.c.emit("SeatsDrawn", tx, SeatsDrawn(session_id=s.id, round=0, auditors=seated, tx=tx))
            if s.state == SessionState.DRAWING and s.drawn == s.total_seats:
                s.key_deadline = self.c.block + p.key_blocks
            s.note("draw", tx)
            return DrawStep(tx=tx, state=s.state, drawn_seats=s.drawn, total_seats=s.total_seats)

    def _eligible(self, s: Session, tier: int, p: SessionParams) -> list[str]:
        """Auditors of `tier` that could take a seat of `s` at all (ignoring per-segment exclusion)."""
        out = []
        for addr, a in self.c.auditors.items():
            if addr == s.provider or a.tier != tier or not s.snapshot.get(addr):
                continue
            if len(s.seats.get(addr, [])) >= p.seat_cap or a.assets - a.locked < p.slash_amount:
                continue
            out.append(addr)
        return out

    def _pick(self, s: Session, seg: int, tier: int, p: SessionParams) -> str | None:
        """A weighted pick without replacement: auditors already on the segment are excluded."""
        assert s.seed is not None
        pool = [a for a in self._eligible(s, tier, p) if a not in s.segment_auditors[seg]]
        weights = [s.snapshot[a] for a in pool]
        return weighted_pick(pool, weights, s.seed, s.drawn)

    def _refusing(self, s: Session, seg: int, tier: int, p: SessionParams) -> set[str]:
        """Candidates for `seg` whose free stake cannot back a seat now. The contract counts those its
        sampling meets, panel-wide; this mirror counts every such candidate of every drawn segment."""
        return {
            addr
            for addr, a in self.c.auditors.items()
            if addr != s.provider
            and a.tier == tier
            and s.snapshot.get(addr)
            and addr not in s.segment_auditors[seg]
            and len(s.seats.get(addr, [])) < p.seat_cap
            and a.assets - a.locked < p.slash_amount
        }

    def _draw_failed(self, s: Session, tier: int, p: SessionParams, tx: TxRef) -> None:
        """Cancel: keep R per seat already drawn (paid when its auditor settles); refund the rest only
        when nobody refused a lock in the panel (else it is forfeited, as DrawRefused)."""
        need = sum(p.seats_per_tier[t] for t in s.tiers if t == tier)
        have = len(
            {
                a
                for a in self.c.auditors
                if a != s.provider and self.c.auditors[a].tier == tier and s.snapshot.get(a)
            }
        )
        refused = len(s.refusers)
        s.failure = DrawFailure(
            tier=TierName.of(tier),
            seats_needed=need,
            eligible=have,
            per_segment=p.seats_per_tier[tier],
            refused=refused,
        )
        reserved = min(s.pool, s.drawn * p.reward)
        if not refused:
            self.c.balances[s.provider] = self.c.balances.get(s.provider, 0) + s.pool - reserved
        s.pool = reserved
        s.state = SessionState.CANCELLED
        s.termination = "draw_refused" if refused else "draw_failed"
        self.c.emit("DrawFailed", tx, s.failure)

    def draw_failure(self, session_id: int) -> DrawFailure | None:
        with self.c.op():
            return self.c.session(session_id).failure

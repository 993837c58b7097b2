"""The in-memory chain's appeal rounds (issue 15): draw, keys, deadlines and the end of a round.

A round runs like round 0 (`memory.py`): its own randomness (`randomness_delay` blocks after the
appeal), a draw without replacement that excludes the provider and every earlier auditor of each
named segment, keys by the provider, commit-reveal (`memory_voting`), then the round ends:
FINALIZED (its quorum outcomes replace the segments' outcomes and a new appeal window opens on
them while rounds remain), KEYS_WITHHELD (the segments become INCONCLUSIVE, or keep a contested
FAIL: `outcome_after_withheld`; final), REFUSED (the draw failed, admission found the round's
refusals chargeable, `Round.refusals_charged`, and the failing segment's candidates that refused a
lock with a counted refusal hold more than half of its eligible weight, `appeal_draw`: as
KEYS_WITHHELD, bond back whole) or UNFILLABLE (any other failed draw, or nobody drew in time: the
outcomes stand, final).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from eth_utils import keccak

from trustnode.chain.port.memory_state import Round, Session, revert, weighted_pick
from trustnode.chain.port.types import DrawStep, KeysPublished, NotReady, SeatsDrawn, TxRef
from trustnode.chain.port.types_appeals import RoundState
from trustnode.chain.protocol import SessionParams
from trustnode.consensus import rules
from trustnode.consensus.appeal_draw import DrawCandidate, failed_draw_refused
from trustnode.consensus.appeal_resolution import outcome_after_withheld
from trustnode.consensus.appeals import PanelStatus, window_after_round

if TYPE_CHECKING:
    from trustnode.chain.port.memory_state import MemoryChain


class RoundOps:
    """Round lifecycle of `MemoryPort` (mixed in)."""

    c: MemoryChain

    if TYPE_CHECKING:  # provided by the port class this is mixed into

        @property
        def address(self) -> str: ...

        def _recompute_verdict(self, s: Session) -> None: ...

    def _round(self, s: Session, number: int) -> Round:
        if not 1 <= number <= len(s.rounds):
            raise revert("UnknownRound", sessionId=s.id, round=number)
        return s.rounds[number - 1]

    def earlier_auditors(self, s: Session, seg: int, before: int) -> set[str]:
        """Everyone who sat on a panel of `seg` in round 0 or in a round below `before`."""
        out = set(s.segment_auditors[seg])
        for r in s.rounds[: before - 1]:
            out |= r.segment_auditors.get(seg, set())
        return out

    def round_candidates(self, s: Session, seg: int, before: int, p: SessionParams) -> list[str]:
        """Auditors who could sit on `seg`'s panel of round `before` now (cap and stake aside)."""
        tier = s.tiers[seg]
        excluded = self.earlier_auditors(s, seg, before)
        snapshot = self._round(s, before).snapshot
        return [
            addr
            for addr, a in self.c.auditors.items()
            if addr != s.provider
            and a.tier == tier
            and addr not in excluded
            and snapshot.get(addr, 0) > 0
            and a.assets - a.locked >= p.slash_amount
        ]

    def _round_refused(self, s: Session, rnd: Round, seg: int, p: SessionParams) -> bool:
        """Whether a draw that failed on `seg` ends REFUSED (`appeal_draw.failed_draw_refused`): the
        round's refusals are chargeable (`Round.refusals_charged`, decided at admission) and the
        candidates of `seg` that refused with a counted refusal hold more than half of its eligible
        weight (rules R and S').  Eligible: live in the tier, not the provider, on no earlier panel of
        `seg`.  Refused: not on `seg` in this round, under the seat cap, free stake below the lock.  The
        contract meets every such candidate before the segment's weight runs out, so counting them all
        here is its count."""
        earlier = self.earlier_auditors(s, seg, rnd.number)
        on_seg = rnd.segment_auditors.get(seg, set())
        withdrawn = self.c.withdrawn()
        candidates = [
            DrawCandidate(
                weight=rnd.snapshot[addr],
                refused=addr not in on_seg
                and len(rnd.seats.get(addr, [])) < p.seat_cap
                and a.assets - a.locked < p.slash_amount,
                stake=a.assets + withdrawn.get(addr, 0) - s.withdrawn_at_seed.get(addr, 0),
                locked_by_session=self._held_by_session(s, addr, p),
            )
            for addr, a in self.c.auditors.items()
            if addr != s.provider
            and a.tier == s.tiers[seg]
            and addr not in earlier
            and rnd.snapshot.get(addr, 0) > 0
        ]
        return failed_draw_refused(
            candidates, lock_amount=p.slash_amount, refusals_charged=rnd.refusals_charged
        )

    @staticmethod
    def _held_by_session(s: Session, addr: str, p: SessionParams) -> int:
        """The stake this session still locks on `addr` (rule S'): one lock per seat of round 0 and of
        every appeal round, the drawing one's seats so far included; a settled panel released its lock.

        The `stake` it is weighed against is `assets` (free stake plus every lock) plus what left the
        pool by withdrawal since the session's seed (`Session.withdrawn_at_seed`): a withdrawal here
        takes its tokens out of `assets` at once (only from free stake; a held one at its release), so
        without that add-back an auditor could withdraw its free stake after the seed and turn its
        refusal into one the session's locks explain.  A withdrawal parked behind an undrawn snapshot
        leaves `assets` whole until released (and is added back then).  This port models no
        deregistration; an unregistered auditor has no weight and is no candidate at all.  A slash of
        another session does shrink `assets` (a shortfall from outside the session, so counted unless
        the session's locks alone exceed what is left)."""
        panels: list[Session | Round] = [s, *s.rounds]
        return sum(
            len(panel.seats.get(addr, [])) * p.slash_amount
            for panel in panels
            if not (addr in panel.votes and panel.votes[addr].settled)
        )

    def _draw_round(self, s: Session, number: int, max_seats: int) -> DrawStep:
        rnd = self._round(s, number)
        self._sync_round(s, rnd)
        p = self.c.params_of(s)
        if rnd.state == RoundState.CREATED:
            if self.c.block <= rnd.target:
                raise NotReady(
                    f"session {s.id} round {number}: randomness at block {rnd.target}",
                    retry_blocks=rnd.target + 1 - self.c.block,
                )
            rnd.seed = keccak(b"round" + rnd.target.to_bytes(32, "big") + s.id.to_bytes(32, "big"))
            rnd.state = RoundState.DRAWING
            rnd.draw_deadline = self.c.block + p.draw_blocks
        elif rnd.state != RoundState.DRAWING:
            raise revert("WrongRoundStatus", sessionId=s.id, round=number, status=rnd.state.value)
        if rnd.drawn == rnd.total_seats:
            raise revert("DrawComplete", sessionId=s.id, round=number)
        tx = self.c.tx()
        drawn = 0
        seated: list[str] = []
        while drawn < max_seats and rnd.drawn < rnd.total_seats:
            pos, j = rnd.cursor
            seg = rnd.segments[pos]
            picked = self._pick_round(s, rnd, seg, p)
            if picked is None:
                refused = self._round_refused(s, rnd, seg, p)
                self._end_round(s, rnd, RoundState.REFUSED if refused else RoundState.UNFILLABLE, tx)
                break
            a = self.c.auditors[picked]
            a.locked += p.slash_amount
            rnd.draw_reputation.setdefault(picked, a.reputation)
            rnd.seats.setdefault(picked, []).append(seg)
            rnd.segment_auditors.setdefault(seg, set()).add(picked)
            seated.append(picked)
            drawn += 1
            rnd.drawn += 1
            rnd.cursor = (pos + 1, 0) if j + 1 == rnd.seats_k[pos] else (pos, j + 1)
        if seated:
            self.c.emit("SeatsDrawn", tx, SeatsDrawn(session_id=s.id, round=number, auditors=seated, tx=tx))
        if rnd.state == RoundState.DRAWING and rnd.drawn == rnd.total_seats:
            rnd.key_deadline = self.c.block + p.key_blocks
        s.note("draw", tx)
        return DrawStep(tx=tx, state=s.state, drawn_seats=rnd.drawn, total_seats=rnd.total_seats)

    def _pick_round(self, s: Session, rnd: Round, seg: int, p: SessionParams) -> str | None:
        """Weighted pick without replacement from the round's candidates for `seg` (seat cap per round)."""
        assert rnd.seed is not None
        pool = [
            a
            for a in self.round_candidates(s, seg, rnd.number, p)
            if a not in rnd.segment_auditors.get(seg, set()) and len(rnd.seats.get(a, [])) < p.seat_cap
        ]
        weights = [rnd.snapshot[a] for a in pool]
        return weighted_pick(pool, weights, rnd.seed, rnd.drawn)

    def _publish_round_keys(self, s: Session, number: int, manifest_cid: str) -> TxRef:
        rnd = self._round(s, number)
        self._sync_round(s, rnd)
        if self.address != s.provider:
            raise revert("NotProvider", sessionId=s.id)
        if rnd.state != RoundState.DRAWING:
            raise revert("WrongRoundStatus", sessionId=s.id, round=number, status=rnd.state.value)
        if rnd.drawn != rnd.total_seats:
            raise revert("DrawIncomplete", sessionId=s.id)
        if not manifest_cid:
            raise revert("EmptyManifest")
        p = self.c.params_of(s)
        tx = self.c.tx()
        rnd.commit_deadline = tx.block + p.commit_blocks
        rnd.reveal_deadline = rnd.commit_deadline + p.reveal_blocks
        rnd.state = RoundState.KEYS_PUBLISHED
        rnd.manifest = manifest_cid
        s.note("publish_keys", tx)
        event = KeysPublished(session_id=s.id, round=number, manifest_cid=manifest_cid, tx=tx)
        self.c.emit("KeysPublished", tx, event)
        return tx

    def _sync_round(self, s: Session, rnd: Round) -> None:
        """Deadline transitions of a round that need no transaction of their own (like `_sync`)."""
        b = self.c.block
        if rnd.state in (RoundState.KEYS_PUBLISHED, RoundState.COMMIT) and b > rnd.commit_deadline:
            rnd.state = RoundState.REVEAL

    def _advance_rounds(self, s: Session, tx: TxRef) -> None:
        """End every round that is due: nobody drew in time, keys withheld, or its votes are in."""
        b = self.c.block
        p = self.c.params_of(s)
        for rnd in s.rounds:
            self._sync_round(s, rnd)
            if rnd.state == RoundState.CREATED and b > rnd.target + p.draw_blocks:
                # Its randomness was obtainable from `target` on and nobody drew (the chain's
                # `AppealModule._sync`, outside review 6): abandoned, the bond forfeited. The chain reads
                # it as Expired drawn short; the round state mirrors what the EVM port shows.
                self._end_round(s, rnd, RoundState.ABANDONED, tx, abandoned=True)
            elif rnd.state == RoundState.DRAWING:
                if rnd.drawn < rnd.total_seats and b > rnd.draw_deadline:
                    # left short, not failed (a failed draw ends at once): abandoned, as round 0's
                    # DrawAbandoned; anyone could have finished it once the seed was public
                    self._end_round(s, rnd, RoundState.ABANDONED, tx, abandoned=True)
                elif rnd.drawn == rnd.total_seats and b > rnd.key_deadline:
                    self._end_round(s, rnd, RoundState.KEYS_WITHHELD, tx)
            elif rnd.state == RoundState.REVEAL and (
                b > rnd.reveal_deadline
                or sum(v.word is not None for v in rnd.votes.values()) == len(rnd.seats)
            ):
                self._end_round(s, rnd, RoundState.FINALIZED, tx)

    def _end_round(
        self, s: Session, rnd: Round, state: RoundState, tx: TxRef, *, abandoned: bool = False
    ) -> None:
        """The round's outcomes replace its segments' (or stand), and their next windows open."""
        p = self.c.params_of(s)
        rnd.state = state
        for seg, k, appealed in zip(rnd.segments, rnd.seats_k, rnd.appealed, strict=True):
            if abandoned:  # the contested outcome stands and is final; the bond is forfeited
                rnd.status = PanelStatus.ABANDONED
                outcome = appealed
                s.window_ends[seg] = 0
            elif state == RoundState.FINALIZED:
                rnd.status = PanelStatus.DECIDED
                outcome = rules.segment_outcome(rnd.tally[seg][0], rnd.tally[seg][1], k, p.tau_bps)
                s.window_ends[seg] = window_after_round(tx.block, p.appeal_blocks,
                                                        rounds_left=rnd.depth < p.max_rounds)  # fmt: skip
            elif state in (RoundState.KEYS_WITHHELD, RoundState.REFUSED):
                refused = state == RoundState.REFUSED
                rnd.status = PanelStatus.REFUSED if refused else PanelStatus.KEYS_WITHHELD
                outcome = outcome_after_withheld(rnd.depth, appealed)
                s.window_ends[seg] = 0
            else:
                rnd.status = PanelStatus.UNFILLABLE
                outcome = appealed
                s.window_ends[seg] = 0
            rnd.outcomes[seg] = outcome
            s.outcomes[seg] = outcome
        s.note("finalize", tx)
        self._recompute_verdict(s)

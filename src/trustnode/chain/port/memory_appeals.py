"""The in-memory chain's appeal phase (issue 15): windows, appeals, finality and every round's money.

When round 0 finalizes, the canary reveal window runs, then every segment's first appeal window
(`consensus.appeals.first_window`); an appeal is admitted by `appeal_admission.check_session_appeal` and opens a
round (`memory_rounds`); the outcome is final once every window has closed and no round runs,
and then the slash randomness is requested. The money of every round is
`final_settlement.settle_session` over the histories kept here, computed once when the slash
seed is known: appellants' refunds and rewards and the canary refund are paid then, and each
(auditor, round) takes its part when it settles (`memory_staking`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from trustnode.chain.port.ballots import word_ballot
from trustnode.chain.port.memory_rounds import RoundOps
from trustnode.chain.port.memory_state import Round, Session, revert
from trustnode.chain.port.types import SeatVote, TxRef
from trustnode.chain.port.types_appeals import (
    AppealOpened,
    AppealQuote,
    AppealResult,
    AppealStatus,
    RoundInfo,
    RoundSegment,
)
from trustnode.consensus.appeal_admission import Admission, check_session_appeal
from trustnode.consensus.appeal_resolution import resolve
from trustnode.consensus.appeals import (
    Appeal,
    AppealRefused,
    Panel,
    PanelSeat,
    SegmentRecord,
    Vote,
    first_window,
)
from trustnode.consensus.canaries import canary_count, trace_verdict_with_canaries
from trustnode.consensus.final_settlement import (
    RevealedCanary,
    SessionRecord,
    SessionSettlement,
    settle_session,
)
from trustnode.models.enums import SegmentOutcome
from trustnode.models.verdict import SessionState

if TYPE_CHECKING:
    from trustnode.chain.port.memory_state import MemoryChain

_VOTE = {SeatVote.PASS: Vote.PASS, SeatVote.FAIL: Vote.FAIL, SeatVote.ABSTAIN: Vote.ABSTAIN}


class AppealOps(RoundOps):
    """Appeal phase of `MemoryPort` (mixed in)."""

    c: MemoryChain

    # -- the phase -----------------------------------------------------------------------------
    def _open_appeal_phase(self, s: Session, tx: TxRef) -> None:
        """Round 0 finalized in `tx`: the canary window, then every segment's first appeal window."""
        p = self.c.params_of(s)
        s.finalized_at = tx.block
        canaries = canary_count(len(s.tiers), p.canary_rate_bps) > 0
        canary_end, window_end = first_window(
            tx.block, p.canary_reveal_blocks if canaries else 0, p.appeal_blocks
        )
        s.canary_end = canary_end
        enabled = p.appeal.appeal_blocks > 0 and p.appeal.max_rounds > 0
        s.window_ends = [window_end if enabled else 0] * len(s.tiers)
        self._recompute_verdict(s)
        self._check_final(s, tx.block)

    def _recompute_verdict(self, s: Session) -> None:
        """The trace verdict over the current outcomes, canaries out (`trace_verdict_with_canaries`)."""
        p = self.c.params_of(s)
        revealed = [c.index for c in s.canaries_revealed]
        unrevealed = canary_count(len(s.tiers), p.canary_rate_bps) - len(revealed)
        tv = trace_verdict_with_canaries(s.outcomes, s.weights, revealed, unrevealed, p.beta_bps)
        s.passed, s.score_bps = tv.passed, tv.score_bps
        s.pass_weight, s.total_weight = tv.weight_passed, tv.total_weight

    def _running(self, s: Session) -> set[int]:
        return {seg for r in s.rounds if not r.state.ended for seg in r.segments}

    def _last_window(self, s: Session) -> int:
        return max([s.canary_end, *s.window_ends])

    def _check_final(self, s: Session, block: int) -> None:
        """Final once the last window closed and no round runs; the slash randomness is requested then."""
        if s.state != SessionState.FINALIZED or s.outcome_final or self._running(s):
            return
        last = self._last_window(s)
        if block > last or last == s.finalized_at:
            s.outcome_final = True
            s.slash_target = block + self.c.slash_delay if self.c.slash_delay else block - 1

    # -- histories and money -------------------------------------------------------------------
    def _panel_seats(
        self, seats: dict[str, list[int]], votes: dict, reps: dict[str, int], seg: int
    ) -> list[PanelSeat]:  # type: ignore[type-arg]
        out = []
        for a, segs in seats.items():
            if seg not in segs:
                continue
            v = votes.get(a)
            vote = Vote.UNREVEALED
            if v is not None and v.word is not None:
                vote = _VOTE[word_ballot(v.word, len(segs)).votes[segs.index(seg)]]
            out.append(PanelSeat(auditor=a, vote=vote, reputation=reps[a]))
        return out

    def _records(self, s: Session) -> list[SegmentRecord]:
        """Every segment's history of ended panels, as the reference rules take it."""
        out = []
        for i, tier in enumerate(s.tiers):
            panels = [Panel(round=0, seats=self._panel_seats(s.seats, s.votes, s.draw_reputation, i))]
            for r in s.rounds:
                if i not in r.segments or r.status is None:
                    continue
                pos = r.segments.index(i)
                appeal = Appeal(appellant=r.appellant, bond=r.bonds[pos], appealed=r.appealed[pos])
                seats = self._panel_seats(r.seats, r.votes, r.draw_reputation, i)
                panels.append(Panel(round=r.number, seats=seats, status=r.status, appeal=appeal))
            out.append(SegmentRecord(index=i, tier=tier, weight=s.weights[i], panels=panels))
        return out

    def _final_settlement(self, s: Session, seed: bytes) -> SessionSettlement:
        """Every round's money (once): appellants and the canary refund are paid now."""
        if s.settlement is not None:
            return s.settlement
        p = self.c.params_of(s)
        rec = SessionRecord(
            fee=s.fee, seats=p.seats_per_tier, tau_bps=p.tau_bps, beta_bps=p.beta_bps, segments=self._records(s),
            canaries_committed=canary_count(len(s.tiers), p.canary_rate_bps),
            canaries_revealed=[RevealedCanary(index=c.index, verdict=c.verdict) for c in s.canaries_revealed],
        )  # fmt: skip
        budget = min(p.appeal_budget, self.c.treasury)
        result = settle_session(
            rec, appeal=p.appeal, canary=p.canary, econ=p.econ, slash_seed=seed, appeal_budget=budget,
            canary_budget=self.c.treasury - budget,
        )  # fmt: skip
        self.c.treasury -= result.appeal_budget_used + result.canary_refund_paid
        self.c.treasury += result.treasury_in - result.slashed - result.fee_to_treasury - result.pool_slack
        for seg in result.segments:
            for pay in seg.payouts:
                self.c.fund(pay.appellant, pay.refund + pay.reward_paid)
        self.c.fund(s.provider, result.canary_refund_paid)
        s.settlement = result
        return result

    # -- appeals -------------------------------------------------------------------------------
    def _admit(
        self, s: Session, segments: Sequence[int], max_bond: int | None, require_charged: bool = False
    ) -> Admission:
        p = self.c.params_of(s)
        records = self._records(s)
        running = self._running(s)
        return check_session_appeal(
            records, list(segments), seats=p.seats_per_tier, appeal=p.appeal, reward=p.reward,
            block=self.c.block + 1,  # the block the appeal's transaction would be in
            opens_after=s.canary_end if s.finalized_at else None, outcome_final=s.outcome_final,
            window_ends=s.window_ends or [0] * len(s.tiers), rounds_opened=len(s.rounds), running=running,
            canaries={c.index for c in s.canaries_revealed}, members=lambda tier: self._members(s, tier),
            seat_cap=p.seat_cap, max_bond=max_bond, require_charged=require_charged,
        )  # fmt: skip

    def _members(self, s: Session, tier: int) -> int:
        """AppealModule._members: the tier's members with weight in the round's snapshot
        (`ISortition.liveCountAt`), the provider excluded.  The in-memory chain keeps no epochs, so
        "in the snapshot" is "weight now above 0": an auditor who left or unstaked below the minimum
        counts at once, where the contracts count it from the next epoch."""
        return sum(
            1
            for addr, a in self.c.auditors.items()
            if addr != s.provider and a.tier == tier and self.c.weight(a) > 0
        )

    def appeal_quote(self, session_id: int, segments: Sequence[int]) -> AppealQuote:
        with self.c.op():
            s = self.c.session(session_id)
            named = sorted(segments)
            status = self._status(s)
            try:
                adm = self._admit(s, named, None)
            except AppealRefused as exc:
                depth = 1 + len([r for r in s.rounds if named and named[0] in r.segments])
                return AppealQuote(
                    session_id=s.id, segments=named, round=len(s.rounds) + 1, depth=depth, seats=[], bonds=[],
                    bond=0, appealable_until=status.appealable_until, refusal=exc.name, reason=str(exc),
                )  # fmt: skip
            return AppealQuote(
                session_id=s.id, segments=named, round=adm.round, depth=adm.depth, seats=adm.seats,
                bonds=adm.bonds, bond=adm.bond, appealable_until=status.appealable_until, eligible=adm.eligible,
                refusals_charged=adm.refusals_charged,
            )  # fmt: skip

    def appeal(
        self, session_id: int, segments: Sequence[int], max_bond: int, require_charged: bool = False
    ) -> AppealOpened:
        with self.c.op():
            s = self.c.session(session_id)
            named = sorted(segments)
            try:
                adm = self._admit(s, named, max_bond, require_charged)
            except AppealRefused as exc:
                if exc.name == "RefusalsNotCharged":  # AppealAdmission._open's arguments
                    terms = self._admit(s, named, max_bond)
                    raise revert(
                        exc.name, sessionId=s.id, eligible=terms.eligible, needed=2 * terms.seats[0]
                    ) from exc
                raise revert(exc.name, sessionId=s.id, detail=exc.detail) from exc
            me = self.address
            have = self.c.balances.get(me, 0)
            if have < adm.bond:
                raise revert("ERC20InsufficientBalance", sender=me, balance=have, needed=adm.bond)
            self.c.balances[me] = have - adm.bond
            tx = self.c.tx()
            rnd = Round(
                number=adm.round, appellant=me, depth=adm.depth, segments=named, seats_k=adm.seats,
                bonds=adm.bonds, appealed=[s.outcomes[i] for i in named], opened_block=tx.block,
                target=tx.block + self.c.randomness_delay, tally=[[0, 0] for _ in s.tiers],
                refusals_charged=adm.refusals_charged, snapshot=self.c.snapshot(),
            )  # fmt: skip
            s.rounds.append(rnd)
            s.note("appeal", tx)
            opened = AppealOpened(
                session_id=s.id,
                round=rnd.number,
                segments=named,
                depth=rnd.depth,
                appellant=me,
                bond=rnd.bond,
                tx=tx,
            )
            self.c.emit("AppealOpened", tx, opened)
            return opened

    # -- reads ---------------------------------------------------------------------------------
    def _status(self, s: Session) -> AppealStatus:
        p = self.c.params_of(s)
        enabled = p.appeal.appeal_blocks > 0 and p.appeal.max_rounds > 0
        if not s.finalized_at:
            return AppealStatus(session_id=s.id, enabled=enabled)
        running = self._running(s)
        depths = [sum(i in r.segments for r in s.rounds) for i in range(len(s.tiers))]
        canaries = {c.index for c in s.canaries_revealed}
        b = self.c.block
        open_ends = [w for w in s.window_ends if w > b]
        appealable = [
            i
            for i, w in enumerate(s.window_ends)
            if w > b and i not in running and i not in canaries and depths[i] < p.max_rounds
            and b >= s.canary_end and not self._closed(s, i)
        ]  # fmt: skip
        return AppealStatus(
            session_id=s.id, enabled=enabled, opens_at=s.canary_end + 1 if enabled else None,
            appealable_until=max(open_ends) if open_ends and not s.outcome_final else None,
            rounds=len(s.rounds), running=sorted({r.number for r in s.rounds if not r.state.ended}),
            appealable=appealable, depths=depths, window_ends=list(s.window_ends), final=s.outcome_final,
        )  # fmt: skip

    @staticmethod
    def _closed(s: Session, seg: int) -> bool:
        """The segment's last panel did not decide: its outcome is final."""
        last = [r for r in s.rounds if seg in r.segments]
        return bool(last) and last[-1].status is not None and last[-1].status.value != "decided"

    def appeal_status(self, session_id: int) -> AppealStatus:
        with self.c.op():
            return self._status(self.c.session(session_id))

    def rounds(self, session_id: int) -> list[RoundInfo]:
        with self.c.op():
            s = self.c.session(session_id)
            results: dict[tuple[int, int], AppealResult | None] = {}
            if s.outcome_final:
                p = self.c.params_of(s)
                for rec in self._records(s):
                    if len(rec.panels) > 1 and rec.index not in {c.index for c in s.canaries_revealed}:
                        res = resolve(rec, p.seats_per_tier[int(rec.tier)], p.tau_bps, p.appeal, p.reward)
                        for panel, result in zip(rec.panels, res.results, strict=True):
                            results[(panel.round, rec.index)] = result
            return [self._round_info(s, r, results) for r in s.rounds]

    def _round_info(
        self, s: Session, r: Round, results: dict[tuple[int, int], AppealResult | None]
    ) -> RoundInfo:
        segs = [
            RoundSegment(
                index=i, tier=s.tiers[i], depth=r.depth, seats=k, drawn=len(r.segment_auditors.get(i, set())),
                bond=bond, appealed=appealed, pass_votes=r.tally[i][0], fail_votes=r.tally[i][1],
                outcome=r.outcomes.get(i, SegmentOutcome.NONE), status=r.status, result=results.get((r.number, i)),
            )
            for i, k, bond, appealed in zip(r.segments, r.seats_k, r.bonds, r.appealed, strict=True)
        ]  # fmt: skip
        return RoundInfo(
            session_id=s.id, round=r.number, appellant=r.appellant, bond=r.bond, depth=r.depth, state=r.state,
            segments=segs, total_seats=r.total_seats, drawn_seats=r.drawn,
            committed_count=sum(v.commitment is not None for v in r.votes.values()),
            revealed_count=sum(v.word is not None for v in r.votes.values()), opened_block=r.opened_block,
            draw_deadline=r.draw_deadline, key_deadline=r.key_deadline, commit_deadline=r.commit_deadline,
            reveal_deadline=r.reveal_deadline, manifest_cid=r.manifest, refusals_charged=r.refusals_charged,
        )  # fmt: skip

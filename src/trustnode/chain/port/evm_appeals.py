"""Appeals and canaries of `Web3Port` (issue 15), over the AppealModule and the CanaryModule.

A deployment without them (`AuditSessions.appealModule()` zero, or a core that predates issue 15)
reads as appeals disabled, no canary required and the outcome final at finalization; its writes
revert as the contracts do for a round above 0 (`UnsupportedRound`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from eth_utils import to_checksum_address

from trustnode.chain.errors import ChainError, ContractRevertError
from trustnode.chain.port import reverts
from trustnode.chain.port.evm_auditor import ref
from trustnode.chain.port.types import NotReady, TxRef
from trustnode.chain.port.types_appeals import (
    AppealOpened,
    AppealQuote,
    AppealStatus,
    CanaryReveal,
    CanaryState,
    PanelStatus,
    RevealedCanary,
    RoundInfo,
    RoundSegment,
    RoundState,
)
from trustnode.chain.protocol import Protocol, SessionStatus
from trustnode.chain.protocol.models import SessionInfo
from trustnode.chain.protocol.models_appeals import RoundView
from trustnode.consensus.appeal_admission import eligible_auditors, refusals_charged
from trustnode.consensus.appeal_resolution import appeal_result, outcome_after_withheld, scoring_outcome
from trustnode.consensus.appeals import min_bond, panel_seats
from trustnode.consensus.encoding import SegmentLane
from trustnode.models.enums import SegmentOutcome

_ROUND_STATE = {
    SessionStatus.CREATED: RoundState.CREATED,
    SessionStatus.DRAWING: RoundState.DRAWING,
    SessionStatus.KEYS_PUBLISHED: RoundState.KEYS_PUBLISHED,
    SessionStatus.COMMIT: RoundState.COMMIT,
    SessionStatus.REVEAL: RoundState.REVEAL,
    SessionStatus.FINALIZED: RoundState.FINALIZED,
    SessionStatus.CANCELLED: RoundState.UNFILLABLE,
    SessionStatus.EXPIRED: RoundState.KEYS_WITHHELD,
}
_PANEL_STATUS = {
    RoundState.FINALIZED: PanelStatus.DECIDED,
    RoundState.KEYS_WITHHELD: PanelStatus.KEYS_WITHHELD,
    RoundState.UNFILLABLE: PanelStatus.UNFILLABLE,
    RoundState.REFUSED: PanelStatus.REFUSED,
    RoundState.ABANDONED: PanelStatus.ABANDONED,
}


class AppealOps:
    """Issue-15 operations of `Web3Port` (mixed in)."""

    protocol: Protocol

    if TYPE_CHECKING:  # provided by the port class this is mixed into

        def _logs(self, contract: Any, event: str, **filters: Any) -> list[Any]: ...

        def seats(self, session_id: int, round: int = 0) -> dict[str, list[int]]: ...

        def block_number(self) -> int: ...

    @staticmethod
    def _unsupported() -> ContractRevertError:
        return ContractRevertError("UnsupportedRound", {"round": 1}, "0x")

    # -- canaries ------------------------------------------------------------------------------
    def set_canary_operator(self, address: str, allowed: bool) -> TxRef:
        if self.protocol.canary_module is None:
            raise self._unsupported()
        return ref(self.protocol.set_canary_operator(to_checksum_address(address), allowed))

    def is_canary_operator(self, address: str) -> bool:
        if self.protocol.canary_module is None:
            return False
        return self.protocol.is_canary_operator(to_checksum_address(address))

    def commit_canaries(self, session_id: int, commitments: Sequence[bytes]) -> TxRef:
        if self.protocol.canary_module is None:
            raise self._unsupported()
        return ref(self.protocol.commit_canaries(session_id, commitments))

    def reveal_canaries(self, session_id: int, reveals: Sequence[CanaryReveal]) -> TxRef:
        """Each item is checked with `revealCanary` first (its named revert, in the next block), then
        the new ones are sent in one batch; slots revealed already are left out (CanaryAlreadyRevealed
        when nothing is left)."""
        p = self.protocol
        m = p.canary_module
        if m is None:
            raise self._unsupported()
        items: list[CanaryReveal] = []
        already: ContractRevertError | None = None
        try:
            for r in reveals:
                item = (r.slot, r.index, int(r.verdict), r.salt)
                try:
                    p.client.call(m.functions.revealCanary(session_id, item), block="pending")
                except ContractRevertError as exc:
                    if exc.name != "CanaryAlreadyRevealed":
                        raise
                    already = exc
                    continue
                items.append(r)
            if not items:
                raise already or ContractRevertError("EmptyBatch", {}, "0x")
            if len(items) == 1:
                return ref(p.reveal_canary(session_id, items[0]))
            return ref(p.reveal_canaries(session_id, items))
        except ContractRevertError as exc:
            raise self._too_early(exc, "CanaryRevealNotOpen", "the canary reveal window") from exc

    def _too_early(self, exc: ContractRevertError, name: str, what: str) -> Exception:
        """`name` (a window not open yet, `opensAfter` > 0) as NotReady; gas estimation runs at the
        latest block, one before the block the transaction lands in. Anything else as it is."""
        opens_after = int(exc.args_by_name.get("opensAfter", 0)) if exc.name == name else 0
        if not opens_after:
            return exc
        wait = max(1, opens_after + 1 - self.block_number())
        return NotReady(f"{what} opens after block {opens_after}", retry_blocks=wait)

    def canaries(self, session_id: int) -> CanaryState:
        p = self.protocol
        info = p.session(session_id)
        m = p.canary_module
        if m is None or p.appeal_module is None:
            return CanaryState(
                session_id=session_id, required=0, commitments=[], commit_until=info.draw_deadline
            )
        state = p.canary_state(session_id)
        revealed = [
            RevealedCanary(slot=int(ev["args"]["slot"]), index=int(ev["args"]["index"]),
                           verdict=SegmentOutcome(int(ev["args"]["verdict"])))
            for ev in self._logs(m, "CanaryRevealed", sessionId=session_id)
        ]  # fmt: skip
        target = p.draw_randomness(session_id).target_block or self._vrf_commit_until(session_id, info)
        return CanaryState(
            session_id=session_id,
            required=p.canaries_owed(session_id, info.segment_count),
            commitments=["0x" + h.hex() for h in p.canary_commitments(session_id)],
            commit_until=target,
            reveal_from=state.reveal_opens_after + 1 if state.reveal_opens_after else None,
            reveal_until=state.reveal_closes or None,
            revealed=revealed,
            operator=None if int(state.operator, 16) == 0 else to_checksum_address(state.operator),
        )

    # -- appeals -------------------------------------------------------------------------------
    def _bonds(self, session_id: int, segments: Sequence[int], depth: int) -> list[int]:
        p = self.protocol
        core = p.params(p.session(session_id).params_version)
        mult = p.appeal_params_of(session_id).appeal_bond_multiplier_bps
        tiers = [s.tier for s in p.segments(session_id)]
        return [min_bond(core.seats_per_tier[tiers[i]], depth, core.reward, mult) for i in segments]

    def appeal_quote(self, session_id: int, segments: Sequence[int]) -> AppealQuote:
        p = self.protocol
        named = sorted(segments)
        if p.appeal_module is None:
            return AppealQuote(
                session_id=session_id, segments=named, round=1, depth=1, seats=[], bonds=[], bond=0,
                appealable_until=None, refusal="AppealsDisabled", reason="this deployment has no appeals",
            )  # fmt: skip
        until = p.appealable_until(session_id) or None
        try:
            q = p.appeal_quote(session_id, named)
        except ContractRevertError as exc:
            n = p.session(session_id).segment_count
            depth = 1 + (p.segment_appeals(session_id, named[0]).depth if named and named[0] < n else 0)
            return AppealQuote(
                session_id=session_id, segments=named, round=p.session_appeals(session_id).round_count + 1,
                depth=depth, seats=[], bonds=[], bond=0, appealable_until=until, refusal=exc.name,
                reason=reverts.explain(exc),
            )  # fmt: skip
        bonds = self._bonds(session_id, named, q.depth)
        if sum(bonds) != q.bond:
            raise ChainError(
                f"session {session_id}: the contract quotes a bond of {q.bond}, the rules {sum(bonds)}"
            )
        eligible = self._eligible(session_id, named[0], q.depth)
        if refusals_charged(eligible, q.seats[0]) != q.refusals_charged:  # a block between the reads?
            q = p.appeal_quote(session_id, named)
            eligible = self._eligible(session_id, named[0], q.depth)
        if refusals_charged(eligible, q.seats[0]) != q.refusals_charged:
            raise ChainError(
                f"session {session_id}: the contract quotes refusals_charged={q.refusals_charged}, the rules "
                f"{not q.refusals_charged} ({eligible} eligible, k = {q.seats[0]})"
            )
        return AppealQuote(
            session_id=session_id, segments=named, round=q.round, depth=q.depth, seats=q.seats, bonds=bonds,
            bond=q.bond, appealable_until=until, eligible=eligible, refusals_charged=q.refusals_charged,
        )  # fmt: skip

    def _eligible(self, session_id: int, segment: int, depth: int) -> int:
        """`eligible_auditors` of a new panel of `depth` on `segment`, from the chain (AppealModule._eligible):
        its tier's members live in the snapshot the round would draw from, the provider excluded."""
        p = self.protocol
        info = p.session(session_id)
        tier = int(p.segments(session_id)[segment].tier)
        k0 = p.params(info.params_version).seats_per_tier[tier]
        return eligible_auditors(p.live_members(tier, excluding=info.provider), k0, depth)

    def appeal(
        self, session_id: int, segments: Sequence[int], max_bond: int, require_charged: bool = False
    ) -> AppealOpened:
        p = self.protocol
        if p.appeal_module is None:
            raise self._unsupported()
        named = sorted(segments)
        try:
            rnd, receipt = p.appeal(session_id, named, max_bond, require_charged=require_charged)
        except ContractRevertError as exc:
            raise self._too_early(exc, "AppealWindowNotOpen", "the appeal window") from exc
        ev = next(e for e in self._logs(p.appeal_module, "AppealOpened", sessionId=session_id, round=rnd))
        return AppealOpened(
            session_id=session_id, round=rnd, segments=named, depth=int(ev["args"]["depth"]),
            appellant=str(ev["args"]["appellant"]), bond=int(ev["args"]["bond"]), tx=ref(receipt),
        )  # fmt: skip

    def _revealed_canaries(self, session_id: int) -> set[int]:
        if self.protocol.canary_module is None:
            return set()
        return {i for i, _ in self.protocol.revealed_canaries(session_id)}

    def appeal_status(self, session_id: int) -> AppealStatus:
        p = self.protocol
        if p.appeal_module is None:
            status = p.session(session_id).status
            return AppealStatus(session_id=session_id, enabled=False, final=status.terminal)
        params = p.appeal_params_of(session_id)
        enabled = params.appeal_blocks > 0 and params.max_rounds > 0
        sa = p.session_appeals(session_id)
        if not sa.finalized_at:
            return AppealStatus(session_id=session_id, enabled=enabled)
        n = p.session(session_id).segment_count
        if not enabled and not sa.round_count:  # no segment can have a panel: skip n reads
            return AppealStatus(
                session_id=session_id, enabled=False, rounds=0, depths=[0] * n,
                window_ends=[sa.window_end] * n, final=sa.outcome_final,
            )  # fmt: skip
        segs = [p.segment_appeals(session_id, i) for i in range(n)]
        ends = [sa.window_end if g.depth == 0 else g.window_end for g in segs]
        canaries = self._revealed_canaries(session_id)
        b = self.block_number()
        appealable = [
            i
            for i, g in enumerate(segs)
            if enabled and not sa.outcome_final and b >= sa.canary_end and ends[i] > b and not g.pending
            and not g.closed and g.depth < params.max_rounds and i not in canaries
        ]  # fmt: skip
        running = [r for r in range(1, sa.round_count + 1) if not p.round_of(session_id, r).status.terminal]
        return AppealStatus(
            session_id=session_id, enabled=enabled, opens_at=sa.canary_end + 1 if enabled else None,
            appealable_until=p.appealable_until(session_id) or None, rounds=sa.round_count, running=running,
            appealable=appealable, depths=[g.depth for g in segs], window_ends=ends, final=sa.outcome_final,
        )  # fmt: skip

    def _lanes(self, session_id: int, rnd: int, segments: Sequence[int]) -> dict[int, SegmentLane]:
        p = self.protocol

        def word(w: int) -> int:
            if rnd:
                return p.round_word(session_id, rnd, w)
            return int(p.client.call(p.sessions.functions.segmentWord(session_id, 0, w)))

        raw = {w: word(w) for w in {i // 8 for i in segments}}
        return {i: SegmentLane(raw[i // 8], i) for i in segments}

    def rounds(self, session_id: int) -> list[RoundInfo]:
        p = self.protocol
        if p.appeal_module is None:
            return []
        sa = p.session_appeals(session_id)
        if not sa.round_count:
            return []
        core = p.params(p.session(session_id).params_version)
        tiers = [s.tier for s in p.segments(session_id)]
        mult = p.appeal_params_of(session_id).appeal_bond_multiplier_bps
        named = {r: p.round_segments(session_id, r) for r in range(1, sa.round_count + 1)}
        everyone = sorted({i for segs in named.values() for i in segs})
        history = {i: p.segment_appeals(session_id, i) for i in everyone}
        outcome_after: dict[tuple[int, int], SegmentOutcome] = {}
        for i, lane in self._lanes(session_id, 0, everyone).items():
            outcome_after[(0, i)] = lane.outcome
        views: dict[int, RoundView] = {}
        lanes: dict[int, dict[int, SegmentLane]] = {}
        for r, segs in named.items():
            views[r] = p.round_of(session_id, r)
            lanes[r] = self._lanes(session_id, r, segs)
        out = []
        contested: dict[tuple[int, int], tuple[SegmentOutcome, PanelStatus | None]] = {}
        for r, segs in named.items():
            rv = views[r]
            state = RoundState.REFUSED if rv.refused else _ROUND_STATE[rv.status]
            if state == RoundState.KEYS_WITHHELD and rv.drawn_seats < rv.total_seats:
                state = RoundState.ABANDONED  # Expired drawn short: a timely seed nobody drew
            status = _PANEL_STATUS.get(state)
            seats = self.seats(session_id, r)
            rows = []
            for i in segs:
                order = history[i].round_numbers()
                prev = order[order.index(r) - 1] if order.index(r) else 0
                appealed = outcome_after[(prev, i)] if (prev, i) in outcome_after else lanes[prev][i].outcome
                lane = lanes[r][i]
                outcome = lane.outcome
                if state in (RoundState.UNFILLABLE, RoundState.ABANDONED):
                    outcome = appealed
                elif state in (RoundState.KEYS_WITHHELD, RoundState.REFUSED):
                    outcome = outcome_after_withheld(rv.depth, appealed)
                outcome_after[(r, i)] = outcome
                contested[(r, i)] = (appealed, status)
                k0 = core.seats_per_tier[tiers[i]]
                rows.append(
                    RoundSegment(
                        index=i, tier=tiers[i], depth=rv.depth, seats=panel_seats(k0, rv.depth),
                        drawn=sum(1 for held in seats.values() if i in held),
                        bond=min_bond(k0, rv.depth, core.reward, mult), appealed=appealed,
                        pass_votes=lane.pass_votes, fail_votes=lane.fail_votes,
                        outcome=outcome if state.ended else SegmentOutcome.NONE, status=status,
                        result=None,
                    )
                )  # fmt: skip
            keys = self._logs(p.appeal_module, "PanelKeysPublished", sessionId=session_id, round=r)
            out.append(
                RoundInfo(
                    session_id=session_id, round=r, appellant=rv.appellant, bond=rv.bond, depth=rv.depth,
                    state=state, segments=rows, total_seats=rv.total_seats, drawn_seats=rv.drawn_seats,
                    committed_count=rv.committed_count, revealed_count=rv.revealed_count,
                    opened_block=self._opened_block(session_id, r), draw_deadline=rv.draw_deadline,
                    key_deadline=rv.key_deadline, commit_deadline=rv.commit_deadline,
                    reveal_deadline=rv.reveal_deadline,
                    manifest_cid=str(keys[0]["args"]["manifestCid"]) if keys else None,
                    refusals_charged=rv.refusals_charged,
                )
            )  # fmt: skip
        if sa.outcome_final:
            self._settle_results(out, history, contested)
        return out

    @staticmethod
    def _settle_results(
        rounds: list[RoundInfo],
        history: dict[int, Any],
        contested: dict[tuple[int, int], tuple[SegmentOutcome, PanelStatus | None]],
    ) -> None:
        """Each appeal's result against its segment's scoring outcome (`AppealMath.scoringOutcome`):
        an undecided last panel rescores no earlier one."""
        for info in rounds:
            for row in info.segments:
                if row.status is None:
                    continue
                last = history[row.index].round_numbers()[-1]
                last_contested, last_status = contested[(last, row.index)]
                final = SegmentOutcome(history[row.index].outcome)
                scoring = scoring_outcome(final, last_contested, last_status) if last_status else final
                row.result = appeal_result(row.appealed, scoring, row.status)

    def _vrf_commit_until(self, session_id: int, info: SessionInfo) -> int:
        """A source without a target block (VRF): it delivers after `canaryCommitBlocks` + 1
        confirmations at the earliest, so commits are accepted through open + canaryCommitBlocks; the
        draw deadline once the draw started (the window is long closed then)."""
        if info.draw_deadline:
            return int(info.draw_deadline)
        logs = self._logs(self.protocol.sessions, "SessionOpened", sessionId=session_id)
        if not logs:
            return 0
        window = self.protocol.params(info.params_version).canary_commit_blocks
        return int(logs[0]["blockNumber"]) + window

    def _opened_block(self, session_id: int, rnd: int) -> int:
        logs = self._logs(self.protocol.appeal_module, "AppealOpened", sessionId=session_id, round=rnd)
        return int(logs[0]["blockNumber"]) if logs else 0

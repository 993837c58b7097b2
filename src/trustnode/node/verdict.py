"""The one function that turns a session's on-chain state into its verdict (`SessionOutcome`).

The provider stores it with the trace job, the public queries serve it over REST and the
pages, and the CLI prints it: all from `build_outcome`, so they cannot disagree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from trustnode.chain.units import format_trust
from trustnode.models.enums import SegmentOutcome, Verdict
from trustnode.models.hdag import HDAG
from trustnode.models.verdict import (
    CanaryResult,
    SegmentResult,
    SegmentVerdict,
    SessionOutcome,
    SessionState,
    TierName,
    TraceVerdict,
)


class CanaryTruth(Protocol):
    """What the reader knows of one canary (the provider's `CanaryRecord`, or a revealed canary)."""

    @property
    def verdict(self) -> Verdict: ...
    @property
    def revealed(self) -> bool: ...


class SessionFacts(Protocol):
    """What the builder reads about a session (`chain.port.SessionInfo` has it)."""

    @property
    def session_id(self) -> int: ...
    @property
    def state(self) -> SessionState: ...
    @property
    def passed(self) -> bool: ...
    @property
    def score_bps(self) -> int: ...
    @property
    def pass_weight(self) -> int: ...
    @property
    def total_weight(self) -> int: ...
    @property
    def fee(self) -> int: ...


class SegmentFacts(Protocol):
    """One segment's stored word (tier, weight, tally, outcome)."""

    @property
    def index(self) -> int: ...
    @property
    def tier(self) -> int: ...
    @property
    def weight(self) -> int: ...
    @property
    def pass_votes(self) -> int: ...
    @property
    def fail_votes(self) -> int: ...
    @property
    def outcome(self) -> SegmentOutcome: ...


def trust_amount(wei: int) -> str:
    """Decimal TRUST for machine-readable output: "12.5", at most 6 decimals, no unit or grouping."""
    return format_trust(wei, unit=False).replace(",", "")


def build_outcome(
    session: SessionFacts,
    segments: Sequence[SegmentFacts],
    *,
    beta_bps: int,
    hdag: HDAG | None = None,
    node_ids: Mapping[int, str] | None = None,
    cids: Mapping[int, str] | None = None,
    reason: str | None = None,
    hdag_index: Mapping[int, int] | None = None,
    canaries: Mapping[int, CanaryTruth] | None = None,
) -> SessionOutcome:
    """The verdict of `session` as people and programs read it.

    `hdag` (the provider's) adds node ids, original step indices and document order, with
    `hdag_index` mapping a session leaf to its HDAG node when the session holds canaries;
    `node_ids` (from the published shape) adds node ids only. `canaries` (leaf -> truth) are
    listed apart and never counted with the segments. `reason` explains a session that ended
    without a verdict.
    """
    state = session.state
    done = state == SessionState.FINALIZED
    ids = dict(node_ids or {})
    steps: dict[int, int | None] = {}
    starts: dict[int, int] = {}
    if hdag is not None:
        where = dict(hdag_index) if hdag_index is not None else {i: i for i in range(len(hdag.nodes))}
        for i, h in where.items():
            node = hdag.nodes[h]
            ids.setdefault(i, node.id)
            starts[i] = node.span.start
            steps[i] = (
                node.step_index
                if node.step_index is not None
                else hdag.document.step_index_at(node.span.start)
            )
    known = dict(canaries or {})
    canary_results = [
        CanaryResult(
            index=g.index,
            node_id=ids.get(g.index),
            tier=TierName.of(g.tier),
            truth=SegmentVerdict(known[g.index].verdict.value),
            revealed=known[g.index].revealed,
            pass_votes=g.pass_votes,
            fail_votes=g.fail_votes,
            outcome=SegmentVerdict.of(g.outcome, done),
        )
        for g in segments
        if g.index in known
    ]
    segments = [g for g in segments if g.index not in known]
    results = [
        SegmentResult(
            index=g.index,
            node_id=ids.get(g.index),
            step_index=steps.get(g.index),
            tier=TierName.of(g.tier),
            weight=g.weight,
            pass_votes=g.pass_votes,
            fail_votes=g.fail_votes,
            outcome=SegmentVerdict.of(g.outcome, done),
            cid=(cids or {}).get(g.index),
        )
        for g in segments
    ]
    failing = sorted(
        (r for r in results if r.outcome == SegmentVerdict.FAIL),
        key=lambda r: (starts.get(r.index, 0), r.index),
    )
    total_weight = sum(g.weight for g in segments)
    verdict: TraceVerdict | None = None
    if done:
        if session.passed:
            verdict = TraceVerdict.PASS
        elif failing:
            verdict = TraceVerdict.FAIL
        else:
            verdict = TraceVerdict.INCONCLUSIVE
    return SessionOutcome(
        session_id=session.session_id,
        state=state,
        verdict=verdict,
        summary=_summary(state, verdict, results, failing, session, beta_bps, reason),
        reason=reason if state.ended_without_verdict else None,
        passed=session.passed if done else None,
        score_bps=session.score_bps if done else None,
        beta_bps=beta_bps,
        pass_weight=session.pass_weight if done else None,
        total_weight=total_weight,
        fee=trust_amount(session.fee),
        segments=results,
        failing_segments=failing,
        canaries=canary_results,
    )


def _summary(
    state: SessionState,
    verdict: TraceVerdict | None,
    results: list[SegmentResult],
    failing: list[SegmentResult],
    session: SessionFacts,
    beta_bps: int,
    reason: str | None,
) -> str:
    n = len(results)
    threshold = f"a PASS needs {beta_bps / 100:g}% of the segment weight"
    if state.ended_without_verdict:
        return f"{state.value}, no verdict: {reason or 'no reason recorded on chain'}"
    if verdict is None:
        return f"{state.value.replace('_', ' ')}: no verdict yet ({threshold})"
    score = f"score {session.score_bps / 100:g}%"
    undecided = sum(1 for r in results if r.outcome == SegmentVerdict.INCONCLUSIVE)
    no_quorum = f"{undecided} of {n} segments without a quorum" if undecided else ""
    if verdict == TraceVerdict.PASS:
        extra = f"; {no_quorum}" if no_quorum else ""
        return f"PASS: {score}, {threshold}{extra}"
    if verdict == TraceVerdict.FAIL:
        extra = f"; {no_quorum}" if no_quorum else ""
        return f"FAIL: {len(failing)} of {n} segments failed ({score}, {threshold}){extra}"
    voted = any(r.pass_votes or r.fail_votes for r in results)
    why = "nobody voted" if not voted else no_quorum or "the PASS weight fell short"
    return f"INCONCLUSIVE: no quorum ({why}); no segment failed ({score}, {threshold})"

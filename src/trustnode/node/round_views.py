"""What the public reads about a session's appeals and gold canaries (issue 15), from the chain.

REST, the CLI and the session page all show these: "appealable until block N" while a window is
open, every appeal round's segments, votes and outcome, and each revealed canary with its truth
and how every one of its voters scored against it. Amounts are decimal TRUST strings.
"""

from __future__ import annotations

from collections.abc import Collection

from pydantic import BaseModel, Field

from trustnode.chain.port import ChainPort
from trustnode.chain.port.types_appeals import AppealStatus
from trustnode.models.enums import SegmentOutcome, Verdict
from trustnode.models.verdict import SegmentVerdict, TierName
from trustnode.node.verdict import trust_amount


class AppealWindowView(BaseModel):
    """Segments whose appeal window ends at the same block (a round extends only its own segments')."""

    until: int = Field(description="Last block an appeal of these segments is accepted (0: never again).")
    segments: list[int]
    round: int = Field(
        default=0, description="The round whose outcome this window follows (0: the session's)."
    )
    state: str = Field(
        default="open",
        description="open; upcoming (opens after the canary reveal); running (its round has not ended, the "
        "window after it is set when it does); closed.",
    )


class AppealView(BaseModel):
    """Where the session stands with appeals."""

    enabled: bool
    appealable_until: int | None = Field(
        description="Last block an appeal is accepted now (None: no window open)."
    )
    opens_at: int | None = Field(default=None, description="First block of the first window, once known.")
    rounds: int = Field(description="Appeal rounds opened so far.")
    running: list[int] = Field(default_factory=list, description="Rounds not yet ended.")
    appealable: list[int] = Field(default_factory=list, description="Segments an appeal could name now.")
    windows: list[AppealWindowView] = Field(
        default_factory=list,
        description="The appealable segments grouped by the last block of their own window (earliest first).",
    )
    history: list[AppealWindowView] = Field(
        default_factory=list,
        description="Every segment's window, open or not, grouped by the round it follows and its last block "
        "(round first); revealed canaries, never appealable, are left out.",
    )
    final: bool = Field(description="The outcome can no longer change; settlement may start.")


class RoundVoteView(BaseModel):
    auditor: str
    seats: list[int]
    verdicts: list[str] | None = Field(default=None, description="Per seat once revealed.")
    committed: bool
    revealed: bool
    settled: bool


class RoundSegmentView(BaseModel):
    index: int
    tier: TierName
    depth: int = Field(description="This panel's depth on the segment (1: its first appeal panel).")
    seats: int
    appealed: SegmentVerdict = Field(description="The outcome contested.")
    pass_votes: int
    fail_votes: int
    outcome: SegmentVerdict = Field(description="This panel's outcome (PENDING while it runs).")
    status: str | None = Field(
        default=None, description="How the panel ended: decided, keys_withheld, unfillable."
    )
    result: str | None = Field(
        default=None,
        description="Judged against the final outcome: upheld, overturned, voided ... (once final).",
    )


class RoundView(BaseModel):
    """One appeal round: who appealed what, its panel's votes and its outcome."""

    round: int
    appellant: str
    bond: str = Field(description="Decimal TRUST.")
    depth: int
    state: str
    deadlines: dict[str, int]
    manifest_cid: str | None
    refusals_charged: bool = Field(
        description="Decided at admission (eligible >= 2k), the precondition: a failed draw ends refused (a "
        "contested PASS voided, bond back) only if the candidates that refused their stake lock, short by more "
        "than this session's own locks, hold more than half of the failing segment's eligible weight; else "
        "unfillable (the PASS stands)."
    )
    segments: list[RoundSegmentView]
    votes: list[RoundVoteView]


class CanaryVoteView(BaseModel):
    auditor: str
    vote: str | None = Field(description="PASS, FAIL, ABSTAIN, or None when never revealed.")
    agrees: bool | None = Field(description="Whether the vote matches the canary's truth (None: no verdict).")


class CanaryView(BaseModel):
    """A revealed gold canary: its committed truth and how each of its voters scored."""

    index: int
    tier: TierName
    truth: SegmentVerdict
    outcome: SegmentVerdict = Field(description="What its panel's majority said.")
    votes: list[CanaryVoteView]


def appeal_view(
    port: ChainPort,
    session_id: int,
    rounds: list[RoundView] | None = None,
    canaries: Collection[int] = (),
) -> AppealView:
    """`rounds` (this session's, from `round_views`) name the round each window follows; `canaries`
    (revealed) are left out of the history. Without them every window is said to follow round 0."""
    st = port.appeal_status(session_id)
    after = _last_round_naming(rounds or [])
    history = _history(st, after, set(canaries), port.block_number() if st.window_ends else 0)
    return AppealView(
        enabled=st.enabled,
        appealable_until=st.appealable_until,
        opens_at=st.opens_at,
        rounds=st.rounds,
        running=st.running,
        appealable=st.appealable,
        windows=sorted((w for w in history if w.state == "open"), key=lambda w: w.until),
        history=history,
        final=st.final,
    )


def _last_round_naming(rounds: list[RoundView]) -> dict[int, int]:
    """Segment index -> the last appeal round that named it (its window follows that round)."""
    out: dict[int, int] = {}
    for r in sorted(rounds, key=lambda r: r.round):
        for s in r.segments:
            out[s.index] = r.round
    return out


def _history(
    st: AppealStatus, after: dict[int, int], canaries: set[int], block: int
) -> list[AppealWindowView]:
    """Segments grouped by (round followed, state, last block): the session page lists each group."""
    groups: dict[tuple[int, str, int], list[int]] = {}
    open_ = set(st.appealable)
    for i, end in enumerate(st.window_ends):
        if i in canaries:
            continue
        rnd = after.get(i, 0)
        if i in open_:
            state = "open"
        elif rnd in st.running:
            state, end = "running", 0
        elif st.opens_at is not None and block < st.opens_at - 1 and not st.final and end > block:
            state = "upcoming"
        else:
            state = "closed"
        groups.setdefault((rnd, state, end), []).append(i)
    return [
        AppealWindowView(until=end, segments=sorted(segs), round=rnd, state=state)
        for (rnd, state, end), segs in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][2]))
    ]


def _votes(port: ChainPort, session_id: int, round: int) -> list[RoundVoteView]:
    out = []
    for auditor, seats in port.seats(session_id, round).items():
        v = port.vote(session_id, auditor, round)
        out.append(
            RoundVoteView(
                auditor=auditor,
                seats=seats,
                verdicts=None if v.ballot is None else [x.value for x in v.ballot.votes],
                committed=v.committed,
                revealed=v.revealed,
                settled=v.settled,
            )
        )
    return out


def round_views(port: ChainPort, session_id: int) -> list[RoundView]:
    """Every appeal round (1, 2, ...) with its segments and votes."""
    out = []
    for r in port.rounds(session_id):
        done = r.state.ended
        segments = [
            RoundSegmentView(
                index=s.index,
                tier=TierName.of(s.tier),
                depth=s.depth,
                seats=s.seats,
                appealed=SegmentVerdict.of(s.appealed, True),
                pass_votes=s.pass_votes,
                fail_votes=s.fail_votes,
                outcome=SegmentVerdict.of(s.outcome, done),
                status=None if s.status is None else s.status.value,
                result=None if s.result is None else s.result.value,
            )
            for s in r.segments
        ]
        out.append(
            RoundView(
                round=r.round,
                appellant=r.appellant,
                bond=trust_amount(r.bond),
                depth=r.depth,
                state=r.state.value,
                deadlines={
                    "draw": r.draw_deadline,
                    "keys": r.key_deadline,
                    "commit": r.commit_deadline,
                    "reveal": r.reveal_deadline,
                },
                manifest_cid=r.manifest_cid,
                refusals_charged=r.refusals_charged,
                segments=segments,
                votes=_votes(port, session_id, r.round),
            )
        )
    return out


class RevealedTruth(BaseModel):
    """A revealed canary's truth, as `verdict.build_outcome` reads it."""

    verdict: Verdict
    revealed: bool = True

    @classmethod
    def of(cls, outcome: SegmentOutcome) -> RevealedTruth:
        return cls(verdict=Verdict(outcome.name))


def revealed_canaries(port: ChainPort, session_id: int) -> dict[int, SegmentOutcome]:
    """Segment index -> committed truth of every canary revealed on chain."""
    return {r.index: r.verdict for r in port.canaries(session_id).revealed}


def canary_views(port: ChainPort, session_id: int, truths: dict[int, SegmentOutcome]) -> list[CanaryView]:
    """Each revealed canary with its round-0 voters scored against its truth."""
    if not truths:
        return []
    tallies = {t.index: t for t in port.segments(session_id)}
    voters: dict[int, list[CanaryVoteView]] = {i: [] for i in truths}
    for vote in _votes(port, session_id, 0):
        for j, seat in enumerate(vote.seats):
            if seat not in truths:
                continue
            said = vote.verdicts[j] if vote.verdicts is not None and j < len(vote.verdicts) else None
            agrees = None if said in (None, "ABSTAIN") else said == truths[seat].name
            voters[seat].append(CanaryVoteView(auditor=vote.auditor, vote=said, agrees=agrees))
    return [
        CanaryView(
            index=i,
            tier=TierName.of(tallies[i].tier),
            truth=SegmentVerdict(truths[i].name),
            outcome=SegmentVerdict.of(tallies[i].outcome, True),
            votes=voters[i],
        )
        for i in sorted(truths)
    ]

"""One verdict for everyone: names not integers, no red FAIL for a session nobody voted on,
beta in the verdict, the reason of a session that ended without one, decimal TRUST."""

from __future__ import annotations

import json
from dataclasses import dataclass

from trustnode.models.enums import SegmentOutcome
from trustnode.models.verdict import SegmentVerdict, SessionState, TierName, TraceVerdict
from trustnode.node.verdict import build_outcome

TOKEN = 10**18


@dataclass
class Facts:
    session_id: int = 7
    state: SessionState = SessionState.FINALIZED
    passed: bool = False
    score_bps: int = 0
    pass_weight: int = 0
    total_weight: int = 4
    fee: int = 60 * TOKEN + TOKEN // 3


@dataclass
class Seg:
    index: int
    tier: int
    weight: int
    pass_votes: int
    fail_votes: int
    outcome: SegmentOutcome


def test_a_session_nobody_voted_on_is_inconclusive_not_fail() -> None:
    segs = [Seg(i, i % 3, 1, 0, 0, SegmentOutcome.INCONCLUSIVE) for i in range(4)]
    out = build_outcome(Facts(), segs, beta_bps=9000)
    assert out.verdict == TraceVerdict.INCONCLUSIVE
    assert out.passed is False and out.failing_segments == []
    assert "no quorum (nobody voted)" in out.summary and "FAIL" not in out.summary
    assert "90%" in out.summary and out.beta_bps == 9000


def test_fail_names_tiers_and_outcomes_and_gives_decimal_trust() -> None:
    segs = [
        Seg(0, 0, 1, 2, 0, SegmentOutcome.PASS),
        Seg(1, 1, 1, 0, 1, SegmentOutcome.FAIL),
        Seg(2, 2, 2, 1, 1, SegmentOutcome.INCONCLUSIVE),
    ]
    out = build_outcome(
        Facts(score_bps=2500, pass_weight=1), segs, beta_bps=7000, node_ids={1: "ST2"}, cids={0: "bafy"}
    )
    assert out.verdict == TraceVerdict.FAIL
    assert [s.tier for s in out.segments] == [TierName.COMPUTER, TierName.LLM, TierName.HUMAN]
    assert [s.outcome for s in out.segments] == [
        SegmentVerdict.PASS,
        SegmentVerdict.FAIL,
        SegmentVerdict.INCONCLUSIVE,
    ]
    assert [f.node_id for f in out.failing_segments] == ["ST2"]
    assert out.fee == "60.333333"
    doc = json.loads(out.model_dump_json())
    assert doc["segments"][1] | {"tier": "llm", "outcome": "FAIL"} == doc["segments"][1]
    assert doc["verdict"] == "FAIL" and doc["state"] == "finalized"
    assert "1 of 3 segments failed" in out.summary and "1 of 3 segments without a quorum" in out.summary


def test_cancelled_session_carries_its_reason_and_no_verdict() -> None:
    segs = [Seg(0, 1, 1, 0, 0, SegmentOutcome.NONE)]
    reason = "not enough eligible auditors of tier llm: need 3, have 1"
    out = build_outcome(Facts(state=SessionState.CANCELLED), segs, beta_bps=7000, reason=reason)
    assert out.verdict is None and out.passed is None and out.score_bps is None
    assert out.reason == reason and reason in out.summary
    assert out.segments[0].outcome == SegmentVerdict.PENDING


def test_running_session_has_no_verdict_yet() -> None:
    segs = [Seg(0, 0, 1, 1, 0, SegmentOutcome.NONE)]
    out = build_outcome(Facts(state=SessionState.REVEAL), segs, beta_bps=7000, reason="ignored")
    assert out.verdict is None and out.reason is None
    assert out.summary.startswith("reveal: no verdict yet")

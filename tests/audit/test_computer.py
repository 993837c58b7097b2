"""The computer auditor through the Auditor interface."""

from __future__ import annotations

import pytest

from trustnode.audit.base import Auditor
from trustnode.audit.computer import NOTHING_CHECKED, ComputerAuditor
from trustnode.models.audit import AuditTask, ContextSegment, SegmentContext
from trustnode.models.enums import AuditorType, Level, Verdict


def task(content: str, parents: list[str] | None = None) -> AuditTask:
    ctx = SegmentContext(
        problem="A problem.",
        parents=[
            ContextSegment(node_id=f"ST{i + 1}", level=Level.STEP, content=p)
            for i, p in enumerate(parents or [])
        ],
    )
    return AuditTask(
        segment_index=len(parents or []),
        node_id="ST9",
        level=Level.STEP,
        auditor_type=AuditorType.T_AUTO,
        content=content,
        context=ctx,
    )


def test_fail_names_the_claim_and_the_correct_value() -> None:
    res = ComputerAuditor().audit(task("First 3 + 4 = 7, then 7 * 6 = 43 apples."))
    assert res.decided and res.verdict is Verdict.FAIL and res.failed
    assert res.evidence.checkable and res.evidence.auditor == "computer"
    assert res.evidence.claims[0].text == "7 * 6 = 43" and res.evidence.claims[0].correct == "42"
    assert res.evidence.details["first_error"] == {
        "claim": "7 * 6 = 43",
        "found": "43",
        "correct": "42",
        "kind": "exact",
    }
    assert res.evidence.details["claims_checked"] == 2


def test_pass_when_every_claim_holds() -> None:
    res = ComputerAuditor().audit(task(r"So \(\frac{3}{4} \times 364 = 273\) yards, i.e. 273 / 364 = 75%."))
    assert res.decided and res.verdict is Verdict.PASS
    assert res.evidence.details["claims_checked"] == 2 and res.evidence.details["claims_wrong"] == 0


def test_not_checkable_is_undecided_not_a_guess() -> None:
    res = ComputerAuditor().audit(task("Therefore the triangle is isosceles, so x + 2 = 7."))
    assert not res.decided and not res.failed and not res.evidence.checkable
    assert res.evidence.details["reason"] == NOTHING_CHECKED and res.evidence.details["claims_checked"] == 0


def test_names_from_parent_segments() -> None:
    parents = ['Write it as "A * B", where A = (2 - 5) and B = (4 + 3).', "Let's calculate A = (2 - 5) = -3."]
    ok = ComputerAuditor().audit(task("Then A * B = -3 * 7 = -21.", parents))
    assert ok.verdict is Verdict.PASS and ok.evidence.details["names_from_context"] == ["A", "B"]
    bad = ComputerAuditor().audit(task("Then A * B = -3 * 6 = -18.", parents))
    assert bad.failed and bad.evidence.claims[0].correct == "-21"
    blind = ComputerAuditor(use_context=False).audit(task("Then A * B = -3 * 6 = -18.", parents))
    assert blind.verdict is Verdict.PASS  # without the names only "-3 * 6 = -18" is readable


def test_annotation_mode_and_bad_option() -> None:
    t = task("She makes 9 * 2 = $<<9*2=19>>18.")
    assert ComputerAuditor().audit(t).verdict is Verdict.PASS
    assert ComputerAuditor(annotations="check").audit(t).failed
    with pytest.raises(ValueError, match="annotations"):
        ComputerAuditor(annotations="keep")  # type: ignore[arg-type]


def test_evidence_hash_is_deterministic_across_runs() -> None:
    a = ComputerAuditor().audit(task("7 * 6 = 43"))
    b = ComputerAuditor().audit(task("7 * 6 = 43"))
    c = ComputerAuditor().audit(task("7 * 6 = 42"))
    assert a.evidence_hash() == b.evidence_hash() != c.evidence_hash()
    assert isinstance(ComputerAuditor(), Auditor)

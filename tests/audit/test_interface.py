"""The auditor interface: tasks built from HDAG edges and the hashed evidence record."""

from __future__ import annotations

import json

from eth_utils import keccak

from trustnode.audit.base import Auditor, undecided
from trustnode.audit.context import build_tasks
from trustnode.models.audit import AuditResult, AuditTask, CheckedClaim, ClaimStatus, Evidence
from trustnode.models.enums import AuditorType, Level, Relationship, Verdict


def _hdag(make_hdag):
    return make_hdag(
        "What is 2 + 3, doubled?",
        ["We need the doubled sum.", "2 + 3 = 5", "5 * 2 = 10", "So the answer is 10."],
        levels=[Level.GOAL, Level.STEP, Level.STEP, Level.STEP],
        edges=[
            ("G1", "ST1", Relationship.DECOMPOSES_TO),
            ("ST2", "ST1", Relationship.DEPENDS_ON),  # ST2 needs ST1
            ("ST2", "ST3", Relationship.ENABLES),  # ST2 leads to ST3 (ST3's parent)
        ],
        auditors=[AuditorType.T_LLM, AuditorType.T_AUTO, AuditorType.T_AUTO, AuditorType.T_LLM],
    )


def test_build_tasks_context_follows_edge_direction(make_hdag) -> None:
    tasks = build_tasks(_hdag(make_hdag))
    assert [t.node_id for t in tasks] == ["G1", "ST1", "ST2", "ST3"]
    assert [t.segment_index for t in tasks] == [0, 1, 2, 3]
    assert [t.step_index for t in tasks] == [0, 1, 2, 3]
    st1, st2, st3 = tasks[1], tasks[2], tasks[3]
    assert st1.context.problem == "What is 2 + 3, doubled?"
    assert [p.node_id for p in st1.context.parents] == ["G1"]
    assert [c.node_id for c in st1.context.children] == ["ST2"]
    assert [p.node_id for p in st2.context.parents] == ["ST1"]
    assert st2.context.parents[0].relation is Relationship.DEPENDS_ON
    assert [c.node_id for c in st2.context.children] == ["ST3"]
    assert [p.node_id for p in st3.context.parents] == ["ST2"]
    assert st3.context.children == []
    assert st2.auditor_type is AuditorType.T_AUTO and st2.content == "5 * 2 = 10"


def test_evidence_hash_is_keccak_of_canonical_json_and_binds_the_verdict() -> None:
    claim = CheckedClaim(
        text="2 + 3 = 6", expression="2 + 3", found="6", correct="5", status=ClaimStatus.WRONG
    )
    ev = Evidence(auditor="computer", checkable=True, claims=[claim], details={"b": 1, "a": [1, 2]})
    fail = AuditResult(verdict=Verdict.FAIL, decided=True, evidence=ev)
    raw = fail.canonical_json()
    assert raw.startswith(b'{"decided":true,"evidence":{"auditor":"computer"')
    assert raw == json.dumps(fail.model_dump(mode="json"), sort_keys=True, separators=(",", ":")).encode()
    assert fail.evidence_hash() == keccak(raw) and len(fail.evidence_hash()) == 32
    # same content built differently -> same bytes; a different verdict -> a different hash
    again = AuditResult.model_validate_json(fail.model_dump_json())
    assert again.evidence_hash() == fail.evidence_hash()
    passed = fail.model_copy(update={"verdict": Verdict.PASS})
    assert passed.evidence_hash() != fail.evidence_hash()
    assert fail.failed and not passed.failed


def test_undecided_is_not_a_fail_and_protocol_is_structural() -> None:
    r = undecided("computer", "no arithmetic claim found")
    assert not r.decided and not r.failed and not r.evidence.checkable
    assert r.evidence.details["reason"] == "no arithmetic claim found"

    class Always:
        name = "always"

        def audit(self, task: AuditTask) -> AuditResult:
            return r

    assert isinstance(Always(), Auditor)

"""Appeals and gold canaries end to end on the real stack (issue 15): anvil with the deployed
contracts (appeal and canary modules included), js-ipfs, a canary operator node, the provider API
node and auditor daemons in their own processes, one of them lazy (`auditor run --lazy`: always
PASS). The operator writes, commits and reveals the canaries; the provider only places them.

The act is the demo's (`node.appeal_demo.AppealAct`): the lazy auditor alone at the draw passes a
wrong calculation step (round 0's wrong PASS) and votes PASS on FAIL canaries; honest auditors
join; an appeal draws a 3-seat panel of them that overturns the step; the trace verdict is
recomputed FAIL on chain; every round is settled against the final outcome.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from trustnode.chain.accounts import dev_account
from trustnode.models.enums import Tier
from trustnode.node.appeal_demo import DEMO_PROTOCOL, WRONG_STEP, AppealAct, AppealActReport
from trustnode.node.cluster import AuditorSpec, ClusterConfig, LocalCluster

pytestmark = [pytest.mark.chain, pytest.mark.ipfs, pytest.mark.slow]

AUDITORS = [
    AuditorSpec(name="computer-lazy", tier=Tier.COMPUTER, account=6, lazy=True),
    AuditorSpec(name="llm-1", tier=Tier.LLM, account=4),
    AuditorSpec(name="computer-1", tier=Tier.COMPUTER, account=2, later=True),
    AuditorSpec(name="computer-2", tier=Tier.COMPUTER, account=3, later=True),
    AuditorSpec(name="computer-3", tier=Tier.COMPUTER, account=7, later=True),
    AuditorSpec(name="computer-4", tier=Tier.COMPUTER, account=9, later=True),
]
LAZY = str(dev_account(6).address)
HONEST = {str(dev_account(i).address) for i in (2, 3, 7, 9)}  # computer-1..4


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    cfg = ClusterConfig(
        workdir=tmp_path_factory.mktemp("appeals"),
        auditors=AUDITORS,
        seats_per_tier=(1, 1, 1),
        beta_bps=9500,
        protocol=DEMO_PROTOCOL,
        batch_size=1,
        batch_wait_s=0.5,
    )
    with LocalCluster(cfg) as c:
        yield c


@pytest.fixture(scope="module")
def report(cluster: LocalCluster) -> AppealActReport:
    act = AppealAct(
        cluster, lazy="computer-lazy", honest=["computer-1", "computer-2", "computer-3", "computer-4"]
    )
    act.submit()
    act.after_draw()
    return act.finish(timeout_s=300)


def test_the_appeal_overturns_the_lazy_first_round(report: AppealActReport, cluster: LocalCluster) -> None:
    a = report.appeal
    assert WRONG_STEP in a.text and a.verdict_before == "PASS", "round 0's lazy panel passed the wrong step"
    assert (a.round, a.seats, a.outcome, a.result) == (1, 3, "FAIL", "overturned"), a
    assert a.verdict_after == "FAIL", a.summary_after
    assert len(a.panel) == 3 and all(v.endswith(": FAIL") for v in a.panel), a.panel
    assert {v.split(":")[0] for v in a.panel} <= HONEST, "the first round's auditor never sits on the panel"
    session = httpx.get(f"{cluster.api_url}/v1/sessions/{a.session_id}", timeout=30).json()
    assert session["outcome"]["verdict"] == "FAIL" and session["appeal"]["final"] is True
    assert [s["index"] for s in session["outcome"]["failing_segments"]] == [a.segment]
    page = httpx.get(f"{cluster.api_url}/sessions/{a.session_id}", timeout=30).text
    assert 'id="round-1"' in page and "overturned" in page


def test_a_gold_canary_catches_the_lazy_auditor(report: AppealActReport, cluster: LocalCluster) -> None:
    # 6 canaries of which ~half FAIL and nearly all computer-tier: the chance none lands as a FAIL on
    # the lazy auditor is (1 - 0.5 * 14/15)^6, about 2%.
    assert report.canaries, "no FAIL canary was drawn on the lazy auditor"
    for c in report.canaries:
        assert c.truth == "FAIL" and c.mutation is None, "the provider never learns how a canary was made"
        assert f"{LAZY}: PASS (wrong)" in c.votes
    assert report.lazy is not None and report.lazy.incorrect >= 1 + len(report.canaries), report.lazy
    port = cluster.port(2)
    settled = {(s.auditor, s.round) for s in port.settlements(session_id=report.appeal.session_id)}
    assert (LAZY, 0) in settled


def test_the_canaries_are_the_operators_not_the_providers(
    report: AppealActReport, cluster: LocalCluster
) -> None:
    sid = report.appeal.session_id
    state = cluster.port(2).canaries(sid)
    operator = str(dev_account(cluster.cfg.operator_account).address)
    assert state.committed and state.operator == operator, "committed by the operator's account"
    assert sorted(r.index for r in state.revealed) == sorted(
        c["index"] for c in _provider_canaries(cluster, report)
    )
    view = cluster.trace(report.trace_id)
    assert "reveal_canaries" not in view["tx_hashes"], "the provider revealed nothing"
    for c in view["canaries"]:  # truths learned from the operator's reveal on chain, never a salt
        assert c["verdict"] == next(r.verdict.name for r in state.revealed if r.index == c["index"])


def _provider_canaries(cluster: LocalCluster, report: AppealActReport) -> list[dict[str, object]]:
    canaries: list[dict[str, object]] = cluster.trace(report.trace_id)["canaries"]
    return canaries

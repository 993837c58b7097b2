"""Appeals and canaries in every node role on the in-memory chain (issue 15).

A lazy auditor (always PASS) is the only computer auditor when the session is drawn: it passes
the trace's wrong calculation, so round 0's verdict is a wrong PASS, and it votes PASS on a FAIL
canary. Honest computer auditors join afterwards; an appeal of the wrong segment draws them as
a 3-seat panel, which overturns the outcome, and the trace verdict is recomputed as FAIL. Real
provider pipeline and appeal service, real daemons and backends, real local blob store.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.node.conftest import judge_for
from tests.node.memnet import MemoryNet, address
from tests.node.operator_net import OperatorNode
from trustnode.audit.computer import ComputerAuditor
from trustnode.chain.port.memory_state import MEMORY_SESSION_PARAMS
from trustnode.chain.port.types_appeals import RoundState
from trustnode.consensus.appeals import AppealResult
from trustnode.consensus.rules import WAD
from trustnode.llm.fake_server import FakeOpenAIServer
from trustnode.models.enums import Tier, Verdict
from trustnode.models.jobs import JobStatus, TraceJob
from trustnode.models.verdict import TraceVerdict
from trustnode.node.appellant import AppealRefused, appeal
from trustnode.node.backends import LazyAuditor
from trustnode.node.queries import SessionQueries
from trustnode.node.samples import load_samples

TOKEN = 10**18
PARAMS = MEMORY_SESSION_PARAMS.model_copy(
    update={
        "seat_cap": 32, "seats_per_tier": (1, 1, 1), "beta_bps": 9000,
        "appeal_blocks": 12, "max_rounds": 2, "appeal_bond_multiplier_bps": 10_000, "appeal_reward_bps": 2000,
        "appeal_budget": 50 * TOKEN, "canary_rate_bps": 2000, "canary_reveal_blocks": 10,
        "canary_gamma": WAD // 5,
    }
)  # fmt: skip
LAZY, APPELLANT = 2, 9


def _seed_with_fail_computer_canary() -> int:
    """A seed of the operator's generator whose canaries include a computer-tier one (so a FAIL one:
    verdicts are stratified per tier), what the lazy auditor is drawn on; the test does not
    depend on the OS's randomness."""
    from trustnode.hdag.offline import decompose_offline_report
    from trustnode.node.canaries import request_for
    from trustnode.node.canary_operator import write_canaries

    trace = next(s for s in load_samples() if s.name == "tunnel-flawed").trace
    hdag, _ = decompose_offline_report(trace, max_share=0.25)
    req = request_for(hdag, PARAMS.canary_rate_bps, address(1))
    assert req is not None
    for seed in range(100):
        made = write_canaries(req, random.Random(seed))
        if any(c.verdict is Verdict.FAIL and c.text.tier == Tier.COMPUTER for c in made):
            return seed
    raise AssertionError("no seed gives a FAIL computer canary")


def lazy_network(tmp_path: Path, fake_llm: FakeOpenAIServer) -> MemoryNet:
    """The lazy auditor alone in the computer tier, an honest LLM judge, a funded appellant, and a
    canary operator over HTTP (seeded, so a FAIL computer canary is among its texts)."""
    n = MemoryNet(tmp_path, PARAMS, canary_rng=random.Random(0))
    op = OperatorNode(n, tmp_path / "operator", seed=_seed_with_fail_computer_canary())
    n.operator = op  # type: ignore[attr-defined]
    n.start_provider(op.client())
    n.add_auditor("lazy", Tier.COMPUTER, LazyAuditor(), LAZY)
    n.add_auditor("llm-1", Tier.LLM, judge_for(fake_llm, tmp_path / "judge"), 4)
    n.chain.fund(address(APPELLANT), 1_000 * TOKEN)
    return n


def run_to_appeal_window(net: MemoryNet, honest: tuple[int, ...] = (5, 6, 7)) -> tuple[str, int, int]:
    """Submit tunnel-flawed, let honest computer auditors join after the draw, run round 0 and the
    canary reveals, wait for the appeal window: (trace id, session id, the wrongly passed segment)."""
    sample = next(s for s in load_samples() if s.name == "tunnel-flawed")
    tid = net.submit(sample.trace)
    net.until(lambda: net.job(tid).stage.order >= 5, what="the draw")  # DRAWN: the lazy one sits alone
    for i, account in enumerate(honest):  # honest computer auditors join after the draw
        net.add_auditor(f"computer-{i + 1}", Tier.COMPUTER, ComputerAuditor(), account)
    net.until(lambda: net.job(tid).status == JobStatus.DONE, what="round 0 and the canary reveals")
    job = net.job(tid)
    sid, wrong = job.session_id or 0, _wrong_segment(job)
    port = net.chain.port(address(APPELLANT))
    net.until(lambda: wrong in port.appeal_status(sid).appealable, what="the appeal window")
    return tid, sid, wrong


@pytest.fixture
def net(tmp_path: Path, fake_llm: FakeOpenAIServer) -> Iterator[MemoryNet]:
    n = lazy_network(tmp_path, fake_llm)
    yield n
    n.close()


def _wrong_segment(job: TraceJob) -> int:
    assert job.hdag is not None
    return next(
        s.index
        for s in job.segments
        if not s.canary
        and "1.06" in job.hdag.nodes[s.hdag_index if s.hdag_index is not None else s.index].content
    )


def test_an_appeal_overturns_a_lazy_first_round_and_a_canary_catches_the_lazy_auditor(net: MemoryNet) -> None:
    tid, sid, wrong = run_to_appeal_window(net)
    job = net.job(tid)
    assert job.outcome is not None and job.outcome.verdict == TraceVerdict.PASS, "the lazy round 0 passed it"
    assert all(c.committed and c.revealed for c in job.canaries)

    # The canary caught the lazy auditor: a FAIL canary it voted PASS on, scored against the truth.
    queries = SessionQueries(net.provider_ctx)
    caught = [
        (c.index, v)
        for c in queries.session(sid).canaries
        for v in c.votes
        if v.auditor == address(LAZY) and c.truth.value == "FAIL"
    ]
    assert caught and all(v.vote == "PASS" and v.agrees is False for _, v in caught), caught

    port = net.chain.port(address(APPELLANT))
    with pytest.raises(AppealRefused, match="SegmentIsCanary"):
        appeal(port, sid, [job.canaries[0].index])
    view = queries.session(sid)
    assert view.appeal is not None and view.appeal.appealable_until is not None
    with pytest.raises(AppealRefused, match="BondAboveLimit"):
        appeal(port, sid, [wrong], max_bond=1)
    quote, opened = appeal(port, sid, [wrong])
    assert (quote.round, quote.depth, quote.seats) == (1, 1, [3]) and opened.bond == quote.bond > 0

    net.until(lambda: net.job(tid).final, what="the appeal round and the end of the appeal phase")
    job = net.job(tid)
    (rnd,) = port.rounds(sid)
    assert rnd.state == RoundState.FINALIZED and rnd.segments[0].result == AppealResult.OVERTURNED
    assert address(LAZY) not in port.seats(sid, 1), "the first round's auditor is excluded from the panel"
    assert job.outcome is not None and job.outcome.verdict == TraceVerdict.FAIL, job.outcome.summary
    assert [s.index for s in job.outcome.failing_segments] == [wrong]
    view = queries.session(sid)
    (r1,) = view.rounds
    assert r1.segments[0].outcome.value == "FAIL" and r1.segments[0].result == "overturned"
    assert sorted(v.verdicts or [] for v in r1.votes) == [["FAIL"]] * 3
    assert view.outcome.verdict == TraceVerdict.FAIL and view.appeal is not None and view.appeal.final
    # Every seat of every round was settled against the final outcome; the lazy auditor lost.
    settled = {(s.auditor, s.round) for s in port.settlements(session_id=sid)}
    assert (address(LAZY), 0) in settled and all((a, 1) in settled for a in port.seats(sid, 1))
    lazy = next(s for s in port.settlements(session_id=sid) if s.auditor == address(LAZY))
    assert lazy.incorrect >= 2, lazy  # the wrong segment and the FAIL canary

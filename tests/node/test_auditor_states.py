"""The auditor daemon's state machine on the in-memory chain.

Issue 16: no undecided machine result becomes a PASS (it abstains, end to end: on chain, in the
tally, in settlement, with its reason), a JudgeError abstains instead of retrying until the
deadline, a human seat waits. Issue 13: daemons of different accounts share a data dir, a second
daemon of one account is refused, and every step is one INFO line.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from tests.node.conftest import judge_for
from tests.node.memnet import MarkedAuditor, MemoryNet, address, log_lines
from trustnode.audit.computer import ComputerAuditor
from trustnode.audit.human_queue import HumanQueue
from trustnode.chain.port import Ballot, SeatVote
from trustnode.chain.port.memory_state import MEMORY_SESSION_PARAMS
from trustnode.consensus.rules import WAD, reputation_update
from trustnode.llm.fake_server import FakeOpenAIServer, Reply
from trustnode.models.enums import SegmentOutcome, Tier, Verdict
from trustnode.models.jobs import JobStatus
from trustnode.models.trace import TraceInput
from trustnode.models.verdict import TraceVerdict
from trustnode.node.auditor import AuditorDaemon
from trustnode.node.backends import HumanSeats
from trustnode.node.samples import load_samples
from trustnode.node.votes import AccountInUseError, VoteState

PARAMS = MEMORY_SESSION_PARAMS.model_copy(
    update={"seat_cap": 32, "seats_per_tier": (2, 1, 1), "beta_bps": 9000}
)
TRACE = TraceInput(
    problem="A crate holds 12 boxes of 4 apples. How many apples are there?",
    steps=[  # long enough to audit within the 25% privacy share (320 characters of reasoning)
        "A crate holds 12 boxes, and each box holds 4 apples, so we multiply the two counts",
        "12 × 4 = 48 apples in the crate, counting every box once and every apple once.",
        "UNSURE: so the crate is full, as stated, with no box missing from any of its rows",
        "Nothing else in the problem changes the count of apples, so no correction is needed",
        "The answer is 48 apples in the crate, since each of the 12 boxes holds 4 apples",
    ],
    output="48",
)


def _net(root: Path, **chain: Any) -> MemoryNet:
    """Every tier audited by the marked backend: two computer auditors, one LLM, one human."""
    net = MemoryNet(root, PARAMS, **chain)
    for name, tier, account in (
        ("computer-1", Tier.COMPUTER, 2),
        ("computer-2", Tier.COMPUTER, 3),
        ("llm-1", Tier.LLM, 4),
        ("human-1", Tier.HUMAN, 5),
    ):
        net.add_auditor(name, tier, MarkedAuditor(), account)
    return net


def _abstainer(net: MemoryNet, sid: int) -> tuple[str, list[int], list[SeatVote]]:
    """A machine auditor with an abstaining seat: (address, its seats, its revealed votes)."""
    port = net.chain.port(address(2))
    for who, seats in port.seats(sid).items():
        ballot = port.vote(sid, who).ballot
        if ballot is not None and SeatVote.ABSTAIN in ballot.votes:
            return who, seats, list(ballot.votes)
    raise AssertionError("nobody abstained")


def test_an_undecided_machine_seat_abstains_end_to_end(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    net = _net(tmp_path)
    with caplog.at_level(logging.INFO):
        tid = net.submit(TRACE)
        job = net.run([tid])[tid]
    net.close()
    sid = job.session_id or 0
    port = net.chain.port(address(2))
    who, seats, votes = _abstainer(net, sid)
    segs = port.segments(sid)
    abstained = seats[votes.index(SeatVote.ABSTAIN)]
    # Counted in no tally: the segment has no quorum, and nobody turned it into a PASS.
    assert (segs[abstained].pass_votes, segs[abstained].fail_votes) == (0, 0)
    assert segs[abstained].outcome == SegmentOutcome.INCONCLUSIVE
    assert all(s.outcome == SegmentOutcome.PASS for s in segs if s.index != abstained)
    assert job.outcome is not None and job.outcome.verdict in (TraceVerdict.PASS, TraceVerdict.INCONCLUSIVE)
    assert job.outcome.segments[abstained].outcome.value == "INCONCLUSIVE"
    # No reward and no slash for it; reputation moves as for an incorrect vote, in seat order, on
    # a decided segment (SettlementModule: a seat of an INCONCLUSIVE segment moves nothing, and
    # here the abstention left its segment without a quorum).
    settled = port.settlements(auditor=who, session_id=sid)[0]
    passes = votes.count(SeatVote.PASS)
    assert settled.correct == passes and settled.slashes == 0 and settled.reward == passes * PARAMS.reward
    r = WAD // 2
    for seg, vote in zip(seats, votes, strict=True):
        if segs[seg].outcome != SegmentOutcome.INCONCLUSIVE:
            r = reputation_update(r, vote == SeatVote.PASS, PARAMS.gamma)
    assert settled.reputation == r
    # The reason is in the evidence and in the log.
    daemon = next(d for d in net.daemons.values() if d.address == who)
    evidence = json.loads((daemon.evidence_dir / f"{sid}-0-{abstained}.json").read_text())
    assert evidence["vote"] == "ABSTAIN" and evidence["abstain_reason"] == "no checkable arithmetic claim"
    assert any(
        f"segment {abstained}) abstains: no checkable arithmetic claim" in m for m in log_lines(caplog)
    )


def test_a_chain_that_cannot_abstain_gets_pass_and_the_log_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    net = _net(tmp_path, abstain=False)  # protocol v1's verdict word has no abstention
    with caplog.at_level(logging.WARNING):
        tid = net.submit(TRACE)
        job = net.run([tid])[tid]
    net.close()
    port = net.chain.port(address(2))
    sid = job.session_id or 0
    assert all(
        SeatVote.ABSTAIN not in (port.vote(sid, who).ballot or Ballot(votes=())).votes
        for who in port.seats(sid)
    )
    assert any("cannot record an abstention: seats" in m and "go out as PASS" in m for m in log_lines(caplog))


def test_a_judge_that_never_answers_validly_abstains_at_once(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=lambda request: Reply.text("I think it is fine.")) as server:
        net = MemoryNet(tmp_path, PARAMS.model_copy(update={"seats_per_tier": (1, 1, 1)}))
        net.add_auditor("computer-1", Tier.COMPUTER, ComputerAuditor(), 2)
        llm = net.add_auditor("llm-1", Tier.LLM, judge_for(server, tmp_path / "judge"), 4)
        tid = net.submit(load_samples()[2].trace)  # tunnel-flawed: 7 LLM segments
        job = net.run([tid])[tid]
        asked = len(server.chat_requests)
    net.close()
    sid = job.session_id or 0
    rec = llm.votes.get(sid)
    assert rec is not None and rec.state == VoteState.SETTLED
    assert rec.votes and all(v == SeatVote.ABSTAIN for v in rec.votes)
    assert all("JudgeError" in why for why in rec.reasons.values()), rec.reasons
    # Committed in the first commit phase: every seat was asked once (with its bounded repairs).
    assert asked <= len(rec.seats) * 4
    assert job.status == JobStatus.DONE


def test_a_human_seat_waits_for_the_person(tmp_path: Path) -> None:
    net = MemoryNet(tmp_path, PARAMS.model_copy(update={"seats_per_tier": (1, 1, 1)}))
    net.add_auditor("computer-1", Tier.COMPUTER, ComputerAuditor(), 2)
    queue = HumanQueue(tmp_path / "human" / "queue.db")
    who = address(5)
    human = net.add_auditor("human-1", Tier.HUMAN, HumanSeats(queue, who), 5)
    # Only a human can audit "ST" steps of a high-stakes trace; run until its seats are queued.
    trace = load_samples()[0].trace
    assert trace.high_stakes
    net.add_auditor("llm-0", Tier.LLM, ComputerAuditor(), 6)  # any decided backend for the LLM seats
    tid = net.submit(trace)
    for _ in range(30):
        net.round()
        if queue.pending(who):
            break
    pending = queue.pending(who)
    assert pending
    sid = pending[0].session_id
    for _ in range(3):
        human.tick()
    assert human.votes.get(sid).state == VoteState.AUDITING  # type: ignore[union-attr]
    assert not net.chain.port(who).vote(sid, who).committed
    for seat in pending:
        queue.submit(seat.seat_id, Verdict.PASS, {c.key: True for c in seat.criteria}, "ok")
    job = net.run([tid])[tid]
    net.close()
    assert net.chain.port(who).vote(sid, who).revealed and job.status == JobStatus.DONE
    assert all(queue.decision(seat.seat_id).committed for seat in pending)  # type: ignore[union-attr]


def test_daemons_of_two_accounts_share_one_data_dir(tmp_path: Path) -> None:
    shared = tmp_path / "one-data-dir"
    net = MemoryNet(tmp_path, PARAMS)
    a = net.add_auditor("computer-1", Tier.COMPUTER, MarkedAuditor(), 2, data_dir=shared)
    b = net.add_auditor("computer-2", Tier.COMPUTER, MarkedAuditor(), 3, data_dir=shared)
    net.add_auditor("llm-1", Tier.LLM, MarkedAuditor(), 4, data_dir=shared)
    net.add_auditor("human-1", Tier.HUMAN, MarkedAuditor(), 5, data_dir=shared)
    tid = net.submit(TRACE)
    job = net.run([tid])[tid]
    net.close()
    sid = job.session_id or 0
    for d in (a, b):
        vote = net.chain.port(d.address).vote(sid, d.address)
        assert vote.committed and vote.revealed and vote.settled
        assert d.home.parent == shared / "auditor"
    assert a.home != b.home and a.keys.public_key != b.keys.public_key


def test_a_second_daemon_of_one_account_on_one_data_dir_is_refused(tmp_path: Path) -> None:
    net = MemoryNet(tmp_path, PARAMS)
    first = net.add_auditor("computer-1", Tier.COMPUTER, ComputerAuditor(), 2)
    ctx = net.context(tmp_path / "computer-1", address(2))
    with pytest.raises(AccountInUseError, match=f"account {address(2)} already runs on this data directory"):
        AuditorDaemon(ctx, Tier.COMPUTER, ComputerAuditor())
    first.close()
    AuditorDaemon(ctx, Tier.COMPUTER, ComputerAuditor()).close()  # free once the first one stops


def test_each_step_of_a_daemon_is_one_info_line(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    net = _net(tmp_path)
    with caplog.at_level(logging.INFO):
        tid = net.submit(TRACE)
        job = net.run([tid])[tid]
    net.close()
    sid = job.session_id or 0
    who, seats, votes = _abstainer(net, sid)
    tier = next(d.tier for d in net.daemons.values() if d.address == who).name.lower()
    me = f"auditor {who} ({tier}) session {sid}: "
    lines = [m.removeprefix(me) for m in log_lines(caplog) if m.startswith(me)]
    n, p = len(seats), votes.count(SeatVote.PASS)
    counts = f"{n} seat(s): {p} PASS, 0 FAIL, {n - p} ABSTAIN (tx 0x"
    assert lines[0].startswith(f"drawn for {n} seat(s) (segments {seats}); keys published in 0x")
    assert any(m.startswith(f"committed {counts}") for m in lines)
    assert any(m.startswith(f"revealed {counts}") for m in lines)
    settled = [m for m in lines if m.startswith("settled:")]
    reward = p * PARAMS.reward // 10**18
    assert len(settled) == 1 and settled[0].startswith(
        f"settled: {p} correct, 0 incorrect, reward {reward} TRUST, 0 slashes (0 TRUST), reputation 0."
    )

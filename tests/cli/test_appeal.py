"""`trustnode appeal` and `trustnode query` on appeals (issue 15), in-process on the in-memory chain.

The quote is printed before anything is sent; each refusal is named with its reason and exits 1;
an admitted appeal says which round it opened; `query` shows the window, every round's votes and
outcome, and the revealed canaries with how their voters scored.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.node.conftest import fake_llm  # noqa: F401 - the stand-in LLM judge's server
from tests.node.memnet import MemoryNet, address
from tests.node.test_appeals import APPELLANT, LAZY, lazy_network, run_to_appeal_window
from trustnode.audit.computer import ComputerAuditor
from trustnode.cli.main import app
from trustnode.llm.fake_server import FakeOpenAIServer
from trustnode.models.enums import Tier
from trustnode.node.context import NodeContext


@pytest.fixture
def net(
    tmp_path: Path,
    fake_llm: FakeOpenAIServer,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[MemoryNet]:
    n = lazy_network(tmp_path, fake_llm)
    as_appellant = n.context(tmp_path / "appellant", address(APPELLANT))

    def context(*_: Any, **__: Any) -> NodeContext:
        return as_appellant

    monkeypatch.setattr("trustnode.node.context.NodeContext", context)
    monkeypatch.setenv("TRUSTNODE_DATA_DIR", str(tmp_path / "cli"))
    yield n
    n.close()


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def test_refusals_are_named_and_an_admitted_appeal_opens_a_round(net: MemoryNet) -> None:
    _, sid, wrong = run_to_appeal_window(
        net, honest=(5, 6)
    )  # two honest auditors: a 3-seat panel cannot fill
    code, out = _cli("appeal", str(sid), "--segments", str(wrong))
    assert code == 1 and f"an appeal of segments {wrong} is refused" in out, out
    assert "refused: NotEnoughEligibleAuditors: segment" in out and "appeal refused" in out, out
    # the reason once (it was printed in the quote and again in the error), with the error's meaning
    assert out.count("NotEnoughEligibleAuditors") == 1 and "never sat on this segment" in out, out
    net.add_auditor("computer-3", Tier.COMPUTER, ComputerAuditor(), 7)
    code, out = _cli("appeal", str(sid), "--segments", str(wrong), "--bond", "0.000001")
    assert code == 1 and "BondAboveLimit" in out and "above your limit" in out, out
    code, out = _cli("appeal", str(sid), "--segments", "x,1")
    assert code == 1 and "--segments takes segment indices" in out, out
    code, out = _cli("appeal", str(sid), "--segments", str(wrong))
    assert code == 0 and "a panel of 3 seats" in out and "appeal round 1 opened" in out, out
    # 3 eligible for 3 seats: sent, with the warning that refusals would not be charged
    assert "warning: k <= eligible < 2k (k = 3, eligible = 3)" in out and "ends UNFILLABLE" in out, out

    net.until(lambda: net.chain.port(address(APPELLANT)).appeal_status(sid).final, what="the end of appeals")
    code, out = _cli("query", str(sid))
    assert code == 0, out
    assert "lock refusals not charged" in out, out
    assert "appeal round 1 (finalized)" in out and "-> FAIL; overturned" in out, out
    assert "final: the outcome can no longer change" in out, out
    assert f"{address(LAZY)} PASS (WRONG)" in out, out  # the canary that caught the lazy auditor

"""Outside review 20 of da1f8bf: `trustnode appeal` showed one quote and sent another's terms; fixed.

Property (outside review 17, docs/appeals-canaries.md): an appellant who was quoted `refusalsCharged`
is never held to an uncharged round; the CLI "warns first when the round's lock refusals would not be
charged". Attack: `appeal_cmd` quoted and printed quote #1, then `node.appellant.appeal` quoted AGAIN
(#2) and sent `require_charged=q2.refusals_charged`. If the live count moves between the two quotes
(on the contracts: an epoch boundary passes, one block), #2 says uncharged, the appeal was sent without
the requirement and mined as an uncharged round; the user saw #1 (charged, no warning) and never the
warning. Measured (`PYTHONPATH=src /work/main/.venv/bin/pytest tests/cli/test_review20_cli_requotes_before_sending.py
-v`): before (1583240, with RUN_KNOWN=1): quote #1 printed (a panel of 3 seats, bond 18 TRUST; eligible
6 = 2k, charged), no warning; round 1 opened with refusals_charged False (eligible 5 < 2k = 6), 18 TRUST
bond paid, exit 0. After: `appellant.appeal(..., shown=q1)` compares the fresh quote's terms (seats,
bond, refusals_charged) with the shown one and refuses TermsChanged with the fresh quote, nothing sent;
the CLI prints "the terms changed since the quote above" and the new quote with its warning, exit 1, no
round opened. Control: without the move the round is charged, as shown. Severity: LOW.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.chain.test_memory_require_charged import K1, _at_the_margin
from trustnode.cli.main import app


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, move: bool) -> tuple[Any, Any, Any, int, str]:
    chain, provider, appellant, sid, leaver = _at_the_margin()
    quoted = appellant.appeal_quote
    calls: list[int] = []

    def quote_then_the_epoch_turns(*args: Any, **kw: Any) -> Any:
        calls.append(1)
        if move and len(calls) == 2:  # between the CLI's printed quote and the node's own
            chain.auditors[leaver].registered = False
        return quoted(*args, **kw)

    monkeypatch.setattr(appellant, "appeal_quote", quote_then_the_epoch_turns)

    class Context:
        def __init__(self, *_: Any, **__: Any) -> None: ...

        def port(self) -> Any:
            return appellant

    monkeypatch.setattr("trustnode.node.context.NodeContext", Context)
    monkeypatch.setenv("TRUSTNODE_DATA_DIR", str(tmp_path / "cli"))
    result = CliRunner().invoke(app, ["appeal", str(sid), "--segments", "0"])
    return result, provider, chain, sid, result.output


def test_the_cli_sends_the_terms_it_showed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result, provider, _, sid, out = _run(tmp_path, monkeypatch, move=True)
    shown, _, after = out.partition("the terms changed since the quote above")
    assert "warning" not in shown.split("appeal round")[0], out  # the user was shown charged terms only
    rounds = provider.rounds(sid)
    # Property: either refused (nothing sent, the new quote shown) or opened charged as shown.
    assert result.exit_code == 1 or (rounds and rounds[-1].refusals_charged), out
    # The fix refuses: TermsChanged, the new (uncharged) quote printed with its warning, no round opened.
    assert result.exit_code == 1 and "TermsChanged" in out and "warning" in after, out
    assert not rounds, rounds


def test_control_without_a_move_the_round_is_charged_as_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result, provider, _, sid, out = _run(tmp_path, monkeypatch, move=False)
    assert result.exit_code == 0, out
    assert "warning" not in out, out
    assert provider.rounds(sid)[-1].refusals_charged is True
    assert K1 > 0

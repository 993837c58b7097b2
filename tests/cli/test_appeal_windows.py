"""Each segment's own appeal window, as the README operator met it on the devnet (session 5).

A round on segment 0 extended its window to block 876 while segments 1..8 kept theirs (759).
`trustnode query` said "appealable until block 876 (segments 0, 1, ..., 8)" and `trustnode appeal 5
--segments 1` quoted "appealable until block 876" beside its refusal AppealWindowClosed(windowEnd=759),
with "would open round 2, their panel of depth 1 ... total bond 0" for a round that could not open.
Now the quote names the named segments' window, query groups segments by their windows, and a
refused quote shows only the refusal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from trustnode.chain.errors import ContractRevertError
from trustnode.chain.port.types_appeals import AppealQuote, AppealStatus
from trustnode.cli.main import app
from trustnode.cli.user import print_appeals
from trustnode.node.appellant import quote
from trustnode.node.queries import SessionView
from trustnode.node.round_views import appeal_view

ENDS = [876, 759, 759]  # segment 0's window extended by its round, 1 and 2 as round 0 left them


class Port:
    """The two reads the appellant and the readers make, as the devnet answered them."""

    def appeal_quote(self, session_id: int, segments: list[int]) -> AppealQuote:
        return AppealQuote(
            session_id=session_id, segments=segments, round=2, depth=1, seats=[3] * len(segments),
            bonds=[18 * 10**18] * len(segments), bond=18 * 10**18 * len(segments), appealable_until=876,
            eligible=3, refusals_charged=False,
        )  # fmt: skip

    def block_number(self) -> int:
        return 800

    def appeal_status(self, session_id: int) -> AppealStatus:
        return AppealStatus(
            session_id=session_id, enabled=True, opens_at=460, appealable_until=876, rounds=1,
            appealable=[0, 1, 2], depths=[1, 0, 0], window_ends=ENDS,
        )  # fmt: skip


def test_the_quote_names_the_appealed_segments_window() -> None:
    port: Any = Port()
    assert quote(port, 5, [1]).appealable_until == 759
    assert quote(port, 5, [0]).appealable_until == 876
    assert quote(port, 5, [0, 2]).appealable_until == 759  # the round must be mined in both


def test_query_groups_the_segments_by_their_window(capsys: pytest.CaptureFixture[str]) -> None:
    view = appeal_view(Port(), 5)  # type: ignore[arg-type]
    assert [(w.until, w.segments) for w in view.windows] == [(759, [1, 2]), (876, [0])]
    print_appeals(SessionView.model_construct(appeal=view, rounds=[], canaries=[]))
    out = " ".join(capsys.readouterr().out.split())
    assert "appealable until block 759 (segments 1, 2); until block 876 (segments 0)" in out, out


def test_the_cli_quote_shows_the_window_and_a_refusal_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = Port()

    class Context:
        def __init__(self, *_: Any, **__: Any) -> None: ...

        def port(self) -> Any:
            return port

    monkeypatch.setattr("trustnode.node.context.NodeContext", Context)
    monkeypatch.setenv("TRUSTNODE_DATA_DIR", str(tmp_path / "cli"))
    result = CliRunner().invoke(app, ["appeal", "5", "--segments", "1", "--quote"])
    assert result.exit_code == 0, result.output
    assert "total bond 18 TRUST; appealable until block 759" in result.output, result.output

    closed = port.appeal_quote(5, [1]).model_copy(
        update={
            "seats": [],
            "bonds": [],
            "bond": 0,
            "refusal": "AppealWindowClosed",
            "reason": "closed at 759",
        }
    )
    monkeypatch.setattr(port, "appeal_quote", lambda *_: closed)
    result = CliRunner().invoke(app, ["appeal", "5", "--segments", "1", "--quote"])
    assert result.exit_code == 1, result.output
    assert "session 5: an appeal of segments 1 is refused" in result.output, result.output
    assert "refused: AppealWindowClosed: closed at 759" in result.output, result.output
    assert "would open round" not in result.output and "total bond" not in result.output, result.output


def test_a_refusal_is_printed_once_with_its_meaning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README operator's `appeal 5 --segments 1` printed the EVM port's pre-check reason in the
    quote and again in the error ("AppealWindowClosed: reverted with AppealWindowClosed(...)"); a
    revert at send time named the error twice in one line. Now: once, with its meaning, exit 1."""
    port = Port()
    sent: list[int] = []

    class Context:
        def __init__(self, *_: Any, **__: Any) -> None: ...

        def port(self) -> Any:
            return port

    monkeypatch.setattr("trustnode.node.context.NodeContext", Context)
    monkeypatch.setenv("TRUSTNODE_DATA_DIR", str(tmp_path / "cli"))
    revert = ContractRevertError("AppealWindowClosed", {"windowEnd": 759}, "0x")
    closed = port.appeal_quote(5, [1]).model_copy(
        update={
            "seats": [],
            "bonds": [],
            "bond": 0,
            "refusal": revert.name,
            "reason": f"{revert}: the window",
        }
    )
    monkeypatch.setattr(port, "appeal_quote", lambda *_: closed)
    monkeypatch.setattr(port, "appeal", lambda *a, **k: sent.append(1), raising=False)
    for args in (["--quote"], []):
        result = CliRunner().invoke(app, ["appeal", "5", "--segments", "1", *args])
        out = result.output
        assert result.exit_code == 1 and not sent, out
        assert out.count("AppealWindowClosed") == 1 and "windowEnd=759" in out, out

    monkeypatch.setattr(port, "appeal_quote", Port().appeal_quote)  # admissible; the chain refuses the tx

    def refuse(*_: Any, **__: Any) -> None:
        raise ContractRevertError("AppealWindowClosed", {"windowEnd": 759}, "0x", tx_hash="0xab")

    monkeypatch.setattr(port, "appeal", refuse, raising=False)
    result = CliRunner().invoke(app, ["appeal", "5", "--segments", "1"])
    out = result.output
    assert result.exit_code == 1 and "total bond 18 TRUST" in out, out
    assert out.count("AppealWindowClosed") == 1 and "in tx 0xab" in out, out
    assert "the segment's appeal window has closed" in out, out  # the meaning


def test_a_segment_the_session_does_not_have_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`appeal 2 --segments 42` on a 9-segment session was refused AppealWindowClosed(segment=42)."""
    port = Port()

    class Context:
        def __init__(self, *_: Any, **__: Any) -> None: ...

        def port(self) -> Any:
            return port

    monkeypatch.setattr("trustnode.node.context.NodeContext", Context)
    monkeypatch.setenv("TRUSTNODE_DATA_DIR", str(tmp_path / "cli"))
    result = CliRunner().invoke(app, ["appeal", "5", "--segments", "1,42"])
    assert result.exit_code == 1, result.output
    assert "session 5 has 3 segments (0..2); there is no segment 42" in result.output, result.output
    assert "would open round" not in result.output, result.output

"""`trustnode appeal` when the terms change between the quote and the mined transaction (outside
review 17): the appeal is sent requiring the quoted charged refusals, refused RefusalsNotCharged with
nothing paid, and the CLI prints the new quote with its warning and exits 1 (run again to accept)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.chain.test_memory_require_charged import K1, _at_the_margin
from trustnode.cli.main import app


@pytest.mark.parametrize("json_out", [False, True])
def test_the_cli_shows_the_new_terms_when_refusals_are_no_longer_charged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, json_out: bool
) -> None:
    chain, provider, appellant, sid, leaver = _at_the_margin()
    send = appellant.appeal

    def mined_after_the_count_moved(*args: Any, **kw: Any) -> Any:
        chain.auditors[leaver].registered = False
        return send(*args, **kw)

    monkeypatch.setattr(appellant, "appeal", mined_after_the_count_moved)

    class Context:
        def __init__(self, *_: Any, **__: Any) -> None: ...

        def port(self) -> Any:
            return appellant

    monkeypatch.setattr("trustnode.node.context.NodeContext", Context)
    monkeypatch.setenv("TRUSTNODE_DATA_DIR", str(tmp_path / "cli"))
    before = chain.balances[appellant.address]
    args = ["appeal", str(sid), "--segments", "0", *(["--json"] if json_out else [])]
    result = CliRunner().invoke(app, args)
    out = result.output
    assert result.exit_code == 1, out
    assert chain.balances[appellant.address] == before and provider.rounds(sid) == []
    if json_out:
        body = json.loads(out[out.index("{") : out.rindex("}") + 1])  # the error line is on stderr
        assert body["refusal"] == "RefusalsNotCharged" and body["quote"]["refusals_charged"] is False, out
        return
    assert "the terms changed before the appeal was mined; the quote now:" in out, out
    assert f"warning: k <= eligible < 2k (k = {K1}, eligible = {2 * K1 - 1})" in out, out
    assert "appeal refused: RefusalsNotCharged" in out and "quote again" in out, out

"""`trustnode decompose` through typer's CliRunner (offline, LLM against the fake server)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from trustnode.cli.decompose import register
from trustnode.hdag.fake_responder import respond
from trustnode.llm.fake_server import FakeOpenAIServer, Reply

runner = CliRunner()


def _app() -> typer.Typer:
    app = typer.Typer()
    register(app)
    app.command("noop")(lambda: None)  # keep typer in multi-command mode
    return app


def _write(tmp_path: Path, obj: object, name: str = "trace.json") -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(obj), encoding="utf-8")
    return p


TRACE = {"problem": "What is 2 + 3?", "thinking": "We add. 2 + 3 = 5. So the answer is 5.", "output": "5"}


@pytest.fixture(autouse=True)
def _no_llm_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("TRUSTNODE_LLM__BASE_URL", raising=False)
    monkeypatch.setenv("TRUSTNODE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)


def test_offline_json_to_stdout(tmp_path: Path) -> None:
    res = runner.invoke(_app(), ["decompose", str(_write(tmp_path, TRACE)), "--json"])
    assert res.exit_code == 0, res.output
    payload = json.loads(res.stdout)
    assert payload["report"]["ok"] and payload["hdag"]["metadata"]["decomposer"] == "offline"
    assert payload["out"] is None


@pytest.mark.parametrize(
    ("fmt", "head"), [("mermaid", "flowchart TD"), ("dot", "digraph HDAG {"), ("json", "{")]
)
def test_formats_to_file(tmp_path: Path, fmt: str, head: str) -> None:
    out = tmp_path / f"out.{fmt}"
    res = runner.invoke(
        _app(), ["decompose", str(_write(tmp_path, TRACE)), "--offline", "-f", fmt, "-o", str(out)]
    )
    assert res.exit_code == 0, res.output
    assert out.read_text(encoding="utf-8").startswith(head)


def test_png_needs_out_and_is_written(tmp_path: Path) -> None:
    f = _write(tmp_path, TRACE)
    assert runner.invoke(_app(), ["decompose", str(f), "-f", "png"]).exit_code == 1
    out = tmp_path / "h.png"
    res = runner.invoke(_app(), ["decompose", str(f), "-f", "png", "-o", str(out)])
    assert res.exit_code == 0 and out.read_bytes()[:4] == b"\x89PNG"


def test_processbench_and_dagmath_records(tmp_path: Path) -> None:
    pb = {
        "id": "x",
        "generator": "g",
        "problem": "Add.",
        "steps": ["1 + 1 = 2.", "So 2."],
        "label": -1,
        "final_answer_correct": True,
    }
    res = runner.invoke(_app(), ["decompose", str(_write(tmp_path, pb)), "--json"])
    assert res.exit_code == 0, res.output
    nodes = json.loads(res.stdout)["hdag"]["nodes"]
    assert {n["step_index"] for n in nodes} == {None, 0, 1}
    dm = {
        "problem": "Add.",
        "steps": [
            {"step_id": 1, "node": "1 + 1 = 2.", "direct_dependent_steps": None},
            {"step_id": 2, "node": "So 2.", "direct_dependent_steps": [1]},
        ],
    }
    res = runner.invoke(_app(), ["decompose", str(_write(tmp_path, dm, "dm.json")), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["hdag"]["metadata"]["decomposer"] == "import-dagmath"


def test_bad_inputs_are_clear_errors_and_write_nothing(tmp_path: Path) -> None:
    out = tmp_path / "never.json"
    bad_json = tmp_path / "bad.json"
    bad_json.write_text("{nope", encoding="utf-8")
    cases = [
        [str(bad_json)],
        [str(_write(tmp_path, {"problem": "p"}, "nothink.json"))],
        [str(tmp_path / "missing.json")],
        [str(_write(tmp_path, TRACE)), "--offline", "--llm"],
        [str(_write(tmp_path, TRACE)), "--llm"],  # no endpoint configured
    ]
    for args in cases:
        res = runner.invoke(_app(), ["decompose", *args, "-o", str(out)])
        assert res.exit_code == 1, (args, res.output)
        assert "error:" in res.output
    assert not out.exists()


def test_schema_option(tmp_path: Path) -> None:
    res = runner.invoke(_app(), ["decompose", "--schema"])
    assert res.exit_code == 0 and json.loads(res.stdout)["title"] == "HDAG"


def test_llm_mode_against_fake_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAIServer(responder=respond) as srv:
        monkeypatch.setenv("TRUSTNODE_LLM__BASE_URL", srv.base_url)
        res = runner.invoke(_app(), ["decompose", str(_write(tmp_path, TRACE)), "--mode", "single", "--json"])
        assert res.exit_code == 0, res.output
        meta = json.loads(res.stdout)["hdag"]["metadata"]
        assert meta["decomposer"] == "llm-single" and meta["llm_calls"] == 1
        # same request again: answered from the disk cache under the data dir
        res = runner.invoke(_app(), ["decompose", str(_write(tmp_path, TRACE)), "--mode", "single", "--json"])
        assert json.loads(res.stdout)["hdag"]["metadata"]["llm_calls"] == 0
        assert len(srv.chat_requests) == 1


def test_llm_never_valid_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "h.json"
    with FakeOpenAIServer([Reply.text("no json here")] * 10) as srv:
        monkeypatch.setenv("TRUSTNODE_LLM__BASE_URL", srv.base_url)
        monkeypatch.setenv("TRUSTNODE_LLM__REPAIR_RETRIES", "1")
        res = runner.invoke(_app(), ["decompose", str(_write(tmp_path, TRACE)), "--llm", "-o", str(out)])
    assert res.exit_code == 1 and "no valid" in res.output
    assert not out.exists() and not list(tmp_path.glob(".tmp-*"))

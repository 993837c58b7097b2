"""Exporters and the exported JSON schema."""

from __future__ import annotations

import json
from pathlib import Path

from trustnode.hdag import decompose
from trustnode.hdag.export import hdag_json_schema, layout, to_dot, to_json, to_mermaid, to_png
from trustnode.models.hdag import HDAG
from trustnode.models.trace import TraceInput

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "src" / "trustnode" / "hdag" / "hdag.schema.json"
TRACE = TraceInput(
    problem='Ann has 12 "red" apples and buys 30 more. How many?',
    thinking="Let's add the amounts. She has 12 + 30 = 42 apples. The patient might object.",
    high_stakes=True,
)


def _hdag() -> tuple[HDAG, object]:
    return decompose(TRACE, mode="offline")


def test_json_round_trip_with_report() -> None:
    h, report = _hdag()
    payload = json.loads(to_json(h, report))  # type: ignore[arg-type]
    assert set(payload) == {"hdag", "report"}
    assert payload["report"]["ok"] is True
    assert all("from" in e and "to" in e for e in payload["hdag"]["edges"])
    assert HDAG.model_validate(payload["hdag"]) == h


def test_schema_file_is_current_and_validates_exports() -> None:
    assert json.loads(SCHEMA_FILE.read_text(encoding="utf-8")) == hdag_json_schema()
    schema = hdag_json_schema()
    assert set(schema["required"]) >= {"document", "nodes", "metadata"}
    assert "from" in schema["$defs"]["HDAGEdge"]["properties"]


def test_mermaid_shapes_and_classes() -> None:
    h, _ = _hdag()
    h.nodes[0].summary = 'count "red" apples'
    text = to_mermaid(h)
    assert text.startswith("flowchart TD\n")
    assert '    G1(["G1: ' in text and "#quot;red#quot;" in text and ":::T_Human" in text
    op = next(n for n in h.nodes if n.abstraction_level.value == "OPERATION")
    assert f'    {op.id}(("{op.id}: ' in text and f":::{op.primary_auditor.value}" in text
    assert "classDef T_Auto fill:" in text
    for e in h.edges:
        assert f"{e.source} " in text and f"|{e.relationship.value}| {e.target}" in text


def test_dot_is_well_formed_text() -> None:
    h, _ = _hdag()
    text = to_dot(h)
    assert text.startswith("digraph HDAG {") and text.rstrip().endswith("}")
    assert '\\"red\\"' in text
    assert text.count(" -> ") == len(h.edges)
    assert '"G1" [label="G1: ' in text and 'shape=doubleoctagon, fillcolor="#7fa9e0"' in text
    human = next(n for n in h.nodes if n.content == "The patient might object.")
    assert f'"{human.id}" [label=' in text and 'shape=box, fillcolor="#f0a35e"' in text
    assert text.count("{") == text.count("}")


def test_png_is_written(tmp_path: Path) -> None:
    h, _ = _hdag()
    out = to_png(h, tmp_path / "sub" / "hdag.png")
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
    assert oct(out.stat().st_mode & 0o777) != oct(0o600)
    assert not list((tmp_path / "sub").glob(".tmp-*"))
    pos = layout(h)
    assert pos["G1"][1] == 0.0 and all(y <= 0 for _, y in pos.values())

"""Exporters: JSON (HDAG + validation report), Mermaid, Graphviz DOT and a PNG picture.

Pictures follow the paper's Figure 3 convention: colour = auditor type, shape = level.
DOT is plain text (no graphviz binary needed); the PNG is drawn with matplotlib in a
layered layout (one row per level, document order left to right).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from trustnode.hdag.validate import ValidationReport
from trustnode.models.enums import AuditorType, Level, Strength
from trustnode.models.hdag import HDAG

AUDITOR_COLOURS = {
    AuditorType.T_AUTO: "#7cc47c",
    AuditorType.T_LLM: "#7fa9e0",
    AuditorType.T_HUMAN: "#f0a35e",
}
_MERMAID_SHAPES = {
    Level.GOAL: ('(["', '"])'),
    Level.STRATEGY: ('{{"', '"}}'),
    Level.TACTIC: ('[["', '"]]'),
    Level.STEP: ('["', '"]'),
    Level.OPERATION: ('(("', '"))'),
}
_DOT_SHAPES = {
    Level.GOAL: "doubleoctagon",
    Level.STRATEGY: "hexagon",
    Level.TACTIC: "diamond",
    Level.STEP: "box",
    Level.OPERATION: "ellipse",
}
_MPL_MARKERS = {
    Level.GOAL: "h",
    Level.STRATEGY: "s",
    Level.TACTIC: "D",
    Level.STEP: "o",
    Level.OPERATION: "^",
}
_DOT_STYLE = {Strength.STRONG: "solid", Strength.MEDIUM: "dashed", Strength.WEAK: "dotted"}
_MERMAID_ARROW = {Strength.STRONG: "==>", Strength.MEDIUM: "-->", Strength.WEAK: "-.->"}


def hdag_json_schema() -> dict[str, Any]:
    """JSON Schema of the exported HDAG document (edges use `from`/`to`)."""
    return HDAG.model_json_schema(by_alias=True)


def export_payload(hdag: HDAG, report: ValidationReport | None = None) -> dict[str, Any]:
    payload: dict[str, Any] = {"hdag": hdag.model_dump(mode="json", by_alias=True)}
    if report is not None:
        payload["report"] = report.model_dump(mode="json")
    return payload


def to_json(hdag: HDAG, report: ValidationReport | None = None, *, indent: int | None = 2) -> str:
    """`{"hdag": ..., "report": ...}` as JSON text."""
    return json.dumps(export_payload(hdag, report), ensure_ascii=False, indent=indent)


def _label(hdag: HDAG, node_id: str) -> str:
    n = hdag.node(node_id)
    return f"{n.id}: {n.summary}" if n.summary else n.id


def to_mermaid(hdag: HDAG) -> str:
    """A Mermaid flowchart: shapes by level, classes (colours) by primary auditor."""
    lines = ["flowchart TD"]
    for n in hdag.nodes:
        left, right = _MERMAID_SHAPES[n.abstraction_level]
        text = _label(hdag, n.id).replace('"', "#quot;").replace("\n", " ")
        lines.append(f"    {n.id}{left}{text}{right}:::{n.primary_auditor.value}")
    for e in hdag.edges:
        lines.append(f"    {e.source} {_MERMAID_ARROW[e.strength]}|{e.relationship.value}| {e.target}")
    for a, colour in AUDITOR_COLOURS.items():
        lines.append(f"    classDef {a.value} fill:{colour},stroke:#333,color:#111")
    return "\n".join(lines) + "\n"


def _dot_escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


def to_dot(hdag: HDAG) -> str:
    """Graphviz DOT text: shape by level, fill colour by primary auditor, line style by strength."""
    lines = [
        "digraph HDAG {",
        "  rankdir=TB;",
        '  node [style=filled, fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=8];',
    ]
    for lvl in Level:
        ids = [n.id for n in hdag.nodes if n.abstraction_level is lvl]
        if ids:
            lines.append("  { rank=same; " + " ".join(f'"{i}";' for i in ids) + " }")
    for n in hdag.nodes:
        lines.append(
            f'  "{n.id}" [label="{_dot_escape(_label(hdag, n.id))}", shape={_DOT_SHAPES[n.abstraction_level]}, '
            f'fillcolor="{AUDITOR_COLOURS[n.primary_auditor]}", tooltip="{_dot_escape(n.content[:300])}"];'
        )
    for e in hdag.edges:
        lines.append(
            f'  "{e.source}" -> "{e.target}" [label="{e.relationship.value}", style={_DOT_STYLE[e.strength]}];'
        )
    lines.append("}")
    return "\n".join(lines) + "\n"


def layout(hdag: HDAG) -> dict[str, tuple[float, float]]:
    """Layered positions: y by level (GOAL on top), x by document order within the level."""
    pos: dict[str, tuple[float, float]] = {}
    rows: dict[Level, list[str]] = {lvl: [] for lvl in Level}
    for n in sorted(hdag.nodes, key=lambda n: n.span.start):
        rows[n.abstraction_level].append(n.id)
    width = max((len(r) for r in rows.values()), default=1)
    for lvl, ids in rows.items():
        for i, nid in enumerate(ids):
            x = (i + 0.5) * width / len(ids)
            pos[nid] = (x, -float(lvl.depth))
    return pos


def to_png(hdag: HDAG, path: Path, *, dpi: int = 110) -> Path:
    """Draw the HDAG to a PNG file (written atomically)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    pos = layout(hdag)
    width = max(
        1, max((sum(1 for n in hdag.nodes if n.abstraction_level is lvl) for lvl in Level), default=1)
    )
    fig, ax = plt.subplots(figsize=(min(40.0, 2.0 + 1.1 * width), 7.0))
    for e in hdag.edges:
        if e.source not in pos or e.target not in pos:
            continue
        (x0, y0), (x1, y1) = pos[e.source], pos[e.target]
        ax.annotate(
            "",
            xy=(x1, y1),
            xytext=(x0, y0),
            arrowprops={
                "arrowstyle": "-|>",
                "color": "#555",
                "lw": 0.8,
                "linestyle": {"strong": "-", "medium": "--", "weak": ":"}[e.strength.value],
                "shrinkA": 11,
                "shrinkB": 11,
                "connectionstyle": "arc3,rad=0.08",
            },
        )
    for n in hdag.nodes:
        x, y = pos[n.id]
        ax.scatter(
            [x],
            [y],
            s=520,
            marker=_MPL_MARKERS[n.abstraction_level],
            c=AUDITOR_COLOURS[n.primary_auditor],
            edgecolors="#222",
            linewidths=0.8,
            zorder=3,
        )
        ax.text(x, y, n.id, ha="center", va="center", fontsize=7, zorder=4)
    ax.set_yticks([-lvl.depth for lvl in Level], [lvl.value for lvl in Level])
    ax.set_xticks([])
    ax.set_ylim(-len(Level) + 0.4, 0.6)
    ax.set_xlim(-0.3, width + 0.3)
    for side in ("top", "right", "bottom"):
        ax.spines[side].set_visible(False)
    handles = [
        Line2D(
            [],
            [],
            marker="o",
            linestyle="",
            markersize=10,
            markerfacecolor=c,
            markeredgecolor="#222",
            label=a.value,
        )
        for a, c in AUDITOR_COLOURS.items()
    ] + [
        Line2D(
            [],
            [],
            marker=m,
            linestyle="",
            markersize=9,
            markerfacecolor="white",
            markeredgecolor="#222",
            label=lvl.value,
        )
        for lvl, m in _MPL_MARKERS.items()
    ]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    ax.set_title(f"HDAG ({len(hdag.nodes)} nodes, {len(hdag.edges)} edges, {hdag.metadata.decomposer})")
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".png")
    os.close(fd)
    try:
        fig.savefig(tmp, format="png", dpi=dpi)
        _publish(tmp, path)
    finally:
        plt.close(fig)
        Path(tmp).unlink(missing_ok=True)
    return path


def _publish(tmp: str, path: Path) -> None:
    """Give the temporary file ordinary permissions, then move it into place atomically."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)
    os.replace(tmp, path)


def write_text_atomic(path: Path, text: str) -> Path:
    """Write text through a temporary file so a failure never leaves half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        _publish(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path

"""Server-side SVG pictures: the HDAG of a session and small line charts.

Drawn here rather than in the browser so the dashboard needs no chart library, works
without JavaScript and shows the same picture to every client. Every piece of text that
reaches the SVG is XML-escaped (node ids come from imported traces and are untrusted).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from html import escape

from trustnode.models.enums import AuditorType, Level, Relationship
from trustnode.node.structure import SessionShape

#: Fill colour per auditor type (colour-blind safe: blue, purple, orange).
AUDITOR_COLOURS: dict[AuditorType, str] = {
    AuditorType.T_AUTO: "#1f77b4",
    AuditorType.T_LLM: "#7b3fa0",
    AuditorType.T_HUMAN: "#e07b00",
}
AUDITOR_LABELS: dict[AuditorType, str] = {
    AuditorType.T_AUTO: "computer (T_Auto)",
    AuditorType.T_LLM: "LLM (T_LLM)",
    AuditorType.T_HUMAN: "human (T_Human)",
}
LEVEL_SHAPES: dict[Level, str] = {
    Level.GOAL: "hexagon",
    Level.STRATEGY: "diamond",
    Level.TACTIC: "rounded square",
    Level.STEP: "circle",
    Level.OPERATION: "small square",
}
FAIL_COLOUR = "#d62728"
PASS_COLOUR = "#2ca02c"

_PER_ROW = 14
_DX = 64
_ROW_H = 78
_R = 18
_MARGIN = 40
_LEGEND_H = 64
_LEGEND_W = 640


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def _shape(level: Level, x: float, y: float, r: float, attrs: str) -> str:
    if level == Level.GOAL:
        pts = " ".join(
            f"{x + r * 1.1 * math.cos(math.pi / 3 * k):.1f},{y + r * 1.1 * math.sin(math.pi / 3 * k):.1f}"
            for k in range(6)
        )
        return f'<polygon points="{pts}" {attrs}/>'
    if level == Level.STRATEGY:
        s = r * 1.25
        return f'<polygon points="{x},{y - s} {x + s},{y} {x},{y + s} {x - s},{y}" {attrs}/>'
    if level == Level.TACTIC:
        return f'<rect x="{x - r}" y="{y - r}" width="{2 * r}" height="{2 * r}" rx="7" {attrs}/>'
    if level == Level.STEP:
        return f'<circle cx="{x}" cy="{y}" r="{r}" {attrs}/>'
    s = r * 0.75
    return f'<rect x="{x - s}" y="{y - s}" width="{2 * s}" height="{2 * s}" {attrs}/>'


def hdag_svg(
    shape: SessionShape,
    outcomes: Sequence[str] | None = None,
    votes: Sequence[tuple[int, int]] | None = None,
    *,
    link: Callable[[int], str] | None = None,
) -> str:
    """The HDAG as SVG: rows by level, fill by auditor type, shape by level, failures marked.

    `outcomes[i]` is the segment's outcome name (PASS, FAIL, INCONCLUSIVE, PENDING);
    `votes[i]` its (pass, fail) votes; `link(i)` the href of node i.
    """
    n = len(shape.nodes)
    outcomes = list(outcomes) if outcomes is not None else ["PENDING"] * n
    pos: dict[int, tuple[float, float]] = {}
    rows: list[tuple[Level, list[int]]] = []
    for level in Level:
        members = sorted(node.index for node in shape.nodes if node.level == level)
        for k in range(0, len(members), _PER_ROW):
            rows.append((level, members[k : k + _PER_ROW]))
    widest = max((len(m) for _, m in rows), default=1)
    width = max(2 * _MARGIN + widest * _DX, _LEGEND_W)
    height = 2 * _MARGIN + max(1, len(rows)) * _ROW_H + _LEGEND_H
    for r, (_, members) in enumerate(rows):
        y = float(_MARGIN + 20 + r * _ROW_H)
        x0 = (width - (len(members) - 1) * _DX) / 2
        for k, i in enumerate(members):
            pos[i] = (x0 + k * _DX, y)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="hdag" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-label="HDAG of the session, {n} segments">',
        "<defs>"
        '<marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#888"/></marker>'
        '<marker id="arrow-red" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        f'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{FAIL_COLOUR}"/></marker>'
        "</defs>",
        '<rect width="100%" height="100%" fill="#fff"/>',
    ]
    seen_rows: set[int] = set()
    for r, (level, _) in enumerate(rows):
        if level.depth in seen_rows:
            continue
        seen_rows.add(level.depth)
        y = float(_MARGIN + 20 + r * _ROW_H)
        parts.append(
            f'<text x="8" y="{y + 4}" font-size="11" fill="#555" font-family="sans-serif">{_e(level.value)}</text>'
        )
    parts.append('<g class="edges" fill="none">')
    for edge in shape.edges:
        if edge.source not in pos or edge.target not in pos or edge.source == edge.target:
            continue
        (x1, y1), (x2, y2) = pos[edge.source], pos[edge.target]
        dx, dy = x2 - x1, y2 - y1
        dist = math.hypot(dx, dy) or 1.0
        sx, sy = x1 + dx / dist * _R, y1 + dy / dist * _R
        ex, ey = x2 - dx / dist * (_R + 3), y2 - dy / dist * (_R + 3)
        bend = 0.0 if abs(dy) > 1 else -28.0
        cx, cy = (sx + ex) / 2, (sy + ey) / 2 + bend
        contra = edge.relationship == Relationship.CONTRADICTS
        colour = FAIL_COLOUR if contra else "#999"
        marker = "arrow-red" if contra else "arrow"
        dash = ' stroke-dasharray="4 3"' if contra or edge.relationship == Relationship.DEPENDS_ON else ""
        parts.append(
            f'<path class="edge" d="M{sx:.1f},{sy:.1f} Q{cx:.1f},{cy:.1f} {ex:.1f},{ey:.1f}" stroke="{colour}" '
            f'stroke-width="1.3"{dash} marker-end="url(#{marker})">'
            f"<title>{_e(shape.nodes[edge.source].node_id)} {_e(edge.relationship.value)} "
            f"{_e(shape.nodes[edge.target].node_id)}</title></path>"
        )
    parts.append("</g>")
    parts.append('<g class="nodes" font-family="sans-serif">')
    for node in shape.nodes:
        if node.index not in pos:
            continue
        x, y = pos[node.index]
        outcome = outcomes[node.index] if node.index < len(outcomes) else "PENDING"
        fill = AUDITOR_COLOURS.get(node.auditor, "#777")
        if outcome == "FAIL":
            stroke = f'stroke="{FAIL_COLOUR}" stroke-width="4"'
        elif outcome == "PASS":
            stroke = f'stroke="{PASS_COLOUR}" stroke-width="2"'
        elif outcome == "INCONCLUSIVE":
            stroke = 'stroke="#333" stroke-width="2" stroke-dasharray="3 2"'
        else:
            stroke = 'stroke="#444" stroke-width="1"'
        tip = f"segment {node.index} · {node.node_id} · {node.level.value} · {node.auditor.value} · weight {node.weight} · {outcome}"
        if votes is not None and node.index < len(votes):
            tip += f" · votes {votes[node.index][0]} pass / {votes[node.index][1]} fail"
        inner = [
            f"<title>{_e(tip)}</title>",
            _shape(node.level, x, y, _R, f'fill="{fill}" {stroke}'),
            f'<text x="{x}" y="{y + 4}" text-anchor="middle" font-size="10" fill="#fff" '
            f'font-weight="bold">{_e(node.node_id[:6])}</text>',
        ]
        if outcome == "FAIL":
            inner.append(
                f'<g class="fail-mark"><circle cx="{x + _R}" cy="{y - _R}" r="8" fill="{FAIL_COLOUR}"/>'
                f'<path d="M{x + _R - 4},{y - _R - 4} L{x + _R + 4},{y - _R + 4} M{x + _R + 4},{y - _R - 4} '
                f'L{x + _R - 4},{y - _R + 4}" stroke="#fff" stroke-width="2"/></g>'
            )
        group = (
            f'<g class="node outcome-{_e(outcome.lower())}" data-index="{node.index}" '
            f'data-outcome="{_e(outcome)}" data-auditor="{_e(node.auditor.value)}" data-level="{_e(node.level.value)}">'
            + "".join(inner)
            + "</g>"
        )
        if link is not None:
            group = f'<a href="{_e(link(node.index))}">{group}</a>'
        parts.append(group)
    parts.append("</g>")
    # Legend: colours (auditor type), shapes (level), outcome marks.
    ly = height - _LEGEND_H + 10
    x = 12.0
    parts.append('<g class="legend" font-family="sans-serif" font-size="11" fill="#333">')
    for kind, colour in AUDITOR_COLOURS.items():
        parts.append(f'<rect x="{x}" y="{ly}" width="12" height="12" fill="{colour}"/>')
        parts.append(f'<text x="{x + 16}" y="{ly + 10}">{_e(AUDITOR_LABELS[kind])}</text>')
        x += 130
    parts.append(
        f'<circle cx="{x + 6}" cy="{ly + 6}" r="6" fill="#fff" stroke="{FAIL_COLOUR}" stroke-width="3"/>'
        f'<text x="{x + 16}" y="{ly + 10}">failing segment</text>'
    )
    x += 110
    parts.append(
        f'<circle cx="{x + 6}" cy="{ly + 6}" r="6" fill="#fff" stroke="{PASS_COLOUR}" stroke-width="2"/>'
        f'<text x="{x + 16}" y="{ly + 10}">passing</text>'
    )
    x2 = 12.0
    ly2 = ly + 24
    for level in Level:
        parts.append(_shape(level, x2 + 7, ly2 + 6, 6, 'fill="#bbb" stroke="#444"'))
        parts.append(f'<text x="{x2 + 18}" y="{ly2 + 10}">{_e(level.value.lower())}</text>')
        x2 += 100
    parts.append("</g></svg>")
    return "".join(parts)


def _nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / max(1, count)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.floor(lo / step) * step
    ticks = [round(start, 12)]
    while ticks[-1] < hi - step * 1e-9:  # end at the first tick at or above `hi`
        ticks.append(round(ticks[-1] + step, 12))
    return ticks


def line_chart(
    points: Sequence[tuple[float, float]],
    *,
    title: str,
    x_label: str,
    y_label: str,
    y_format: Callable[[float], str] = lambda v: f"{v:g}",
    y_range: tuple[float, float] | None = None,
    css_class: str = "chart",
) -> str:
    """A step line chart (values hold until the next point), with axes and per-point tooltips."""
    w, h = 560, 240
    left, right, top, bottom = 70, 16, 28, 40
    pw, ph = w - left - right, h - top - bottom
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="{_e(css_class)}" viewBox="0 0 {w} {h}" width="{w}" '
        f'height="{h}" role="img" aria-label="{_e(title)}" font-family="sans-serif" font-size="11">',
        '<rect width="100%" height="100%" fill="#fff"/>',
        f'<text x="{w / 2}" y="16" text-anchor="middle" font-size="13" font-weight="bold">{_e(title)}</text>',
    ]
    if not points:
        parts.append(
            f'<text x="{w / 2}" y="{h / 2}" text-anchor="middle" fill="#777">no settlements yet</text></svg>'
        )
        return "".join(parts)
    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    x_lo, x_hi = min(xs), max(xs)
    if x_hi == x_lo:
        x_lo, x_hi = x_lo - 1, x_hi + 1
    y_lo, y_hi = y_range if y_range is not None else (min(0.0, min(ys)), max(ys))
    if y_hi == y_lo:
        y_hi = y_lo + 1
    yt = _nice_ticks(y_lo, y_hi)
    y_lo, y_hi = min(y_lo, yt[0]), max(y_hi, yt[-1])

    def px(v: float) -> float:
        return left + (v - x_lo) / (x_hi - x_lo) * pw

    def py(v: float) -> float:
        return top + ph - (v - y_lo) / (y_hi - y_lo) * ph

    for t in yt:
        parts.append(
            f'<line x1="{left}" x2="{left + pw}" y1="{py(t):.1f}" y2="{py(t):.1f}" stroke="#eee"/>'
            f'<text x="{left - 6}" y="{py(t) + 4:.1f}" text-anchor="end">{_e(y_format(t))}</text>'
        )
    for t in _nice_ticks(x_lo, x_hi):
        if x_lo <= t <= x_hi and float(t).is_integer():  # x is a block number
            parts.append(
                f'<line x1="{px(t):.1f}" x2="{px(t):.1f}" y1="{top + ph}" y2="{top + ph + 4}" stroke="#333"/>'
                f'<text x="{px(t):.1f}" y="{top + ph + 16}" text-anchor="middle">{t:g}</text>'
            )
    parts.append(
        f'<line x1="{left}" x2="{left}" y1="{top}" y2="{top + ph}" stroke="#333"/>'
        f'<line x1="{left}" x2="{left + pw}" y1="{top + ph}" y2="{top + ph}" stroke="#333"/>'
        f'<text x="{left + pw / 2}" y="{h - 6}" text-anchor="middle">{_e(x_label)}</text>'
        f'<text transform="translate(14 {top + ph / 2}) rotate(-90)" text-anchor="middle">{_e(y_label)}</text>'
    )
    path = [f"M{px(xs[0]):.1f},{py(ys[0]):.1f}"]
    for x, y in points[1:]:
        path.append(f"H{px(x):.1f} V{py(y):.1f}")
    parts.append(f'<path class="series" d="{" ".join(path)}" fill="none" stroke="#1f77b4" stroke-width="2"/>')
    for x, y in points:
        parts.append(
            f'<circle class="point" cx="{px(x):.1f}" cy="{py(y):.1f}" r="3.5" fill="#1f77b4">'
            f"<title>block {x:g}: {_e(y_format(y))}</title></circle>"
        )
    parts.append("</svg>")
    return "".join(parts)

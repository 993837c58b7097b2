"""The public dashboard: sessions, one session with its HDAG picture, auditors with charts.

Nothing here shows trace text. A session's verdict comes from `SessionOutcome` (the one
verdict model): PASS, FAIL, or INCONCLUSIVE when no quorum was reached (shown as "no quorum",
never as a red FAIL), with the beta threshold next to the score.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from web3 import Web3

from trustnode.api.errors import public_text, unavailable
from trustnode.api.web.pages import CSP, WebPages
from trustnode.api.web.svg import hdag_svg, line_chart
from trustnode.chain.units import TOKEN
from trustnode.models.verdict import SessionOutcome
from trustnode.node.queries import SessionQueries, UnknownSessionError
from trustnode.node.structure import SessionShape

#: Largest id a uint256 session index can hold.
UINT256_MAX = 2**256 - 1


def register_dashboard(app: FastAPI, pages: WebPages) -> None:
    queries = pages.queries

    @app.get("/", include_in_schema=False)
    def home() -> Response:
        return RedirectResponse("/sessions", status_code=303)

    @app.get("/sessions", response_class=HTMLResponse, include_in_schema=False)
    async def sessions_page(request: Request, limit: int = 50) -> HTMLResponse:
        limit = max(1, min(limit, 500))
        try:
            rows = await run_in_threadpool(queries.sessions, limit)
        except Exception as exc:  # noqa: BLE001 - outages become a 503 page, bugs are re-raised
            return pages.outage(request, exc, "The sessions")
        return pages.render("sessions.html", request, sessions=rows, limit=limit)

    @app.get("/sessions/{session_id}", response_class=HTMLResponse, include_in_schema=False)
    async def session_page(request: Request, session_id: int) -> HTMLResponse:
        if not 1 <= session_id <= UINT256_MAX:
            return pages.error(request, 404, "No such session", f"no session {session_id}")
        try:
            view = await run_in_threadpool(queries.session, session_id)
        except UnknownSessionError as exc:
            return pages.error(request, 404, "No such session", str(exc))
        except Exception as exc:  # noqa: BLE001
            return pages.outage(request, exc, f"Session {session_id}")
        shape, shape_error = await run_in_threadpool(_shape, queries, session_id)
        segments = _leaves(view.outcome)
        svg = None
        if shape is not None and len(shape.nodes) == len(segments):
            svg = hdag_svg(
                shape,
                [s[0] for s in segments],
                [s[1] for s in segments],
                link=lambda i: f"#seg-{i}",
            )
        elif shape is not None:
            shape_error = "the published HDAG shape does not match the on-chain segment count"
            shape = None
        voters: dict[int, list[tuple[str, str | None]]] = {}
        for vote in view.votes:
            for j, seat in enumerate(vote.seats):
                verdict = vote.verdicts[j] if vote.verdicts is not None and j < len(vote.verdicts) else None
                voters.setdefault(seat, []).append((vote.auditor, verdict))
        return pages.render(
            "session.html",
            request,
            view=view,
            outcome=view.outcome,
            shape=shape,
            shape_error=public_text(shape_error, pages.settings) if shape_error else None,
            svg=svg,
            voters=voters,
        )

    @app.get("/sessions/{session_id}/hdag.svg", include_in_schema=False)
    async def session_svg(session_id: int) -> Response:
        try:
            view = await run_in_threadpool(queries.session, session_id)
        except UnknownSessionError as exc:
            return Response(str(exc), status_code=404, media_type="text/plain")
        except Exception as exc:
            if unavailable(exc) is None:
                raise
            text = public_text(f"{unavailable(exc)} is not reachable: {exc}", pages.settings)
            return Response(text, status_code=503, media_type="text/plain")
        shape, problem = await run_in_threadpool(_shape, queries, session_id)
        if shape is None:
            text = public_text(problem or "no HDAG published yet", pages.settings)
            return Response(text, status_code=404, media_type="text/plain")
        segments = _leaves(view.outcome)
        if len(shape.nodes) != len(segments):
            text = "the published HDAG shape does not match the on-chain segment count"
            return Response(text, status_code=404, media_type="text/plain")
        svg = hdag_svg(shape, [s[0] for s in segments], [s[1] for s in segments])
        return Response(svg, media_type="image/svg+xml", headers={"Content-Security-Policy": CSP})

    @app.get("/auditors", include_in_schema=False)
    def find_auditor(request: Request, address: str = "") -> Response:
        if not Web3.is_address(address.strip()):
            return pages.error(request, 400, "Not an address", f"{address!r} is not an Ethereum address.")
        return RedirectResponse(f"/auditors/{Web3.to_checksum_address(address.strip())}", status_code=303)

    @app.get("/auditors/{address}", response_class=HTMLResponse, include_in_schema=False)
    async def auditor_page(request: Request, address: str) -> HTMLResponse:
        if not Web3.is_address(address):
            return pages.error(request, 400, "Not an address", f"{address!r} is not an address")
        try:
            view = await run_in_threadpool(queries.auditor, address)
            profit = await run_in_threadpool(_profit_points, queries, view.history)
        except Exception as exc:  # noqa: BLE001
            return pages.outage(request, exc, "The auditor")
        rep_points = [(float(h.block), h.reputation / TOKEN) for h in view.history]
        rep_chart = line_chart(
            rep_points,
            title="Reputation after each settlement",
            x_label="block",
            y_label="reputation",
            y_range=(0.0, 1.0),
            y_format=lambda v: f"{v:.2f}",
            css_class="chart reputation",
        )
        profit_chart = line_chart(
            [(float(b), float(Decimal(v) / TOKEN)) for b, v, _ in profit],
            title="Cumulative profit (rewards − slashes)",
            x_label="block",
            y_label="TRUST",
            y_format=lambda v: f"{v:g}",
            css_class="chart profit",
        )
        return pages.render(
            "auditor.html",
            request,
            view=view,
            rep_chart=rep_chart,
            profit_chart=profit_chart,
            profit_rows={sid: (cum, delta) for _, cum, (sid, delta) in profit},
        )


def _leaves(outcome: SessionOutcome) -> list[tuple[str, tuple[int, int]]]:
    """(outcome, (pass, fail)) of every leaf of the session in index order, revealed canaries
    included (the published shape has them; they are drawn like any node)."""
    rows = {s.index: (s.outcome.value, (s.pass_votes, s.fail_votes)) for s in outcome.segments}
    rows |= {c.index: (c.outcome.value, (c.pass_votes, c.fail_votes)) for c in outcome.canaries}
    return [rows[i] for i in sorted(rows)]


def _shape(queries: SessionQueries, session_id: int) -> tuple[SessionShape | None, str | None]:
    """The published HDAG shape, or why it cannot be shown (not published yet, IPFS down, forged)."""
    try:
        shape = queries.shape(session_id)
    except ValueError as exc:
        return None, str(exc)
    except Exception as exc:  # noqa: BLE001 - an outage only hides the picture
        if unavailable(exc) is None:
            raise
        return None, f"the session bundle could not be fetched: {unavailable(exc)} is not reachable ({exc})"
    if shape is None:
        return None, "the HDAG is published with the key envelopes, after the draw"
    return shape, None


def _profit_points(queries: SessionQueries, history: list[Any]) -> list[tuple[int, int, tuple[int, int]]]:
    """(block, cumulative profit, (session, this settlement's profit)) per settlement, in wei.

    Profit of a settlement = rewards paid - slashes x P, with P from the session's own
    parameter version (parameters can change between sessions).
    """
    p = queries.protocol
    slash_of_version: dict[int, int] = {}
    out = []
    total = 0
    for h in sorted(history, key=lambda h: (h.block, h.session_id)):
        version = p.session(h.session_id).params_version
        if version not in slash_of_version:
            slash_of_version[version] = p.params(version).slash_amount
        delta = int(h.reward) - int(h.slashes) * slash_of_version[version]
        total += delta
        out.append((int(h.block), total, (int(h.session_id), delta)))
    return out

"""HTML pages served by the node: the public dashboard and the human audit form.

Dashboard (public, no plaintext): sessions with state and verdict, a session page with the
HDAG drawn from the published shape, per-segment votes and transactions, and auditor pages
with reputation and profit charts. Audit form (signed-in human auditors only): the SPEC 6
form for each pending seat of the auditor's human queue.

Trace text is hostile input: templates autoescape everything, math is typeset by KaTeX in
the browser from escaped text (never from HTML), and every page carries a Content Security
Policy that only allows this node's own scripts.
"""

from __future__ import annotations

import time
from decimal import Decimal
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, PackageLoader, select_autoescape
from web3 import Web3

from trustnode.api.metrics import install_metrics
from trustnode.api.web.signin import (
    COOKIE_NAME,
    SESSION_TTL_S,
    SignIn,
    SignInError,
    WebSession,
    load_or_create_secret,
)
from trustnode.api.web.svg import AUDITOR_COLOURS, AUDITOR_LABELS, LEVEL_SHAPES, hdag_svg, line_chart
from trustnode.audit.human_queue import HumanQueue, HumanQueueError, SeatNotFoundError
from trustnode.chain.errors import ChainError
from trustnode.models.enums import Verdict
from trustnode.models.human import CRITERIA, CRITERIA_KEYS, HumanSeat
from trustnode.node.context import NodeContext
from trustnode.node.paths import human_queue_path, web_secret_path
from trustnode.node.queries import SessionQueries, UnknownSessionError
from trustnode.node.structure import SessionShape
from trustnode.storage.errors import StorageError

WAD = 10**18

#: Only this node's scripts run; KaTeX output needs inline style attributes, nothing more.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; font-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


def tokens(wei: int) -> str:
    """Token wei as a decimal token amount, exact (no float rounding)."""
    d = (Decimal(wei) / Decimal(WAD)).normalize()
    text = f"{d:f}"
    return text if "." not in text else text.rstrip("0").rstrip(".")


def _env() -> Environment:
    env = Environment(
        loader=PackageLoader("trustnode.api", "templates"),
        autoescape=select_autoescape(["html", "svg"], default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["tokens"] = tokens
    env.filters["pct"] = lambda bps: "—" if bps is None else f"{bps / 100:.1f}%"
    env.filters["short"] = lambda h: h if not isinstance(h, str) or len(h) <= 14 else f"{h[:8]}…{h[-4:]}"
    env.globals["criteria"] = CRITERIA
    env.globals["auditor_colours"] = {k.value: v for k, v in AUDITOR_COLOURS.items()}
    env.globals["auditor_labels"] = {k.value: v for k, v in AUDITOR_LABELS.items()}
    env.globals["level_shapes"] = {k.value: v for k, v in LEVEL_SHAPES.items()}
    return env


class WebPages:
    """State shared by the page handlers: templates, queries, sign-in and the human queue."""

    def __init__(self, ctx: NodeContext, queries: SessionQueries) -> None:
        self.ctx = ctx
        self.queries = queries
        self.env = _env()
        self.signin = SignIn(load_or_create_secret(web_secret_path(ctx.settings)))
        self._queue: HumanQueue | None = None

    @property
    def queue(self) -> HumanQueue:
        """The human queue the auditor daemon fills (opened on first use)."""
        if self._queue is None:
            self._queue = HumanQueue(human_queue_path(self.ctx.settings))
        return self._queue

    def render(self, name: str, request: Request, status_code: int = 200, **values: Any) -> HTMLResponse:
        session = self.session_of(request)
        html = self.env.get_template(name).render(request_path=request.url.path, me=session, **values)
        return HTMLResponse(html, status_code=status_code, headers=SECURITY_HEADERS)

    def error(self, request: Request, status_code: int, title: str, message: str) -> HTMLResponse:
        return self.render("error.html", request, status_code, title=title, message=message)

    def session_of(self, request: Request) -> WebSession | None:
        return self.signin.read(request.cookies.get(COOKIE_NAME))


def _same_origin(request: Request) -> bool:
    """A browser POST must come from our own pages (Origin or Referer, when sent, must match)."""
    own = f"{request.url.scheme}://{request.url.netloc}"
    origin = request.headers.get("origin")
    if origin is not None:
        return origin == own
    referer = request.headers.get("referer")
    if referer is not None:
        parts = urlsplit(referer)
        return f"{parts.scheme}://{parts.netloc}" == own
    return True


async def _form(request: Request) -> dict[str, list[str]]:
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype != "application/x-www-form-urlencoded":
        raise ValueError("the form must be sent as application/x-www-form-urlencoded")
    raw = await request.body()
    try:
        return parse_qs(raw.decode("utf-8"), keep_blank_values=True, strict_parsing=False, max_num_fields=64)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"the form could not be read: {exc}") from exc


def _one(form: dict[str, list[str]], key: str) -> str:
    values = form.get(key, [])
    return values[0] if values else ""


def register_web(app: FastAPI, ctx: NodeContext) -> WebPages:
    """Mount the static assets, add the dashboard and audit pages and `/metrics` to `app`."""
    install_metrics(app, ctx)
    queries: SessionQueries = getattr(app.state, "queries", None) or SessionQueries(ctx)
    pages = WebPages(ctx, queries)
    app.state.web = pages
    static_dir = resources.files("trustnode.api").joinpath("static")
    app.mount("/static", StaticFiles(directory=str(static_dir)), name="static")

    # -- dashboard ------------------------------------------------------------------------------

    @app.get("/", include_in_schema=False)
    def home() -> Response:
        return RedirectResponse("/sessions", status_code=303)

    @app.get("/sessions", response_class=HTMLResponse, include_in_schema=False)
    def sessions_page(request: Request, limit: int = 50) -> HTMLResponse:
        limit = max(1, min(limit, 500))
        try:
            rows = queries.sessions(limit)
        except (ChainError, OSError, FileNotFoundError) as exc:
            return pages.error(request, 503, "Chain not reachable", f"The sessions cannot be read: {exc}")
        return pages.render("sessions.html", request, sessions=rows, limit=limit)

    @app.get("/sessions/{session_id}", response_class=HTMLResponse, include_in_schema=False)
    def session_page(request: Request, session_id: int) -> HTMLResponse:
        try:
            view = queries.session(session_id)
        except UnknownSessionError as exc:
            return pages.error(request, 404, "No such session", str(exc))
        except (ChainError, OSError) as exc:
            return pages.error(
                request, 503, "Chain not reachable", f"Session {session_id} cannot be read: {exc}"
            )
        shape, shape_error = _shape(queries, session_id)
        svg = None
        if shape is not None and len(shape.nodes) == len(view.segments):
            svg = hdag_svg(
                shape,
                [s.outcome for s in view.segments],
                [(s.pass_votes, s.fail_votes) for s in view.segments],
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
            shape=shape,
            shape_error=shape_error,
            svg=svg,
            voters=voters,
            failing=[s.index for s in view.segments if s.outcome == "FAIL"],
        )

    @app.get("/sessions/{session_id}/hdag.svg", include_in_schema=False)
    def session_svg(session_id: int) -> Response:
        try:
            view = queries.session(session_id)
        except UnknownSessionError as exc:
            return Response(str(exc), status_code=404, media_type="text/plain")
        except (ChainError, OSError) as exc:
            return Response(f"chain not reachable: {exc}", status_code=503, media_type="text/plain")
        shape, problem = _shape(queries, session_id)
        if shape is None:
            return Response(problem or "no HDAG published yet", status_code=404, media_type="text/plain")
        svg = hdag_svg(
            shape, [s.outcome for s in view.segments], [(s.pass_votes, s.fail_votes) for s in view.segments]
        )
        return Response(svg, media_type="image/svg+xml", headers={"Content-Security-Policy": CSP})

    @app.get("/auditors", include_in_schema=False)
    def find_auditor(request: Request, address: str = "") -> Response:
        if not Web3.is_address(address.strip()):
            return pages.error(request, 400, "Not an address", f"{address!r} is not an Ethereum address.")
        return RedirectResponse(f"/auditors/{Web3.to_checksum_address(address.strip())}", status_code=303)

    @app.get("/auditors/{address}", response_class=HTMLResponse, include_in_schema=False)
    def auditor_page(request: Request, address: str) -> HTMLResponse:
        try:
            view = queries.auditor(address)
            profit = _profit_points(queries, view.history)
        except ValueError as exc:
            return pages.error(request, 400, "Not an address", str(exc))
        except (ChainError, OSError) as exc:
            return pages.error(request, 503, "Chain not reachable", f"The auditor cannot be read: {exc}")
        rep_points = [(float(h.block), h.reputation / WAD) for h in view.history]
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
            [(float(b), float(Decimal(v) / WAD)) for b, v, _ in profit],
            title="Cumulative profit (rewards − slashes)",
            x_label="block",
            y_label="tokens",
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

    # -- human audit ------------------------------------------------------------------------------

    def host_of(request: Request) -> str:
        return request.headers.get("host") or request.url.netloc

    def login_page(request: Request, status_code: int = 200, error: str | None = None) -> HTMLResponse:
        challenge = pages.signin.challenge(host_of(request))
        return pages.render(
            "audit_login.html",
            request,
            status_code,
            challenge=challenge,
            error=error,
            cli=f"trustnode web sign '{challenge.message}'",
        )

    @app.get("/audit/login", include_in_schema=False)
    def audit_login(request: Request) -> Response:
        if pages.session_of(request) is not None:
            return RedirectResponse("/audit", status_code=303)
        return login_page(request)

    @app.post("/audit/login", include_in_schema=False)
    async def audit_login_post(request: Request) -> Response:
        if not _same_origin(request):
            return pages.error(request, 403, "Refused", "The sign-in form was posted from another site.")
        try:
            form = await _form(request)
            address = pages.signin.verify(_one(form, "message"), _one(form, "token"), _one(form, "signature"))
        except (SignInError, ValueError) as exc:
            return login_page(request, 400, str(exc))
        cookie, _ = pages.signin.issue(address)
        resp = RedirectResponse("/audit", status_code=303)
        resp.set_cookie(
            COOKIE_NAME,
            cookie,
            max_age=SESSION_TTL_S,
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
            path="/",
        )
        return resp

    @app.post("/audit/logout", include_in_schema=False)
    async def audit_logout(request: Request) -> Response:
        me = pages.session_of(request)
        try:
            form = await _form(request)
        except ValueError as exc:
            return pages.error(request, 400, "Bad form", str(exc))
        if me is not None and (not _same_origin(request) or _one(form, "csrf") != me.csrf):
            return pages.error(request, 403, "Refused", "The sign-out request did not come from this page.")
        resp = RedirectResponse("/audit/login", status_code=303)
        resp.delete_cookie(COOKIE_NAME, path="/", httponly=True, samesite="strict")
        return resp

    @app.get("/audit", response_class=HTMLResponse, include_in_schema=False)
    async def audit_home(request: Request, done: str | None = None) -> Response:
        me = pages.session_of(request)
        if me is None:
            return RedirectResponse("/audit/login", status_code=303)
        pending = await run_in_threadpool(pages.queue.pending, me.address)
        waiting = await run_in_threadpool(pages.queue.decided, me.address)
        just = None
        if done:
            try:
                seat = await run_in_threadpool(pages.queue.get, done)
                just = seat if seat.auditor.lower() == me.address.lower() else None
            except SeatNotFoundError:
                just = None
        return pages.render(
            "audit_seats.html", request, pending=pending, waiting=waiting, just=just, now=time.time()
        )

    async def seat_for(request: Request, me: WebSession, seat_id: str) -> HumanSeat | None:
        try:
            seat: HumanSeat = await run_in_threadpool(pages.queue.get, seat_id)
        except SeatNotFoundError:
            return None
        # Somebody else's seat is reported exactly like a missing one.
        return seat if seat.auditor.lower() == me.address.lower() else None

    def seat_page(
        request: Request,
        me: WebSession,
        seat: HumanSeat,
        *,
        status_code: int = 200,
        error: str | None = None,
        form: dict[str, Any] | None = None,
        decision: Any = None,
    ) -> HTMLResponse:
        return pages.render(
            "audit_seat.html",
            request,
            status_code,
            seat=seat,
            csrf=me.csrf,
            error=error,
            form=form or {"verdict": "", "criteria": [], "note": ""},
            decision=decision,
            now=time.time(),
        )

    @app.get("/audit/seats/{seat_id}", response_class=HTMLResponse, include_in_schema=False)
    async def audit_seat(request: Request, seat_id: str) -> Response:
        me = pages.session_of(request)
        if me is None:
            return RedirectResponse("/audit/login", status_code=303)
        seat = await seat_for(request, me, seat_id)
        if seat is None:
            return pages.error(request, 404, "No such seat", f"You have no human seat {seat_id!r}.")
        decision = await run_in_threadpool(pages.queue.decision, seat_id)
        return seat_page(request, me, seat, decision=decision)

    @app.post("/audit/seats/{seat_id}", include_in_schema=False)
    async def audit_seat_submit(request: Request, seat_id: str) -> Response:
        me = pages.session_of(request)
        if me is None:
            return pages.error(request, 401, "Signed out", "Your session has expired: sign in again.")
        try:
            form = await _form(request)
        except ValueError as exc:
            return pages.error(request, 400, "Bad form", str(exc))
        if not _same_origin(request) or _one(form, "csrf") != me.csrf:
            return pages.error(request, 403, "Refused", "The form did not come from this page (CSRF check).")
        seat = await seat_for(request, me, seat_id)
        if seat is None:
            return pages.error(request, 404, "No such seat", f"You have no human seat {seat_id!r}.")
        checked = form.get("criterion", [])
        unknown = sorted(set(checked) - set(CRITERIA_KEYS))
        verdict = _one(form, "verdict").strip().upper()
        note = _one(form, "note")
        kept = {"verdict": verdict, "criteria": [c for c in checked if c in CRITERIA_KEYS], "note": note}
        if unknown:
            return seat_page(
                request, me, seat, status_code=400, error=f"unknown criteria: {', '.join(unknown)}", form=kept
            )
        if verdict not in (Verdict.PASS.value, Verdict.FAIL.value):
            return seat_page(request, me, seat, status_code=400, error="choose PASS or FAIL", form=kept)
        criteria = {k: k in checked for k in CRITERIA_KEYS}
        try:
            await run_in_threadpool(pages.queue.submit, seat_id, verdict, criteria, note)
        except HumanQueueError as exc:
            decision = await run_in_threadpool(pages.queue.decision, seat_id)
            return seat_page(request, me, seat, status_code=409, error=str(exc), form=kept, decision=decision)
        except ValueError as exc:
            return seat_page(request, me, seat, status_code=400, error=str(exc), form=kept)
        return RedirectResponse(f"/audit?done={quote(seat_id, safe='')}", status_code=303)

    return pages


def _shape(queries: SessionQueries, session_id: int) -> tuple[SessionShape | None, str | None]:
    """The published HDAG shape, or why it cannot be shown (not published yet, IPFS down, forged)."""
    try:
        shape = queries.shape(session_id)
    except (StorageError, OSError) as exc:
        return None, f"the session bundle could not be fetched from IPFS: {exc}"
    except ValueError as exc:
        return None, str(exc)
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

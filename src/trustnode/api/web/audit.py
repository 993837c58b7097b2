"""The human audit pages: sign in with a signature, list your seats, decide one.

The seats come from the human queue that the signed-in auditor's daemon fills (see
`queue_for`). Each seat shows how long its session's commit phase has left, in blocks and
seconds, read from the chain (`deadline.CommitWindows`); a verdict that could no longer be
committed is refused with the reason instead of being recorded for nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from trustnode.api.errors import unavailable
from trustnode.api.web.deadline import CommitWindow, CommitWindows
from trustnode.api.web.pages import WebPages, one, read_form
from trustnode.api.web.signin import COOKIE_NAME, SESSION_TTL_S, SignInError, WebSession
from trustnode.audit.human_queue import HumanQueue, HumanQueueError, SeatNotFoundError
from trustnode.models.enums import Verdict
from trustnode.models.human import CRITERIA_KEYS, HumanSeat
from trustnode.node.paths import human_queue_path


class SeatDesk:
    """The human queues of the auditors who sign in here, and their sessions' commit windows."""

    def __init__(self, pages: WebPages) -> None:
        self.pages = pages
        self.windows = CommitWindows(pages.ctx.port, self._block_timestamp)
        self._queues: dict[Path, HumanQueue] = {}

    def _block_timestamp(self, number: int) -> int:
        return self.pages.ctx.port().block_timestamp(number)

    def queue_for(self, address: str) -> HumanQueue:
        """The queue the human daemon of `address` fills on this data directory (the documented
        location both processes derive from the same settings)."""
        path = human_queue_path(self.pages.settings)
        if path not in self._queues:
            self._queues[path] = HumanQueue(path)
        return self._queues[path]

    def windows_for(self, seats: list[HumanSeat]) -> dict[str, CommitWindow]:
        """Each seat's commit window, by seat id, from the chain: a first-round seat's from its
        session, an appeal round's from its round (else, in an outage, from its own deadline)."""
        first = [s for s in seats if s.round == 0]
        appeal = [s for s in seats if s.round > 0]
        try:
            out = self.windows.from_rounds(appeal) if appeal else {}
            by_session = self.windows.from_chain(s.session_id for s in first) if first else {}
        except Exception as exc:  # noqa: BLE001 - an outage falls back to the seats' own deadlines
            if unavailable(exc) is None:
                raise
            return self.windows.from_seats(seats, "the chain is not reachable")
        return {**out, **{s.seat_id: by_session[s.session_id] for s in first}}


def register_audit(app: FastAPI, pages: WebPages) -> None:
    desk = SeatDesk(pages)
    app.state.seat_desk = desk

    def login_page(request: Request, status_code: int = 200, error: str | None = None) -> HTMLResponse:
        challenge = pages.signin.challenge(pages.origin(request))
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
        if not pages.same_origin(request):
            own = pages.origin(request)
            sent = request.headers.get("origin") or request.headers.get("referer")
            message = (
                f"The sign-in form was posted from {sent}, but this node's audit page is {own}. "
                "If people reach this node at another address (a proxy), its operator sets "
                "api.public_origin to it."
            )
            return pages.error(request, 403, "Refused", message)
        try:
            form = await read_form(request)
            address = await run_in_threadpool(
                pages.signin.verify,
                one(form, "message"),
                one(form, "token"),
                one(form, "signature"),
                pages.origin(request),
            )
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
            secure=pages.secure_cookies(request),
            path="/",
        )
        return resp

    @app.post("/audit/logout", include_in_schema=False)
    async def audit_logout(request: Request) -> Response:
        me = pages.session_of(request)
        try:
            form = await read_form(request)
        except ValueError as exc:
            return pages.error(request, 400, "Bad form", str(exc))
        if me is not None:
            if not pages.same_origin(request) or one(form, "csrf") != me.csrf:
                return pages.error(
                    request, 403, "Refused", "The sign-out request did not come from this page."
                )
            await run_in_threadpool(pages.signin.revoke, me)
        resp = RedirectResponse("/audit/login", status_code=303)
        resp.delete_cookie(
            COOKIE_NAME, path="/", httponly=True, samesite="strict", secure=pages.secure_cookies(request)
        )
        return resp

    @app.get("/audit", response_class=HTMLResponse, include_in_schema=False)
    async def audit_home(request: Request, done: str | None = None) -> Response:
        me = pages.session_of(request)
        if me is None:
            return RedirectResponse("/audit/login", status_code=303)
        queue = await run_in_threadpool(desk.queue_for, me.address)
        pending = await run_in_threadpool(queue.pending, me.address)
        waiting = await run_in_threadpool(queue.decided, me.address)
        windows = await run_in_threadpool(desk.windows_for, pending)
        just = None
        if done:
            try:
                seat = await run_in_threadpool(queue.get, done)
                just = seat if seat.auditor.lower() == me.address.lower() else None
            except SeatNotFoundError:
                just = None
        just_window = (await run_in_threadpool(desk.windows_for, [just])).get(just.seat_id) if just else None
        return pages.render(
            "audit_seats.html",
            request,
            pending=pending,
            waiting=waiting,
            windows=windows,
            just=just,
            just_window=just_window,
        )

    async def seat_for(me: WebSession, seat_id: str) -> tuple[HumanQueue, HumanSeat | None]:
        queue = await run_in_threadpool(desk.queue_for, me.address)
        try:
            seat: HumanSeat = await run_in_threadpool(queue.get, seat_id)
        except SeatNotFoundError:
            return queue, None
        # Somebody else's seat is reported exactly like a missing one.
        return queue, seat if seat.auditor.lower() == me.address.lower() else None

    async def seat_page(
        request: Request,
        me: WebSession,
        queue: HumanQueue,
        seat: HumanSeat,
        *,
        status_code: int = 200,
        error: str | None = None,
        form: dict[str, Any] | None = None,
        window: CommitWindow | None = None,
    ) -> HTMLResponse:
        decision = await run_in_threadpool(queue.decision, seat.seat_id)
        if window is None:
            window = (await run_in_threadpool(desk.windows_for, [seat]))[seat.seat_id]
        return pages.render(
            "audit_seat.html",
            request,
            status_code,
            seat=seat,
            csrf=me.csrf,
            error=error,
            form=form or {"verdict": "", "criteria": [], "note": ""},
            decision=decision,
            window=window,
        )

    @app.get("/audit/seats/{seat_id}", response_class=HTMLResponse, include_in_schema=False)
    async def audit_seat(request: Request, seat_id: str) -> Response:
        me = pages.session_of(request)
        if me is None:
            return RedirectResponse("/audit/login", status_code=303)
        queue, seat = await seat_for(me, seat_id)
        if seat is None:
            return pages.error(request, 404, "No such seat", f"You have no human seat {seat_id!r}.")
        return await seat_page(request, me, queue, seat)

    @app.post("/audit/seats/{seat_id}", include_in_schema=False)
    async def audit_seat_submit(request: Request, seat_id: str) -> Response:
        me = pages.session_of(request)
        if me is None:
            return pages.error(request, 401, "Signed out", "Your session has expired: sign in again.")
        try:
            form = await read_form(request)
        except ValueError as exc:
            return pages.error(request, 400, "Bad form", str(exc))
        if not pages.same_origin(request) or one(form, "csrf") != me.csrf:
            return pages.error(request, 403, "Refused", "The form did not come from this page (CSRF check).")
        queue, seat = await seat_for(me, seat_id)
        if seat is None:
            return pages.error(request, 404, "No such seat", f"You have no human seat {seat_id!r}.")
        checked = form.get("criterion", [])
        unknown = sorted(set(checked) - set(CRITERIA_KEYS))
        verdict = one(form, "verdict").strip().upper()
        note = one(form, "note")
        kept = {"verdict": verdict, "criteria": [c for c in checked if c in CRITERIA_KEYS], "note": note}

        async def refuse(code: int, message: str, window: CommitWindow | None = None) -> HTMLResponse:
            return await seat_page(
                request, me, queue, seat, status_code=code, error=message, form=kept, window=window
            )

        if unknown:
            return await refuse(400, f"unknown criteria: {', '.join(unknown)}")
        if verdict not in (Verdict.PASS.value, Verdict.FAIL.value):
            return await refuse(400, "choose PASS or FAIL")
        if await run_in_threadpool(queue.decision, seat_id) is None:
            window = (await run_in_threadpool(desk.windows_for, [seat]))[seat.seat_id]
            if not window.open:
                code = 503 if window.source == "none" else 409
                return await refuse(code, f"not recorded: {window.reason}", window)
        criteria = {k: k in checked for k in CRITERIA_KEYS}
        try:
            await run_in_threadpool(queue.submit, seat_id, verdict, criteria, note)
        except HumanQueueError as exc:
            return await refuse(409, str(exc))
        except ValueError as exc:
            return await refuse(400, str(exc))
        return RedirectResponse(f"/audit?done={quote(seat_id, safe='')}", status_code=303)

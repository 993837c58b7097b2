"""HTML pages served by the node: the public dashboard and the human audit form.

Dashboard (public, no plaintext): sessions with state and verdict, a session page with the
HDAG drawn from the published shape, per-segment votes and transactions, and auditor pages
with reputation and profit charts (`dashboard`). Audit form (signed-in human auditors only):
the SPEC 6 form for each pending seat of the auditor's human queue (`audit`).

Trace text is hostile input: templates autoescape everything, math is typeset by KaTeX in
the browser from escaped text (never from HTML), and every page carries a Content Security
Policy that only allows this node's own scripts. Error messages pass through `public_text`,
so no RPC or IPFS credentials reach a page.
"""

from __future__ import annotations

from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, PackageLoader, select_autoescape

from trustnode.api.errors import public_text, unavailable
from trustnode.api.metrics import install_metrics
from trustnode.api.once import UsedOnce
from trustnode.api.web.signin import COOKIE_NAME, SignIn, WebSession, load_or_create_secret, safe_origin
from trustnode.api.web.svg import AUDITOR_COLOURS, AUDITOR_LABELS, LEVEL_SHAPES
from trustnode.chain.units import format_trust
from trustnode.models.human import CRITERIA
from trustnode.node.context import NodeContext
from trustnode.node.paths import web_secret_path
from trustnode.node.queries import SessionQueries

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


def _env() -> Environment:
    env = Environment(
        loader=PackageLoader("trustnode.api", "templates"),
        autoescape=select_autoescape(["html", "svg"], default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["trust"] = format_trust
    env.filters["pct"] = lambda bps: "—" if bps is None else f"{bps / 100:.1f}%"
    env.filters["short"] = lambda h: h if not isinstance(h, str) or len(h) <= 14 else f"{h[:8]}…{h[-4:]}"
    env.globals["criteria"] = CRITERIA
    env.globals["auditor_colours"] = {k.value: v for k, v in AUDITOR_COLOURS.items()}
    env.globals["auditor_labels"] = {k.value: v for k, v in AUDITOR_LABELS.items()}
    env.globals["level_shapes"] = {k.value: v for k, v in LEVEL_SHAPES.items()}
    return env


class WebPages:
    """State shared by the page handlers: templates, queries, sign-in, the canonical origin."""

    def __init__(self, ctx: NodeContext, queries: SessionQueries, used: UsedOnce) -> None:
        self.ctx = ctx
        self.settings = ctx.settings
        self.queries = queries
        self.env = _env()
        self.signin = SignIn(load_or_create_secret(web_secret_path(ctx.settings)), used)
        configured = ctx.settings.api.public_origin
        self.public_origin = safe_origin(configured) if configured else None

    def origin(self, request: Request) -> str:
        """This node's canonical origin: `api.public_origin`, else the address the server listens
        on (the socket's, never the client's `Host` header)."""
        if self.public_origin is not None:
            return self.public_origin
        server = request.scope.get("server")
        host, port = (server[0], server[1]) if server else (self.settings.api.host, self.settings.api.port)
        host = f"[{host}]" if ":" in str(host) else str(host)
        return safe_origin(f"http://{host}:{port}")

    def secure_cookies(self, request: Request) -> bool:
        """Secure cookies when people reach us over TLS: an https public origin, or https as seen
        by the server (behind a proxy, only when `api.forwarded_allow_ips` trusts it)."""
        return request.url.scheme == "https" or self.origin(request).startswith("https://")

    def render(self, name: str, request: Request, status_code: int = 200, **values: Any) -> HTMLResponse:
        session = self.session_of(request)
        html = self.env.get_template(name).render(request_path=request.url.path, me=session, **values)
        return HTMLResponse(html, status_code=status_code, headers=SECURITY_HEADERS)

    def error(self, request: Request, status_code: int, title: str, message: str) -> HTMLResponse:
        text = public_text(message, self.settings)
        return self.render("error.html", request, status_code, title=title, message=text)

    def outage(self, request: Request, exc: BaseException, what: str) -> HTMLResponse:
        """The 503 page for a dependency that is down; anything else is re-raised (a bug)."""
        dependency = unavailable(exc)
        if dependency is None:
            raise exc
        title = "Chain not reachable" if dependency == "the chain" else "IPFS not reachable"
        return self.error(request, 503, title, f"{what} cannot be read: {exc}")

    def session_of(self, request: Request) -> WebSession | None:
        return self.signin.read(request.cookies.get(COOKIE_NAME))

    def same_origin(self, request: Request) -> bool:
        """A browser POST must come from our own pages (Origin or Referer, when sent, must be ours)."""
        own = self.origin(request)
        origin = request.headers.get("origin")
        if origin is not None:
            return _origin_or_none(origin) == own
        referer = request.headers.get("referer")
        if referer is not None:
            parts = urlsplit(referer)
            return _origin_or_none(f"{parts.scheme}://{parts.netloc}") == own
        return True


def _origin_or_none(text: str) -> str | None:
    try:
        return safe_origin(text)
    except ValueError:
        return None


async def read_form(request: Request) -> dict[str, list[str]]:
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype != "application/x-www-form-urlencoded":
        raise ValueError("the form must be sent as application/x-www-form-urlencoded")
    raw = await request.body()
    try:
        return parse_qs(raw.decode("utf-8"), keep_blank_values=True, strict_parsing=False, max_num_fields=64)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"the form could not be read: {exc}") from exc


def one(form: dict[str, list[str]], key: str) -> str:
    values = form.get(key, [])
    return values[0] if values else ""


def register_web(app: FastAPI, ctx: NodeContext, used: UsedOnce) -> WebPages:
    """Mount the static assets, add the dashboard and audit pages and `/metrics` to `app`."""
    from trustnode.api.web.audit import register_audit
    from trustnode.api.web.dashboard import register_dashboard

    install_metrics(app, ctx)
    queries: SessionQueries = getattr(app.state, "queries", None) or SessionQueries(ctx)
    pages = WebPages(ctx, queries, used)
    app.state.web = pages
    static_dir = resources.files("trustnode.api").joinpath("static")
    app.mount("/static", StaticFiles(directory=str(static_dir)), name="static")
    register_dashboard(app, pages)
    register_audit(app, pages)
    return pages

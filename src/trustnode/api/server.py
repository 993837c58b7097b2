"""How `trustnode api serve` runs the app: one place for the HTTP server's settings.

Behind a TLS-terminating proxy the app sees plain http from the proxy; the proxy says what the
browser used in `X-Forwarded-Proto` (and who it is in `X-Forwarded-For`). Those headers are
honoured only from the addresses in `api.forwarded_allow_ips` (default 127.0.0.1, a proxy on
the same machine); from anyone else they are ignored, so a client cannot claim https (or
another address) by sending them itself. With https seen, the audit page's session cookie is
marked Secure.
"""

from __future__ import annotations

import uvicorn
from fastapi import FastAPI

from trustnode.config import Settings


def uvicorn_config(
    app: FastAPI, settings: Settings, *, host: str | None = None, port: int | None = None
) -> uvicorn.Config:
    """The server configuration for `app` under `settings` (bind address, trusted proxies)."""
    return uvicorn.Config(
        app,
        host=host or settings.api.host,
        port=port or settings.api.port,
        log_level="warning",
        proxy_headers=True,
        forwarded_allow_ips=list(settings.api.forwarded_allow_ips),
        server_header=False,
    )

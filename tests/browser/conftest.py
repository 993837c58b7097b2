"""Headless Chromium for the browser tests, cut off from every host but 127.0.0.1."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import uvicorn
from fastapi import FastAPI

from tests.conftest import REPO_ROOT, start_server

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = REPO_ROOT / "test-artifacts"
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        pytest.fail("Debian chromium is not installed: run `make install` (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


class LocalOnly:
    """Aborts and records every request to a host other than 127.0.0.1 (no CDN, no network)."""

    def __init__(self) -> None:
        self.blocked: list[str] = []

    def __call__(self, route: Any) -> None:
        url = route.request.url
        host = urlsplit(url).hostname
        if url.startswith(("data:", "blob:", "about:")) or host == "127.0.0.1":
            route.continue_()
        else:
            self.blocked.append(url)
            route.abort()


@pytest.fixture
def page(browser: Any) -> Iterator[tuple[Any, LocalOnly]]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    guard = LocalOnly()
    context.route("**/*", guard)
    pg = context.new_page()
    pg.set_default_timeout(20_000)
    try:
        yield pg, guard
    finally:
        context.close()


def shot(pg: Any, name: str) -> Path:
    """Save a full-page screenshot as a test artifact."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    pg.screenshot(path=str(path), full_page=True)
    return path


def serve(app: FastAPI) -> tuple[uvicorn.Server, threading.Thread, str]:
    """Run `app` on 127.0.0.1 in a thread; stop with `server.should_exit = True`."""
    return start_server(app)

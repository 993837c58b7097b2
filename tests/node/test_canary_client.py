"""The provider's canary operator client against a real HTTP server on 127.0.0.1 that misbehaves
on purpose: outage answers are retried a bounded number of times, refusals are not retried and
carry the operator's reason, a malformed answer is refused, and a timeout is an outage."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse

from tests.conftest import start_server, stop_server
from trustnode.models.canary_operator import CanaryRequest, CanaryShape
from trustnode.models.enums import Tier
from trustnode.node.canary_client import CanaryClient, OperatorRefused, OperatorUnavailable

REQ = CanaryRequest(
    provider="0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
    shapes=[CanaryShape(tier=Tier.COMPUTER, chars=80)],
    count=1,
)
BATCH = {
    "ticket": "cn_x",
    "canaries": [
        {
            "slot": 0, "source": 0, "tier": 0, "text": "Let A = 2 * 3 = 6.", "level": "STEP",
            "kind": "calculation", "auditor": "T_Auto", "summary": "a product",
        }
    ],
}  # fmt: skip


@pytest.fixture
def server() -> Iterator[tuple[str, dict[str, int]]]:
    app = FastAPI()
    calls: dict[str, int] = {}

    @app.post("/{mode}/v1/canary/requests")
    async def requests(mode: str, request: Request) -> Response:
        calls[mode] = calls.get(mode, 0) + 1
        if request.headers.get("authorization") != "Bearer k":
            return JSONResponse({"error": "missing or wrong API key"}, status_code=401)
        if mode == "busy" or (mode == "flaky" and calls[mode] < 3):
            return JSONResponse({"error": "busy"}, status_code=503)
        if mode == "refuse":
            return JSONResponse({"error": "shapes: too many"}, status_code=422)
        if mode == "garbage":
            return Response("not json", status_code=201)
        if mode == "slow":
            time.sleep(1.5)
        return JSONResponse(BATCH, status_code=201)

    srv, thread, url = start_server(app)
    yield url, calls
    stop_server(srv, thread)


def client(url: str, mode: str, **kw: float) -> CanaryClient:
    return CanaryClient(f"{url}/{mode}", "k", backoff_s=0.01, **kw)  # type: ignore[arg-type]


def test_outages_are_retried_a_bounded_number_of_times(server: tuple[str, dict[str, int]]) -> None:
    url, calls = server
    assert client(url, "flaky").request(REQ).ticket == "cn_x"
    assert calls["flaky"] == 3, "two 503s, then the answer"
    with pytest.raises(OperatorUnavailable, match="after 3 attempts: HTTP 503: busy"):
        client(url, "busy").request(REQ)
    assert calls["busy"] == 3, "never more than `attempts`"


def test_refusals_are_not_retried_and_say_why(server: tuple[str, dict[str, int]]) -> None:
    url, calls = server
    with pytest.raises(OperatorRefused, match=r"refused \(422\): shapes: too many"):
        client(url, "refuse").request(REQ)
    assert calls["refuse"] == 1
    with pytest.raises(OperatorRefused, match="401"):
        CanaryClient(f"{url}/ok", "wrong").request(REQ)
    with pytest.raises(OperatorRefused, match="not a CanaryBatch"):
        client(url, "garbage").request(REQ)


def test_a_slow_operator_times_out_as_an_outage(server: tuple[str, dict[str, int]]) -> None:
    url, _ = server
    with pytest.raises(OperatorUnavailable, match="ReadTimeout"):
        client(url, "slow", timeout_s=0.5, attempts=1).request(REQ)
    with pytest.raises(OperatorUnavailable, match="ConnectError"):
        CanaryClient("http://127.0.0.1:9", "k", attempts=1).request(REQ)

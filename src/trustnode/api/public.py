"""Public, read-only routes: on-chain outcomes, Merkle proofs, auditor records. No plaintext.

Everything here reads the chain (and the published session bundle on IPFS): when either is
down the answer is 503 naming which, never a server error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, TypeVar

from fastapi import APIRouter, Path, Query
from fastapi.concurrency import run_in_threadpool

from trustnode.api.errors import APIError, dependency_error, public_text, responses
from trustnode.config import Settings
from trustnode.node.queries import (
    AuditorView,
    ProofView,
    SessionQueries,
    SessionSummary,
    SessionView,
    UnknownSessionError,
)

T = TypeVar("T")

#: Largest id a uint256 session or segment index can hold.
UINT256_MAX = 2**256 - 1


async def read_chain(settings: Settings, what: str, fn: Callable[..., T], *args: object) -> T:
    """Run a chain query in a thread; unknown ids become 404, outages 503 (credentials removed)."""
    try:
        return await run_in_threadpool(fn, *args)
    except UnknownSessionError as exc:
        raise APIError(404, public_text(str(exc), settings)) from None
    except Exception as exc:
        outage = dependency_error(exc, settings, what)
        if outage is not None:
            raise outage from None
        if isinstance(exc, ValueError):
            raise APIError(422, public_text(str(exc), settings)) from None
        raise


def public_router(queries: SessionQueries, settings: Settings) -> APIRouter:
    router = APIRouter(prefix="/v1", tags=["sessions"])

    @router.get("/sessions", response_model=list[SessionSummary], responses=responses(422, 503))
    async def list_sessions(limit: Annotated[int, Query(ge=1, le=500)] = 50) -> list[SessionSummary]:
        """The latest sessions with their state and verdict."""
        return await read_chain(settings, "the sessions", queries.sessions, limit)

    @router.get("/sessions/{session_id}", response_model=SessionView, responses=responses(404, 422, 503))
    async def get_session(session_id: Annotated[int, Path(ge=1, le=UINT256_MAX)]) -> SessionView:
        """State, verdict and score, per-segment verdicts and votes, CIDs, Merkle root, transactions."""
        return await read_chain(settings, f"session {session_id}", queries.session, session_id)

    @router.get(
        "/sessions/{session_id}/segments/{index}/proof",
        response_model=ProofView,
        responses=responses(404, 422, 503),
    )
    async def get_proof(
        session_id: Annotated[int, Path(ge=1, le=UINT256_MAX)],
        index: Annotated[int, Path(ge=0, le=UINT256_MAX)],
    ) -> ProofView:
        """Merkle inclusion proof of one segment (checkable with the contract's verifySegment)."""
        return await read_chain(settings, f"session {session_id}", queries.proof, session_id, index)

    @router.get(
        "/auditors/{address}", response_model=AuditorView, responses=responses(422, 503), tags=["auditors"]
    )
    async def get_auditor(
        address: Annotated[str, Path(pattern=r"^0x[0-9a-fA-F]{40}$", description="Auditor address.")],
    ) -> AuditorView:
        """Tier, stake, delegations, reputation and settlement history of an auditor."""
        return await read_chain(settings, f"auditor {address}", queries.auditor, address)

    return router

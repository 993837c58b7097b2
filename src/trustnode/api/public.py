"""Public, read-only routes: on-chain outcomes, Merkle proofs, auditor records. No plaintext."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Query
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from trustnode.chain.errors import ChainError
from trustnode.node.context import NodeContext
from trustnode.node.queries import (
    AuditorView,
    ProofView,
    SessionQueries,
    SessionSummary,
    SessionView,
    UnknownSessionError,
)


def _err(code: int, message: str) -> JSONResponse:
    return JSONResponse(status_code=code, content={"error": message, "fields": []})


def register_public_routes(app: FastAPI, ctx: NodeContext) -> SessionQueries:
    queries = SessionQueries(ctx)
    app.state.queries = queries

    async def guarded(fn: Any, *args: Any) -> Any:
        try:
            return await run_in_threadpool(fn, *args)
        except UnknownSessionError as exc:
            return _err(404, str(exc))
        except ValueError as exc:
            return _err(422, str(exc))
        except ChainError as exc:
            return _err(503, f"the chain is not reachable: {exc}")

    @app.get("/v1/sessions", response_model=list[SessionSummary])
    async def list_sessions(limit: int = Query(50, ge=1, le=500)) -> Any:
        """The latest sessions with their state and verdict."""
        return await guarded(queries.sessions, limit)

    @app.get("/v1/sessions/{session_id}", response_model=SessionView)
    async def get_session(session_id: int) -> Any:
        """State, verdict and score, per-segment verdicts and votes, CIDs, Merkle root, transactions."""
        if session_id < 1:
            return _err(404, f"no session {session_id}")
        return await guarded(queries.session, session_id)

    @app.get("/v1/sessions/{session_id}/segments/{index}/proof", response_model=ProofView)
    async def get_proof(session_id: int, index: int) -> Any:
        """Merkle inclusion proof of one segment (checkable with the contract's verifySegment)."""
        return await guarded(queries.proof, session_id, index)

    @app.get("/v1/auditors/{address}", response_model=AuditorView)
    async def get_auditor(address: str) -> Any:
        """Tier, stake, delegations, reputation and settlement history of an auditor."""
        return await guarded(queries.auditor, address)

    return queries

"""`/v1/traces`: providers submit reasoning traces and follow them.

A submission is refused at once, with the limit it breaks, when it cannot become a session
(see `api.limits`). An `Idempotency-Key` makes a retry safe: the same key with the same trace
returns the first job (200); with another trace it is refused (409), never silently answered
with the first one.
"""

from typing import Annotated

from fastapi import APIRouter, Depends, Header, Path, Request, Response, status
from fastapi.concurrency import run_in_threadpool

from trustnode.api.auth import OPTIONAL_SECURITY, SUBMIT_SECURITY, Authenticator
from trustnode.api.errors import APIError, responses
from trustnode.api.limits import SegmentCap, trace_limit_errors
from trustnode.api.views import TraceAccepted, TraceView, trace_view
from trustnode.models.trace import TraceInput
from trustnode.node.context import NodeContext
from trustnode.node.jobs import JobNotFoundError

IDEMPOTENCY_KEY_MAX = 128


def traces_router(ctx: NodeContext, auth: Authenticator) -> APIRouter:
    router = APIRouter(prefix="/v1/traces", tags=["traces"])
    mode = ctx.settings.decomposer.mode
    cap = SegmentCap(ctx)

    @router.post(
        "",
        status_code=status.HTTP_202_ACCEPTED,
        response_model=TraceAccepted,
        responses={
            200: {"model": TraceAccepted, "description": "Already submitted with this Idempotency-Key."},
            **responses(400, 401, 403, 409, 413, 422),
        },
        openapi_extra={"security": SUBMIT_SECURITY},
        summary="Submit a reasoning trace",
    )
    async def submit_trace(
        trace: TraceInput,
        response: Response,
        provider: Annotated[str, Depends(auth)],
        idempotency_key: Annotated[
            str | None,
            Header(
                max_length=IDEMPOTENCY_KEY_MAX,
                description="Makes a retry safe: the same key and trace return the first job.",
            ),
        ] = None,
    ) -> TraceAccepted:
        """Queue a reasoning trace for auditing; returns its id at once (the audit runs in the background).

        Give `thinking` (free text) or `steps` (pre-split). A trace that cannot fit one session
        (the contract's segment cap, 1,024), is longer than the segmenter reads, or is too short to
        split within the privacy share (320 characters of reasoning at 25%) is refused with 422.
        """
        max_segments = await run_in_threadpool(cap.get)
        share = ctx.settings.privacy.max_decrypt_share
        problems = await run_in_threadpool(trace_limit_errors, trace, mode, max_segments, share)
        if problems:
            names = ", ".join(p.message for p in problems)
            raise APIError(422, f"trace refused: {names}", problems)
        job, created = await run_in_threadpool(ctx.jobs.submit, trace, provider, idempotency_key)
        if not created and job.trace != trace:
            raise APIError(
                409,
                f"Idempotency-Key {idempotency_key!r} was already used for trace {job.id} with a "
                "different body: use a new key for a new trace",
            )
        ctx.notify_new_job()
        response.status_code = 202 if created else 200
        response.headers["Location"] = f"/v1/traces/{job.id}"
        return TraceAccepted(trace_id=job.id, status=job.status, stage=job.stage)

    @router.get(
        "/{trace_id}",
        response_model=TraceView,
        responses=responses(401, 403, 404, 409, 422),
        openapi_extra={"security": OPTIONAL_SECURITY},
        summary="A trace's status and outcome",
    )
    async def get_trace(
        request: Request, trace_id: Annotated[str, Path(max_length=64, description="Id from submit.")]
    ) -> TraceView:
        """Status, session id and transactions of a trace; the HDAG only to its own provider."""
        try:
            job = await run_in_threadpool(ctx.jobs.get, trace_id)
        except JobNotFoundError:
            raise APIError(404, f"no trace with id {trace_id!r}") from None
        provider = await auth.optional(request)
        return trace_view(job, include_hdag=provider == job.provider)

    return router

"""`/v1/canary`: a canary operator serves providers their gold canaries (issue 15).

Mounted only on a node with `canary_operator.enabled`. Clients authenticate like every provider
route (API key or EIP-191 signature); a ticket belongs to the credential that asked for it, and a
signed request may only ask for canaries of its own address. A refused placement is a 422 whose
`error` says which check failed; nothing is committed then.
"""

from typing import Annotated

from fastapi import APIRouter, Depends, Path, status
from fastapi.concurrency import run_in_threadpool

from trustnode.api.auth import SUBMIT_SECURITY, Authenticator
from trustnode.api.errors import APIError, responses
from trustnode.models.canary_operator import CanaryBatch, CanaryPlacement, CanaryReceipt, CanaryRequest
from trustnode.node.canary_operator import CanaryOperator, PlacementRefused
from trustnode.node.canary_store import TooManyOpenTickets

TICKET = Path(
    max_length=64, pattern=r"^[A-Za-z0-9_-]+$", description="Ticket id from POST /v1/canary/requests."
)


def canary_router(op: CanaryOperator, auth: Authenticator) -> APIRouter:
    router = APIRouter(prefix="/v1/canary", tags=["canary"])

    @router.post(
        "/requests",
        status_code=status.HTTP_201_CREATED,
        response_model=CanaryBatch,
        responses=responses(400, 401, 403, 413, 422, 429),
        openapi_extra={"security": SUBMIT_SECURITY},
        summary="Ask for gold canaries",
    )
    async def request_canaries(req: CanaryRequest, caller: Annotated[str, Depends(auth)]) -> CanaryBatch:
        """Texts for `count` canaries shaped like the given donors; truths and salts stay here."""
        if caller.startswith("addr:") and caller[5:].lower() != req.provider.lower():
            raise APIError(403, f"a request signed by {caller[5:]} cannot ask canaries for {req.provider}")
        try:
            return await run_in_threadpool(op.issue, req, caller)
        except TooManyOpenTickets as exc:
            raise APIError(429, str(exc), headers={"Retry-After": "60"}) from None

    @router.post(
        "/requests/{ticket}/placement",
        response_model=CanaryReceipt,
        responses=responses(400, 401, 403, 404, 409, 413, 422, 503),
        openapi_extra={"security": SUBMIT_SECURITY},
        summary="Report where the canaries went; committed when every check passes",
    )
    async def place(
        ticket: Annotated[str, TICKET], placement: CanaryPlacement, caller: Annotated[str, Depends(auth)]
    ) -> CanaryReceipt:
        """Checks every canary (session and provider on chain, commit window, ciphertext content and
        index, Merkle proof) and then commits them all in one transaction. A replay of the accepted
        placement returns the same receipt; a failed check is a 422 naming it."""
        try:
            return await run_in_threadpool(op.place, ticket, placement, caller)
        except PlacementRefused as exc:
            raise APIError(exc.status, exc.reason) from None

    @router.get(
        "/requests/{ticket}",
        response_model=CanaryReceipt,
        responses=responses(401, 403, 404, 422),
        openapi_extra={"security": SUBMIT_SECURITY},
        summary="Where a ticket stands",
    )
    async def get_ticket(
        ticket: Annotated[str, TICKET], caller: Annotated[str, Depends(auth)]
    ) -> CanaryReceipt:
        """issued, committed, revealed or refused (with the reason)."""
        try:
            return await run_in_threadpool(op.receipt, ticket, caller)
        except PlacementRefused as exc:
            raise APIError(exc.status, exc.reason) from None

    return router

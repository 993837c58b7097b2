"""What a provider and a canary operator exchange (issue 15, CANARY-OPERATOR design).

The operator writes each canary's text and keeps its truth and salt; the provider only places the
texts in its session and then tells the operator where each one went, so the operator can check the
placement against the chain before it commits anything. Every list and string is bounded, so an
oversize request is refused (422) before any work is done.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from trustnode.models.enums import AuditorType, Level, Tier
from trustnode.models.human import normalize_address

#: Bounds of one request: a session has at most this many donors and canaries.
MAX_SHAPES = 1024
MAX_CANARIES = 256
#: A donor longer than this is imitated at this length (a segment is never this long in practice).
MAX_CHARS = 100_000
MAX_PROOF = 64
_HEX32 = r"^0x[0-9a-fA-F]{64}$"


class CanaryShape(BaseModel):
    """One real non-GOAL segment of the provider's session: a canary may copy its tier and length."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tier: Tier
    chars: int = Field(ge=1, le=MAX_CHARS)
    level: Level | None = Field(
        default=None,
        description="The donor's level: a canary the router reads as the problem statement (GOAL) "
        "takes it, as a provider-written canary did (STEP when not given).",
    )


class CanaryRequest(BaseModel):
    """A provider asks for `count` canaries shaped like its session's donors."""

    model_config = ConfigDict(extra="forbid")

    provider: str = Field(description="The provider's chain address (it must open the session).")
    shapes: list[CanaryShape] = Field(min_length=1, max_length=MAX_SHAPES)
    count: int = Field(ge=1, le=MAX_CANARIES, description="canaries_for_real(n_real, canaryRateBps)")
    high_stakes: bool = False

    @field_validator("provider")
    @classmethod
    def _address(cls, v: str) -> str:
        return normalize_address(v)


class CanaryText(BaseModel):
    """One canary as the provider sees it: what to pin, never its truth, salt or mutation."""

    model_config = ConfigDict(frozen=True)

    slot: int = Field(ge=0, description="Position in the batch; the placement names it.")
    source: int = Field(ge=0, description="Index into the request's shapes of the donor it imitates.")
    tier: Tier
    text: str
    level: Level
    kind: str = Field(description="The router's unit type (a segment's `type`).")
    auditor: AuditorType
    summary: str = ""


class CanaryBatch(BaseModel):
    """The operator's answer to a request: a ticket and the texts to place."""

    ticket: str
    canaries: list[CanaryText]


class CanaryPlacementItem(BaseModel):
    """Where one canary of the batch went in the opened session."""

    model_config = ConfigDict(extra="forbid")

    slot: int = Field(ge=0, lt=MAX_CANARIES)
    index: int = Field(ge=0, lt=2**32, description="Leaf (segment) index in the session.")
    cid: str = Field(min_length=1, max_length=128, description="Canonical base32 CIDv1 of its ciphertext.")
    key_hex: str = Field(pattern=_HEX32, description="The segment's AES-256-GCM content key.")
    proof: list[str] = Field(max_length=MAX_PROOF, description="Merkle proof (bytes32 hex) of its leaf.")

    @field_validator("proof")
    @classmethod
    def _proof(cls, v: list[str]) -> list[str]:
        for p in v:
            if (
                len(p) != 66
                or not p.startswith("0x")
                or any(c not in "0123456789abcdefABCDEF" for c in p[2:])
            ):
                raise ValueError(f"a proof element must be a 0x-hex bytes32: {p[:80]!r}")
        return v


class CanaryPlacement(BaseModel):
    """The provider's report after `openSession`: one item per canary of the batch.

    `session_nonce` is the 32-byte binding the provider drew before pinning (it is in the key
    manifest, not on chain): without it no ciphertext decrypts, so the operator could not check
    that the CID holds its text.
    """

    model_config = ConfigDict(extra="forbid")

    session_id: int = Field(ge=0, lt=2**64)
    session_nonce: str = Field(pattern=_HEX32)
    items: list[CanaryPlacementItem] = Field(min_length=1, max_length=MAX_CANARIES)


CanaryTicketState = Literal["issued", "committed", "revealed", "refused"]


class CanaryReceipt(BaseModel):
    """Where a ticket stands. `refused`: a placement failed a check (the reason says which); a
    later correct placement of the same ticket may still be accepted while nothing is committed."""

    ticket: str
    state: CanaryTicketState
    session_id: int | None = None
    tx_hash: str | None = Field(default=None, description="The commit_canaries transaction.")
    reveal_tx_hash: str | None = None
    reason: str | None = None

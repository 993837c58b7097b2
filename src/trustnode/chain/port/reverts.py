"""Revert names the node reacts to, checked against the ABI of the shipped artifacts.

A name here that no contract declares would never match (the bug this module replaces:
"NotReady" and "RandomnessNotReady" were matched, and no contract has them).
`undeclared()` lists such names; a test keeps it empty, so a contract change that renames
an error fails the build instead of silently changing what the node does.

Permanent reverts will fail the same way on every retry (the request itself is wrong);
anything else may pass later (a phase moves on, the owner unpauses, the account is funded).
"""

from __future__ import annotations

from functools import cache

from trustnode.chain.artifacts_io import all_artifacts, load_artifact
from trustnode.chain.errors import ContractRevertError
from trustnode.chain.port.revert_meanings import DEPLOYED, MEANINGS

# Waiting for randomness: the draw's (LookaheadRandomness, or AuditSessions for a VRF value in its
# delivery block: usable from the next block) or the slash coins' (AuditSessions).
TOO_EARLY = "TooEarly"
SLASH_SEED_PENDING = "SlashSeedPending"
# Already done: the action's effect is on chain (a retry after a crash).
ALREADY_REVEALED = "AlreadyRevealed"
ALREADY_SETTLED = "AlreadySettled"
DRAW_COMPLETE = "DrawComplete"
# Staking's ledger: a deposit or a withdrawal waits in a FLOW entry behind earlier sessions.
DEPOSIT_PENDING = "DepositPending"
WITHDRAWAL_PENDING = "WithdrawalPending"
INSUFFICIENT_SHARES = "InsufficientShares"
WITHDRAWAL_NOT_READY = "WithdrawalNotReady"
ALREADY_CLAIMED = "AlreadyClaimed"
# Issue 15: settlement waits for the final outcome and for the appealed segments' money.
OUTCOME_NOT_FINAL = "OutcomeNotFinal"
APPEALS_UNRESOLVED = "AppealsUnresolved"

#: The request can never succeed: the job fails with the reason instead of retrying.
PERMANENT = frozenset(
    {
        "InvalidSegments",
        "InvalidTier",
        "InvalidWeight",
        "FeeTooLow",
        "FeeTooHigh",
        "EmptyManifest",
        "NotProvider",
        "UnknownSession",
        "TooLate",
        "InvalidVerdicts",
        "CommitmentMismatch",
        "NotSeated",
        "ZeroCommitment",
        "UnsupportedRound",
        "PanelOutOfRange",
        # issue 15: an appeal or a canary reveal that can never pass as sent
        "AppealsDisabled",
        "EmptyAppeal",
        "InvalidSegment",
        "SegmentsNotAscending",
        "SegmentIsCanary",
        "MixedDepths",
        "MixedTiers",
        "SegmentFinal",
        "NoRoundsLeft",
        "TooManyRounds",
        "WrongCanaryCount",
        "NotCanaryOperator",
        "ProviderIsCanaryOperator",
        "NotCommittingOperator",
        "CanariesAlreadyCommitted",
        "CommitTooLate",
        "CanaryRevealClosed",
        "CanaryMismatch",
        "UnknownCanarySlot",
        "InvalidVerdict",
    }
)

#: Every name this module reacts to.
NAMES = PERMANENT | {
    TOO_EARLY,
    SLASH_SEED_PENDING,
    ALREADY_REVEALED,
    ALREADY_SETTLED,
    DRAW_COMPLETE,
    DEPOSIT_PENDING,
    WITHDRAWAL_PENDING,
    INSUFFICIENT_SHARES,
    WITHDRAWAL_NOT_READY,
    ALREADY_CLAIMED,
    OUTCOME_NOT_FINAL,
    APPEALS_UNRESOLVED,
}


@cache
def declared() -> frozenset[str]:
    """Every custom error name in the shipped ABIs."""
    return frozenset(
        item["name"] for art in all_artifacts().values() for item in art.abi if item.get("type") == "error"
    )


def undeclared() -> list[str]:
    """Names used here that no shipped contract declares (must stay empty)."""
    return sorted(NAMES - declared())


def is_permanent(exc: BaseException) -> bool:
    """True for a revert that will fail the same way however often it is retried."""
    return isinstance(exc, ContractRevertError) and exc.name in PERMANENT


def is_revert(exc: BaseException, name: str) -> bool:
    """`exc` is the revert `name` (a name this module declares)."""
    if name not in NAMES:
        raise ValueError(f"{name!r} is not a revert name the node knows (see chain.port.reverts)")
    return isinstance(exc, ContractRevertError) and exc.name == name


def explain(exc: ContractRevertError) -> str:
    """A reason for people: the error name with its arguments and what it means."""
    meaning = MEANINGS.get(exc.name)
    return f"{exc}" + (f": {meaning}" if meaning else "")


def unexplained() -> list[str]:
    """Errors of the deployed contracts that `MEANINGS` does not explain (must stay empty)."""
    names = {
        item["name"] for name in DEPLOYED for item in load_artifact(name).abi if item.get("type") == "error"
    }
    return sorted(names - set(MEANINGS))

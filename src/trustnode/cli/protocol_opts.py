"""The protocol-parameter options shared by `devnet up` and `deploy`.

Each option defaults to the configuration (`[protocol]`, `TRUSTNODE_PROTOCOL__*`); an option
given, or a value set in the configuration, is *asked* for: on an existing deployment it is
applied by the owner or refused, never ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Annotated, Any, NamedTuple, TypeVar

import typer
from pydantic import ValidationError

from trustnode.chain.deployment import session_params
from trustnode.chain.protocol import WAD, SessionParams
from trustnode.chain.units import parse_trust
from trustnode.cli.common import fail
from trustnode.config import ProtocolSettings, Settings
from trustnode.consensus.appeals import check_appeal_params

T = TypeVar("T")

SeatsOpt = Annotated[
    str | None,
    typer.Option(
        "--seats-per-tier",
        metavar="C,L,H",
        help="Auditors per segment for computer,llm,human (k). Config: protocol.seats_per_tier.",
    ),
]
SeatCapOpt = Annotated[
    int | None, typer.Option("--seat-cap", metavar="N", help="Most seats one auditor holds in a session.")
]
TauOpt = Annotated[
    int | None, typer.Option("--tau-bps", metavar="BPS", help="Quorum per segment, basis points of k.")
]
BetaOpt = Annotated[
    int | None,
    typer.Option(
        "--beta-bps", metavar="BPS", help="Share of the segment weight a PASS needs (basis points)."
    ),
]
RewardOpt = Annotated[
    Decimal | None,
    typer.Option("--reward", metavar="TRUST", help="TRUST per vote that agrees with the outcome."),
]
SlashOpt = Annotated[
    Decimal | None,
    typer.Option("--slash", metavar="TRUST", help="TRUST slashed per vote against the outcome."),
]
DrawOpt = Annotated[
    int | None, typer.Option("--draw-blocks", metavar="BLOCKS", help="Blocks to draw auditors.")
]
KeyOpt = Annotated[int | None, typer.Option("--key-blocks", metavar="BLOCKS", help="Blocks to publish keys.")]
CommitOpt = Annotated[int | None, typer.Option("--commit-blocks", metavar="BLOCKS", help="Commit phase.")]
RevealOpt = Annotated[int | None, typer.Option("--reveal-blocks", metavar="BLOCKS", help="Reveal phase.")]
CanaryCommitOpt = Annotated[
    int | None,
    typer.Option(
        "--canary-commit-blocks",
        metavar="BLOCKS",
        help="Blocks the canary operator has to commit after a session opens (0..199).",
    ),
]


def parse_seats(text: str) -> tuple[int, int, int]:
    try:
        parts = tuple(int(p) for p in text.split(","))
    except ValueError:
        fail(f"--seats-per-tier must be three integers like 2,1,1, got {text!r}")
    if len(parts) != 3:
        fail(f"--seats-per-tier needs three numbers (computer,llm,human), got {text!r}")
    return parts[0], parts[1], parts[2]


def asked_protocol(
    s: Settings,
    *,
    seats_per_tier: str | None = None,
    seat_cap: int | None = None,
    tau_bps: int | None = None,
    beta_bps: int | None = None,
    reward: Decimal | None = None,
    slash: Decimal | None = None,
    draw_blocks: int | None = None,
    key_blocks: int | None = None,
    commit_blocks: int | None = None,
    reveal_blocks: int | None = None,
    canary_commit_blocks: int | None = None,
) -> tuple[ProtocolSettings, set[str]]:
    """(the parameters to run, the fields the operator asked for: options and configured values)."""
    flags: dict[str, object] = {
        "seat_cap": seat_cap,
        "tau_bps": tau_bps,
        "beta_bps": beta_bps,
        "reward": reward,
        "slash": slash,
        "draw_blocks": draw_blocks,
        "key_blocks": key_blocks,
        "commit_blocks": commit_blocks,
        "reveal_blocks": reveal_blocks,
        "canary_commit_blocks": canary_commit_blocks,
    }
    if seats_per_tier is not None:
        flags["seats_per_tier"] = parse_seats(seats_per_tier)
    given = {k: v for k, v in flags.items() if v is not None}
    try:
        merged = ProtocolSettings.model_validate({**s.protocol.model_dump(), **given})
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        fail(f"invalid protocol parameters: {problems}")
    if not all(1 <= k <= 31 for k in merged.seats_per_tier):
        fail(f"seats per tier must each be 1..31, got {merged.seats_per_tier}")
    return merged, set(s.protocol.model_fields_set) | set(given)


# -- issue 15: appeals and gold canaries (AppealModule parameters, pinned per session) --------------
AppealBlocksOpt = Annotated[
    int | None,
    typer.Option(
        "--appeal-blocks", metavar="BLOCKS", help="Appeal window after each decision; 0 disables appeals."
    ),
]
MaxRoundsOpt = Annotated[
    int | None, typer.Option("--max-rounds", metavar="N", help="Appeal panels per segment (0..4).")
]
BondMultOpt = Annotated[
    int | None,
    typer.Option(
        "--appeal-bond-multiplier-bps", metavar="BPS", help="Bond = k * R * this / 10000 (>= 10000)."
    ),
]
AppealRewardOpt = Annotated[
    int | None,
    typer.Option(
        "--appeal-reward-bps", metavar="BPS", help="A successful appellant's reward, share of its bond."
    ),
]
AppealBudgetOpt = Annotated[
    Decimal | None,
    typer.Option("--appeal-budget", metavar="TRUST", help="Most the treasury grants one session's appeals."),
]
CanaryRateOpt = Annotated[
    int | None,
    typer.Option("--canary-rate-bps", metavar="BPS", help="Canaries per segment of a session (0..3000)."),
]
CanaryRevealOpt = Annotated[
    int | None, typer.Option("--canary-reveal-blocks", metavar="BLOCKS", help="Canary reveal window (>= 1).")
]
CanaryGammaOpt = Annotated[
    Decimal | None,
    typer.Option("--canary-gamma", metavar="STEP", help="Reputation step of a canary vote (0..1)."),
]
CanaryRefundOpt = Annotated[
    int | None,
    typer.Option(
        "--canary-refund-bps",
        metavar="BPS",
        help="Treasury refund per revealed canary, share of k R (at most 2500: the treasury's fee share).",
    ),
]


def pick(option: T | None, configured: T | None) -> T | None:
    """An option given on the command line wins over the configured value."""
    return configured if option is None else option


def asked_appeals(
    s: Settings,
    base: SessionParams,
    *,
    appeal_blocks: int | None = None,
    max_rounds: int | None = None,
    appeal_bond_multiplier_bps: int | None = None,
    appeal_reward_bps: int | None = None,
    appeal_budget: Decimal | None = None,
    canary_rate_bps: int | None = None,
    canary_reveal_blocks: int | None = None,
    canary_gamma: Decimal | None = None,
    canary_refund_bps: int | None = None,
) -> dict[str, int]:
    """The appeal and canary fields asked for (options over the `[protocol]` configuration, in chain
    units), checked against `base` as `setParams` would check them (panels within 63 seats, spoiling a
    panel and appealing it never pays)."""
    cfg = s.protocol
    budget = pick(appeal_budget, cfg.appeal_budget)
    gamma = pick(canary_gamma, cfg.canary_gamma)
    flags: dict[str, int | None] = {
        "appeal_blocks": pick(appeal_blocks, cfg.appeal_blocks),
        "max_rounds": pick(max_rounds, cfg.max_rounds),
        "appeal_bond_multiplier_bps": pick(appeal_bond_multiplier_bps, cfg.appeal_bond_multiplier_bps),
        "appeal_reward_bps": pick(appeal_reward_bps, cfg.appeal_reward_bps),
        "appeal_budget": None if budget is None else parse_trust(budget),
        "canary_rate_bps": pick(canary_rate_bps, cfg.canary_rate_bps),
        "canary_reveal_blocks": pick(canary_reveal_blocks, cfg.canary_reveal_blocks),
        "canary_gamma": None if gamma is None else int(gamma * WAD),
        "canary_refund_bps": pick(canary_refund_bps, cfg.canary_refund_bps),
    }
    given = {k: v for k, v in flags.items() if v is not None}
    try:
        merged = SessionParams.model_validate({**base.model_dump(), **given})
        check_appeal_params(
            merged.appeal,
            merged.seats_per_tier,
            merged.tau_bps,
            merged.econ,
            canary_refund_bps=merged.canary_refund_bps,
        )
    except (ValidationError, ValueError) as exc:
        fail(f"invalid appeal or canary parameters: {exc}")
    return given


PROTOCOL_OPTIONS = (
    "seats_per_tier", "seat_cap", "tau_bps", "beta_bps", "reward", "slash",
    "draw_blocks", "key_blocks", "commit_blocks", "reveal_blocks", "canary_commit_blocks",
)  # fmt: skip
APPEAL_OPTIONS = (
    "appeal_blocks", "max_rounds", "appeal_bond_multiplier_bps", "appeal_reward_bps", "appeal_budget",
    "canary_rate_bps", "canary_reveal_blocks", "canary_gamma", "canary_refund_bps",
)  # fmt: skip


class AskedParameters(NamedTuple):
    """What `devnet up` or `deploy` was asked to run."""

    protocol: ProtocolSettings
    asked: set[str]  # the ProtocolSettings fields given as options or configured
    appeals: dict[str, int]  # the SessionParams appeal and canary fields asked for, in chain units


def asked_parameters(s: Settings, options: Mapping[str, Any]) -> AskedParameters:
    """Both parts of the protocol a command was asked for; `options` holds the command's option
    values by name (its `locals()`), so `devnet up` and `deploy` read them one way."""
    protocol, asked = asked_protocol(s, **{k: options[k] for k in PROTOCOL_OPTIONS})
    appeals = asked_appeals(s, session_params(protocol), **{k: options[k] for k in APPEAL_OPTIONS})
    return AskedParameters(protocol, asked, appeals)

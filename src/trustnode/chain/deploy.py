"""Deploy the whole protocol v2, wired together, and return every contract address by name.

Order: TrustToken -> Treasury -> Staking (deploys its SortitionTrees) -> AuditorRegistry ->
LookaheadRandomness -> AuditSessions (core) -> DrawModule -> VotingModule -> SettlementModule,
then `AuditSessions.setModules(draw, voting, settlement)` and `Staking.wire(registry, draw,
settlement)`; then issue 15's AppealSettlement (it keeps the appeal and canary parameters of
`session_params` and holds bonds), bound to the AppealModule's predicted address and deployed first
so that its initcode is not embedded in the module's (EIP-3860), then the AppealModule (its
constructor refuses a settlement bound to another module or core) and CanaryModule, wired with
`AuditSessions.setExtensions(appeals, canaries)` and allowed to spend the Treasury's appeal budget
and canary refunds (`Treasury.setSpender`). The deployer owns everything while wiring; if another
`owner` is given, ownership is then offered to it (Ownable2Step: the owner completes it with
`acceptOwnership()` on Staking, AuditorRegistry, AuditSessions, Treasury and AppealSettlement).
The `canary_operators` (settings `protocol.canary_operators`) are authorized on the CanaryModule
while the deployer still owns the core: only they write, commit and reveal gold canaries.
"""

from __future__ import annotations

from collections.abc import Sequence

from web3 import Web3
from web3.contract import Contract
from web3.types import Nonce
from web3.utils import get_create_address

from trustnode.chain.client import ChainClient
from trustnode.chain.errors import ChainError
from trustnode.chain.protocol import (
    DEVNET_EPOCH_BLOCKS,
    DEVNET_RANDOMNESS_DELAY,
    DEVNET_SESSION_PARAMS,
    DEVNET_STAKING_PARAMS,
    SessionParams,
    StakingParams,
    check_stake_premise,
)
from trustnode.consensus.canaries import check_canary_window

INITIAL_SUPPLY = 1_000_000_000 * 10**18

CONTRACT_NAMES = (
    "TrustToken",
    "Treasury",
    "Staking",
    "SortitionTrees",
    "AuditorRegistry",
    "LookaheadRandomness",
    "AuditSessions",
    "DrawModule",
    "VotingModule",
    "SettlementModule",
    "AppealModule",
    "AppealSettlement",
    "CanaryModule",
)
#: Epochs a snapshot stays readable after the one it starts (`SnapshotSumTree.RING` - 1): a session
#: opened in an epoch's last block must be drawn within this many epochs.
SNAPSHOT_SPAN_EPOCHS = 2
#: What the Treasury lets each issue-15 module spend (each session's grant is capped by appealBudget).
SPENDER_ALLOWANCE = 2**256 - 1


def appeal_params_abi(p: SessionParams) -> tuple[int, ...]:
    """IAppealModule.AppealParams of `p`'s appeal and canary fields."""
    return (
        p.appeal_blocks, p.max_rounds, p.appeal_bond_multiplier_bps, p.appeal_reward_bps, p.appeal_budget,
        p.canary_rate_bps, p.canary_reveal_blocks, p.canary_gamma, p.canary_refund_bps,
    )  # fmt: skip


def check_randomness_delay(randomness_delay: int, epoch_blocks: int) -> None:
    """Refuse, before any transaction, a lookahead delay the session core would refuse on chain.

    The rule is the core's (`AuditSessions._checkDelay`, error `RandomnessTooSlow`): a source's delay
    must not exceed one epoch, so a session opened in an epoch's last block (whose snapshot is readable
    `SNAPSHOT_SPAN_EPOCHS` epochs) gets its draw value with an epoch left to draw in (outside review 5).
    """
    if not 1 <= randomness_delay <= epoch_blocks:
        raise ValueError(
            f"randomness delay {randomness_delay} does not fit a snapshot of {epoch_blocks}-block epochs "
            f"(AuditSessions would revert RandomnessTooSlow): a session opened in an epoch's last block "
            f"could get its draw randomness too late to be drawn before the snapshot stops being readable; "
            f"use a delay of 1..{epoch_blocks} or epochs of at least {randomness_delay} blocks"
        )


def checked_operators(addresses: Sequence[str]) -> list[str]:
    """Checksummed canary operator addresses, each once; ValueError naming a bad one."""
    out: list[str] = []
    for raw in addresses:
        if not Web3.is_address(raw) or int(raw, 16) == 0:
            raise ValueError(f"protocol.canary_operators: {raw!r} is not a non-zero address")
        address = Web3.to_checksum_address(raw)
        if address not in out:
            out.append(address)
    return out


def deploy_appeals(
    client: ChainClient, sessions: str, owner: str, params: tuple[int, ...]
) -> tuple[Contract, Contract]:
    """Deploy the AppealSettlement, then the AppealModule at the address the settlement was bound to.

    Two deployments (not one through the module's constructor) keep the module's initcode under
    EIP-3860's limit. The module's address is the deployer's CREATE address of the nonce after the
    settlement's; the module's constructor reverts (`SettlementNotBound`) if that prediction missed,
    e.g. if another transaction from the deployer's account landed in between.
    """
    me = client.account.address
    nonce = client.w3.eth.get_transaction_count(me, "pending")
    predicted = get_create_address(me, Nonce(nonce + 1))
    escrow = client.deploy("AppealSettlement", sessions, predicted, owner, params)
    if (
        escrow.address != get_create_address(me, nonce)
        or client.w3.eth.get_transaction_count(me, "pending") != nonce + 1
    ):
        raise ChainError(
            f"another transaction from {me} took a nonce while the AppealSettlement was deployed: the "
            f"AppealModule cannot be deployed at {predicted}, the address the settlement is bound to"
        )
    return escrow, client.deploy("AppealModule", sessions, escrow.address)


def deploy_protocol(
    client: ChainClient,
    *,
    owner: str | None = None,
    session_params: SessionParams = DEVNET_SESSION_PARAMS,
    staking_params: StakingParams = DEVNET_STAKING_PARAMS,
    randomness_delay: int = DEVNET_RANDOMNESS_DELAY,
    epoch_blocks: int = DEVNET_EPOCH_BLOCKS,
    supply: int = INITIAL_SUPPLY,
    canary_operators: Sequence[str] = (),
) -> dict[str, str]:
    """Deploy every contract of the protocol, wired together; the supply goes to `owner`.

    Defaults are devnet-friendly (phases of tens of blocks, epochs of a few blocks, small
    minimum stakes); pass other parameter sets for a long-lived network.
    """
    owner = owner or client.address
    me = client.address
    check_canary_window(session_params.canary_commit_blocks, epoch_blocks)
    try:
        check_stake_premise(session_params, staking_params)
    except ValueError as exc:
        raise ChainError(f"refusing to deploy: {exc}") from exc
    check_randomness_delay(randomness_delay, epoch_blocks)
    operators = checked_operators(canary_operators)
    token = client.deploy("TrustToken", owner, supply)
    treasury = client.deploy("Treasury", token.address, me)
    staking = client.deploy(
        "Staking", token.address, me, treasury.address, epoch_blocks, staking_params.as_abi()
    )
    sortition = str(client.call(staking.functions.sortition()))
    registry = client.deploy("AuditorRegistry", staking.address, me)
    randomness = client.deploy("LookaheadRandomness", randomness_delay)
    sessions = client.deploy(
        "AuditSessions",
        token.address,
        staking.address,
        randomness.address,
        treasury.address,
        me,
        session_params.as_abi(),
    )
    draw = client.deploy("DrawModule", sessions.address, staking.address)
    voting = client.deploy("VotingModule", sessions.address, draw.address)
    settlement = client.deploy(
        "SettlementModule", token.address, sessions.address, draw.address, voting.address, staking.address
    )
    client.transact(sessions.functions.setModules(draw.address, voting.address, settlement.address))
    client.transact(staking.functions.wire(registry.address, draw.address, settlement.address))
    escrow, appeals = deploy_appeals(client, sessions.address, me, appeal_params_abi(session_params))
    canaries = client.deploy("CanaryModule", sessions.address)
    client.transact(sessions.functions.setExtensions(appeals.address, canaries.address))
    client.transact(treasury.functions.setSpender(escrow.address, SPENDER_ALLOWANCE))
    client.transact(treasury.functions.setSpender(canaries.address, SPENDER_ALLOWANCE))
    for operator in operators:
        client.transact(canaries.functions.setCanaryOperator(operator, True))
    if owner.lower() != me.lower():
        for contract in (treasury, staking, registry, sessions, escrow):
            client.transact(contract.functions.transferOwnership(owner))
    return {
        "TrustToken": token.address,
        "Treasury": treasury.address,
        "Staking": staking.address,
        "SortitionTrees": sortition,
        "AuditorRegistry": registry.address,
        "LookaheadRandomness": randomness.address,
        "AuditSessions": sessions.address,
        "DrawModule": draw.address,
        "VotingModule": voting.address,
        "SettlementModule": settlement.address,
        "AppealModule": appeals.address,
        "AppealSettlement": escrow.address,
        "CanaryModule": canaries.address,
    }

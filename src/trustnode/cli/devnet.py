"""`trustnode devnet up|status|fund|down`: a local anvil chain with the protocol deployed."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import typer
from web3 import Web3

from trustnode.chain import devnet
from trustnode.chain.accounts import dev_account
from trustnode.chain.errors import ChainError, redact_url
from trustnode.chain.protocol import DEVNET_EPOCH_BLOCKS
from trustnode.chain.units import format_trust, parse_trust
from trustnode.cli.common import ROLES_HELP, console, errors_as_exit, fail, node_settings, print_json
from trustnode.cli.protocol_opts import (
    AppealBlocksOpt,
    AppealBudgetOpt,
    AppealRewardOpt,
    BetaOpt,
    BondMultOpt,
    CanaryCommitOpt,
    CanaryGammaOpt,
    CanaryRateOpt,
    CanaryRefundOpt,
    CanaryRevealOpt,
    CommitOpt,
    DrawOpt,
    KeyOpt,
    MaxRoundsOpt,
    RevealOpt,
    RewardOpt,
    SeatCapOpt,
    SeatsOpt,
    SlashOpt,
    TauOpt,
    asked_parameters,
)

devnet_app = typer.Typer(
    help=f"Run a local chain (anvil) with the contracts deployed. {ROLES_HELP}", no_args_is_help=True
)


def _print_params(params: Any) -> None:
    console.print(
        f"  seats per tier {','.join(map(str, params.seats_per_tier))} (computer,llm,human), "
        f"seat cap {params.seat_cap}, quorum {params.tau_bps / 100:g}%, "
        f"beta {params.beta_bps / 100:g}%, reward {format_trust(params.reward)}, "
        f"slash {format_trust(params.slash_amount)}, phases {params.draw_blocks}/{params.key_blocks}/"
        f"{params.commit_blocks}/{params.reveal_blocks} blocks (draw/keys/commit/reveal)"
    )
    appeals = (
        f"appeal windows of {params.appeal_blocks} blocks, {params.max_rounds} rounds, bond x"
        f"{params.appeal_bond_multiplier_bps / 10_000:g}, appellant reward {params.appeal_reward_bps / 100:g}%, "
        f"budget {format_trust(params.appeal_budget)} per session"
        if params.appeal_blocks and params.max_rounds
        else "appeals off"
    )
    console.print(
        f"  {appeals}; canaries {params.canary_rate_bps / 100:g}% of segments, committed within "
        f"{params.canary_commit_blocks} blocks of the opening, revealed within {params.canary_reveal_blocks} blocks"
    )


@devnet_app.command("up")
def up_cmd(
    port: int = typer.Option(None, "--port", help="RPC port on 127.0.0.1 (default: settings, 8545)."),
    auditors: int = typer.Option(
        None,
        "--auditors",
        metavar="N",
        help="Fund dev accounts 2..N+1 for auditors with ETH and tokens (default: settings, 8).",
    ),
    seats_per_tier: SeatsOpt = None,
    seat_cap: SeatCapOpt = None,
    tau_bps: TauOpt = None,
    beta_bps: BetaOpt = None,
    reward: RewardOpt = None,
    slash: SlashOpt = None,
    draw_blocks: DrawOpt = None,
    key_blocks: KeyOpt = None,
    commit_blocks: CommitOpt = None,
    reveal_blocks: RevealOpt = None,
    appeal_blocks: AppealBlocksOpt = None,
    max_rounds: MaxRoundsOpt = None,
    appeal_bond_multiplier_bps: BondMultOpt = None,
    appeal_reward_bps: AppealRewardOpt = None,
    appeal_budget: AppealBudgetOpt = None,
    canary_rate_bps: CanaryRateOpt = None,
    canary_reveal_blocks: CanaryRevealOpt = None,
    canary_gamma: CanaryGammaOpt = None,
    canary_refund_bps: CanaryRefundOpt = None,
    canary_commit_blocks: CanaryCommitOpt = None,
    epoch_blocks: int = typer.Option(
        None,
        "--epoch-blocks",
        min=1,
        metavar="BLOCKS",
        help=f"Blocks per staking snapshot epoch (default {DEVNET_EPOCH_BLOCKS}; fixed at deployment): new "
        "stake enters draws from the next epoch.",
    ),
    json_out: bool = typer.Option(False, "--json", help="Print the deployment as JSON."),
) -> None:
    """Start anvil, deploy the contracts, fund the role accounts and write the deployment file.

    Idempotent: on a running devnet it deploys nothing again, applies every protocol value you give (as an option, or in the config's protocol section) and tops the accounts up.

    Accounts: 0 deploys and owns the contracts, 1 is the provider's (the API node pays for sessions from it), 2..19 are auditors, one account each, 20 is the canary operator (TRUSTNODE_CHAIN__ACCOUNT_INDEX=20).
    """
    s = node_settings("deployer")
    protocol, asked, appeals = asked_parameters(s, locals())
    n = s.devnet.auditor_accounts if auditors is None else auditors
    with console.status("starting devnet ..."), errors_as_exit(ChainError, ValueError):
        report = devnet.ensure(
            s.deployment_file,
            protocol,
            asked,
            port=port or s.devnet.port,
            block_time_s=s.devnet.block_time_s,
            chain_id=s.devnet.chain_id,
            automine=s.devnet.automine,
            auditors=n,
            auditor_tokens=parse_trust(s.devnet.auditor_tokens),
            provider_tokens=parse_trust(s.devnet.provider_tokens),
            epoch_blocks=epoch_blocks,
            appeals=appeals,
        )
        owner = devnet.deployer(report.deployment)
        params = owner.params()
        if owner.appeal_settlement is not None:
            params = params.model_copy(update=owner.appeal_params_of(owner.session_count() + 1).model_dump())
        epochs = owner.epoch_blocks
    dep = report.deployment
    if json_out:
        print_json(
            {
                **dep.model_dump(),
                "rpc_url": redact_url(dep.rpc_url),
                "created": report.created,
                "params": params.model_dump(),
                "epoch_blocks": epochs,
                "params_changed": report.params_changed,
                "funded": [f.model_dump() for f in report.funded],
            }
        )
        return
    how = "started" if report.created else "already running"
    console.print(
        f"devnet {how}: chain {dep.chain_id} at {redact_url(dep.rpc_url)}; deployment in {s.deployment_file}"
    )
    for name, addr in dep.contracts.items():
        console.print(f"  {name:<22} {addr}")
    for field, (old, new) in report.params_changed.items():
        console.print(f"  [yellow]changed[/] {field}: {old} -> {new} (sessions opened from now on)")
    _print_params(params)
    console.print(f"  staking epochs of {epochs} blocks: new stake enters draws from the next epoch")
    console.print(
        f"  accounts: 0 deployer {dev_account(0).address}; 1 provider {dev_account(1).address} "
        f"({format_trust(parse_trust(s.devnet.provider_tokens))}); auditors 2..{n + 1} "
        f"({format_trust(parse_trust(s.devnet.auditor_tokens))} and gas ETH each); "
        f"{devnet.CANARY_OPERATOR_ACCOUNT} canary operator {dev_account(devnet.CANARY_OPERATOR_ACCOUNT).address}"
    )
    console.print(f"  canary operators: {', '.join(dep.canary_operators) or 'none'}")


@devnet_app.command("status")
def status_cmd(json_out: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Show the running devnet, or say clearly why there is none."""
    s = node_settings()
    with errors_as_exit(ChainError):
        dep = devnet.status(s.deployment_file)
        owner = devnet.deployer(dep)
        params = owner.params()
        epochs = owner.epoch_blocks
    if json_out:
        print_json(
            {
                "chain_id": dep.chain_id,
                "rpc_url": redact_url(dep.rpc_url),
                "contracts": dep.contracts,
                "params": params.model_dump(),
                "epoch_blocks": epochs,
            }
        )
    else:
        console.print(
            f"chain {dep.chain_id} at {redact_url(dep.rpc_url)} (deployed at block {dep.deploy_block})"
        )
        for name, addr in dep.contracts.items():
            console.print(f"  {name:<22} {addr}")
        _print_params(params)
        console.print(f"  staking epochs of {epochs} blocks: new stake enters draws from the next epoch")


@devnet_app.command("fund")
def fund_cmd(
    account: list[int] = typer.Option(
        [], "--account", metavar="INDEX", help="Dev account index to fund (repeatable)."
    ),
    address: list[str] = typer.Option([], "--address", help="Any address to fund (repeatable)."),
    amount: Decimal = typer.Option(
        Decimal(10_000), "--amount", metavar="TRUST", help="TRUST each ends up holding."
    ),
) -> None:
    """Give accounts tokens (from the deployer) and gas ETH on the devnet, e.g. a new auditor's."""
    s = node_settings()
    bad = [a for a in address if not Web3.is_address(a)]
    if bad:
        fail(f"not an address: {', '.join(bad)}")
    if not account and not address:
        fail("name what to fund: --account INDEX or --address 0x...")
    with errors_as_exit(ChainError, ValueError):
        targets = [dev_account(i).address for i in account] + list(address)
        dep = devnet.status(s.deployment_file)
        if dep.chain_id != s.devnet.chain_id:
            fail(
                f"chain {dep.chain_id} is not the devnet: fund accounts there with `trustnode deploy --fund`"
            )
        funded = devnet.fund(dep, targets, parse_trust(amount))
    for f in funded:
        eth = ", gas ETH topped up" if f.eth_set else ""
        console.print(
            f"{f.address}: +{format_trust(f.tokens_added)} (holds {format_trust(parse_trust(amount))}){eth}"
        )


@devnet_app.command("down")
def down_cmd() -> None:
    """Stop the devnet and remove its deployment file."""
    s = node_settings()
    stopped = devnet.down(s.deployment_file)
    console.print("devnet stopped" if stopped else "no devnet was running")


def register(app: typer.Typer) -> None:
    app.add_typer(devnet_app, name="devnet")

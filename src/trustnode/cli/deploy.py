"""`trustnode deploy`: put the protocol on an already running chain (the compose deployment).

`trustnode devnet up` starts its own anvil; a container deployment runs anvil in its own
container, so this command only connects, deploys (once: a deployment file whose contracts
are present on that chain is reused), writes the deployment file every node reads, applies
the protocol parameters asked for (or refuses, naming the owner), and optionally funds
accounts with tokens so providers can pay and auditors can stake. The canary operators of
`protocol.canary_operators` are authorized (on a new deployment, and added on an existing one by
the owner) and listed in the deployment file.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import typer
from web3 import Web3

from trustnode.chain.accounts import KeyConfigError, load_account
from trustnode.chain.client import ChainClient, wait_for_rpc
from trustnode.chain.deploy import checked_operators, deploy_protocol
from trustnode.chain.deployment import (
    Deployment,
    DeploymentError,
    apply_appeal_params,
    apply_canary_operators,
    apply_params,
    session_params,
)
from trustnode.chain.errors import ChainError, redact_url
from trustnode.chain.protocol import DEVNET_EPOCH_BLOCKS, Protocol
from trustnode.chain.units import format_trust, parse_trust
from trustnode.cli.common import console, errors_as_exit, fail, node_settings, print_json
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


def _existing(path: Path, client: ChainClient) -> Deployment | None:
    """The deployment in `path` if its contracts are on this chain (so a restart re-deploys nothing)."""
    if not path.is_file():
        return None
    try:
        dep = Deployment.load(path, check_alive=False)
    except DeploymentError:
        return None
    if dep.chain_id != client.chain_id:
        return None
    if all(client.w3.eth.get_code(Web3.to_checksum_address(a)) for a in dep.contracts.values()):
        return dep
    return None


def deploy(
    rpc_url: str = typer.Option(None, "--rpc-url", help="JSON-RPC URL (default: settings chain.rpc_url)."),
    fund: list[str] = typer.Option(
        [], "--fund", help="Address to top up with tokens (repeatable): providers and auditors."
    ),
    amount: Decimal = typer.Option(
        Decimal(100_000), "--amount", min=0, metavar="TRUST", help="TRUST each --fund address ends up with."
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
        DEVNET_EPOCH_BLOCKS,
        "--epoch-blocks",
        min=1,
        metavar="BLOCKS",
        help="Blocks per staking snapshot epoch (new deployments only): stake changes enter draws one "
        "epoch later, and a session's draw must end within two. A few hundred on a public chain.",
    ),
    wait: float = typer.Option(60.0, "--wait", min=0, help="Seconds to wait for the chain to answer."),
    json_out: bool = typer.Option(False, "--json", help="Print the deployment as JSON."),
) -> None:
    """Deploy the contracts to a running chain (once), write the deployment file, fund accounts.

    On an existing deployment every protocol value you give (as an option, or in the config's protocol section) is applied by the owner of the contracts, or the command fails saying who can change it.

    Devnet accounts (TRUSTNODE_CHAIN__ACCOUNT_INDEX): 0 deploys and owns the contracts, 1 is the provider's (the API node pays for sessions), 2 and up are auditors, one each.
    """
    s = node_settings("deployer")
    url = rpc_url or s.chain.rpc_url
    if not url:
        fail("give --rpc-url or set TRUSTNODE_CHAIN__RPC_URL")
    bad = [a for a in fund if not Web3.is_address(a)]
    if bad:
        fail(f"not an address: {', '.join(bad)}")
    protocol, asked, appeals = asked_parameters(s, locals())
    shown = redact_url(url)
    with errors_as_exit(ChainError, KeyConfigError, ValueError):
        chain_id = wait_for_rpc(url, timeout_s=wait)
        account = load_account(s.chain, devnet=chain_id == s.devnet.chain_id)
        client = ChainClient.connect(url, account, tx_timeout_s=s.chain.tx_timeout_s)
        dep = _existing(s.deployment_file, client)
        if dep is None:
            start = client.block_number()
            operators = checked_operators(protocol.canary_operators)
            contracts = deploy_protocol(
                client,
                owner=client.address,
                session_params=session_params(protocol).model_copy(update=appeals),
                epoch_blocks=epoch_blocks,
                canary_operators=operators,
            )
            dep = Deployment(
                chain_id=chain_id,
                rpc_url=url,
                contracts=contracts,
                deploy_block=start,
                deployer=client.address,
                canary_operators=operators,
            )
            dep.save(s.deployment_file)
            console.print(f"deployed to chain {chain_id} at {shown}; deployment in {s.deployment_file}")
        else:
            console.print(f"already deployed on chain {chain_id} (deployment in {s.deployment_file})")
            proto = Protocol(client, dep.contracts)
            changed = {**apply_params(proto, protocol, asked), **apply_appeal_params(proto, appeals)}
            for field, (old, new) in changed.items():
                console.print(f"  changed {field}: {old} -> {new} (sessions opened from now on)")
            added = apply_canary_operators(proto, protocol.canary_operators)
            if added:
                dep = dep.model_copy(update={"canary_operators": [*dep.canary_operators, *added]})
                dep.save(s.deployment_file)
                console.print(f"  authorized canary operators: {', '.join(added)}")
        proto = Protocol(client, dep.contracts)
        want = parse_trust(amount)
        for addr in fund:
            have = proto.balance_of(Web3.to_checksum_address(addr))
            if have < want:
                proto.transfer(Web3.to_checksum_address(addr), want - have)
                console.print(f"funded {addr} with {format_trust(want - have)}")
    if json_out:
        print_json({**dep.model_dump(), "rpc_url": shown})


def register(app: typer.Typer) -> None:
    app.command("deploy")(deploy)

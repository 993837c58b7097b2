"""Issue 15 on the chain port: canary commit/reveal, appeal quote and refusals, the panel's draw,
keys, votes and end, the recomputed verdict, settlement of every round and `appeal_status`; the
same scenario on the in-memory chain and (once the contracts ship) on the deployed contracts."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from eth_utils import to_checksum_address

from tests.chain.port_scenarios import (
    ISSUE15_PARAMS,
    TOKEN,
    appeal_scenario,
    canary_scenario,
    expected_appeal,
    expected_canary,
    expected_withheld,
    withheld_scenario,
)
from tests.chain.port_scenarios_unseatable import expected_unseatable, unseatable_scenario
from tests.chain.port_scenarios_withheld import expected_withheld_deeper, withheld_deeper_scenario
from tests.conftest import client_for, free_port
from trustnode.chain import devnet
from trustnode.chain.deployment import Deployment
from trustnode.chain.port import ChainPort
from trustnode.chain.port.evm import Web3Port
from trustnode.chain.port.memory_state import MemoryChain
from trustnode.chain.protocol import Protocol

OPERATOR = "0x" + "0c" * 20


def _memory(n_auditors: int) -> tuple[MemoryChain, ChainPort, ChainPort, dict[str, ChainPort]]:
    chain = MemoryChain(ISSUE15_PARAMS)
    chain.port(chain.owner).set_canary_operator(OPERATOR, True)
    provider, appellant = chain.port("0x" + "01" * 20), chain.port("0x" + "02" * 20)
    auditors = {}
    for i in range(n_auditors):
        port = chain.port(to_checksum_address((0x100 + i).to_bytes(20, "big")))
        auditors[port.address] = port
    for port in [provider, appellant, *auditors.values()]:
        chain.fund(port.address, 10_000 * TOKEN)
    return chain, provider, appellant, auditors


def test_an_appeal_overturns_a_wrong_outcome_on_the_memory_port() -> None:
    chain, provider, appellant, auditors = _memory(5)
    assert appeal_scenario(provider, appellant, auditors, chain.mine) == expected_appeal(ISSUE15_PARAMS)


def test_a_canary_catches_a_lazy_auditor_on_the_memory_port() -> None:
    chain, provider, _, auditors = _memory(5)
    operator, owner = chain.port(OPERATOR), chain.port(chain.owner)
    assert canary_scenario(provider, operator, owner, auditors, chain.mine) == expected_canary(ISSUE15_PARAMS)


def test_withheld_panel_keys_end_the_round_and_an_unrevealed_canary_blocks_nothing() -> None:
    chain, provider, appellant, auditors = _memory(8)
    operator = chain.port(OPERATOR)
    assert withheld_scenario(provider, appellant, operator, auditors, chain.mine) == expected_withheld(
        ISSUE15_PARAMS
    )


def test_keys_withheld_at_depth_two_keep_the_decided_fail_on_the_memory_port() -> None:
    chain, provider, appellant, auditors = _memory(12)
    got = withheld_deeper_scenario(provider, appellant, auditors, chain.mine)
    assert got == expected_withheld_deeper(ISSUE15_PARAMS)


def test_admission_counts_the_live_tier_on_the_memory_port() -> None:
    chain, provider, appellant, auditors = _memory(7)
    assert unseatable_scenario(provider, appellant, auditors, chain.mine) == expected_unseatable()


@pytest.fixture
def issue15_devnet(tmp_path: Path) -> Iterator[Deployment]:
    """A chain of the test's own running the issue-15 parameters (automine only: no block passes
    unless the test mines it, so windows and deadlines are reached exactly)."""
    dep_file = tmp_path / "devnet" / "deployment.json"
    dep = devnet.up(dep_file, port=free_port(), block_time_s=None, params=ISSUE15_PARAMS)
    try:
        yield dep
    finally:
        devnet.down(dep_file)


def _web3(
    dep: Deployment, n_auditors: int
) -> tuple[Callable[[int], None], ChainPort, ChainPort, dict[str, ChainPort]]:
    owner = Protocol(client_for(dep, 0), dep.contracts)
    ports = []
    for i in range(1, 3 + n_auditors):
        proto = Protocol(client_for(dep, i), dep.contracts)
        owner.transfer(proto.address, 10_000 * TOKEN)
        ports.append(Web3Port(proto, deploy_block=dep.deploy_block))
    provider, appellant, *rest = ports
    return owner.client.mine, provider, appellant, {p.address: p for p in rest}


def _web3_role(dep: Deployment, index: int) -> ChainPort:
    return Web3Port(Protocol(client_for(dep, index), dep.contracts), deploy_block=dep.deploy_block)


@pytest.mark.chain
def test_an_appeal_overturns_a_wrong_outcome_on_the_deployed_contracts(issue15_devnet: Deployment) -> None:
    mine, provider, appellant, auditors = _web3(issue15_devnet, 5)
    assert provider.params() == ISSUE15_PARAMS
    assert appeal_scenario(provider, appellant, auditors, mine) == expected_appeal(ISSUE15_PARAMS)


@pytest.mark.chain
def test_a_canary_catches_a_lazy_auditor_on_the_deployed_contracts(issue15_devnet: Deployment) -> None:
    mine, provider, _, auditors = _web3(issue15_devnet, 5)
    operator = _web3_role(issue15_devnet, devnet.CANARY_OPERATOR_ACCOUNT)
    assert issue15_devnet.canary_operators == [operator.address]
    owner = _web3_role(issue15_devnet, devnet.DEPLOYER_ACCOUNT)
    assert canary_scenario(provider, operator, owner, auditors, mine) == expected_canary(ISSUE15_PARAMS)


@pytest.mark.chain
def test_withheld_panel_keys_and_an_unrevealed_canary_on_the_deployed_contracts(
    issue15_devnet: Deployment,
) -> None:
    mine, provider, appellant, auditors = _web3(issue15_devnet, 8)
    operator = _web3_role(issue15_devnet, devnet.CANARY_OPERATOR_ACCOUNT)
    assert withheld_scenario(provider, appellant, operator, auditors, mine) == expected_withheld(
        ISSUE15_PARAMS
    )


@pytest.mark.chain
def test_keys_withheld_at_depth_two_keep_the_decided_fail_on_the_deployed_contracts(
    issue15_devnet: Deployment,
) -> None:
    mine, provider, appellant, auditors = _web3(issue15_devnet, 12)
    got = withheld_deeper_scenario(provider, appellant, auditors, mine)
    assert got == expected_withheld_deeper(ISSUE15_PARAMS)


@pytest.mark.chain
def test_admission_counts_the_live_tier_on_the_deployed_contracts(issue15_devnet: Deployment) -> None:
    mine, provider, appellant, auditors = _web3(issue15_devnet, 7)
    assert unseatable_scenario(provider, appellant, auditors, mine) == expected_unseatable()

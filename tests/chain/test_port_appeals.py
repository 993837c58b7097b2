"""Issue 15 on the chain port: canary commit/reveal, appeal quote and refusals, the panel's draw,
keys, votes and end, the recomputed verdict, settlement of every round and `appeal_status`; the
same scenario on the in-memory chain and (once the contracts ship) on the deployed contracts."""

from __future__ import annotations

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
from trustnode.chain.port import ChainPort
from trustnode.chain.port.memory_state import MemoryChain


def _memory(n_auditors: int) -> tuple[MemoryChain, ChainPort, ChainPort, dict[str, ChainPort]]:
    chain = MemoryChain(ISSUE15_PARAMS)
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
    assert canary_scenario(provider, auditors, chain.mine) == expected_canary(ISSUE15_PARAMS)


def test_withheld_panel_keys_end_the_round_and_an_unrevealed_canary_blocks_nothing() -> None:
    chain, provider, appellant, auditors = _memory(8)
    assert withheld_scenario(provider, appellant, auditors, chain.mine) == expected_withheld(ISSUE15_PARAMS)

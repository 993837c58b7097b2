"""Opens sent without waiting (`send_opens`, `open_receipt`): both ports give the same answers.

Three opens go out back to back; the middle one is refused at estimation (its fee is too low) and
never sent, the other two land with consecutive session ids read from their own receipts.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.chain.test_port import _when_ready
from tests.conftest import client_for
from trustnode.chain.deployment import Deployment
from trustnode.chain.errors import ContractRevertError
from trustnode.chain.port import ChainPort, OpenRequest
from trustnode.chain.port.evm import Web3Port
from trustnode.chain.port.memory_state import MemoryChain
from trustnode.chain.protocol import DEVNET_SESSION_PARAMS, Protocol
from trustnode.models.enums import Tier

TOKEN = 10**18
ROOTS = [bytes([i]) * 32 for i in (0xA1, 0xA2, 0xA3)]
UNKNOWN_TX = "0x" + "77" * 32


def batch(provider: ChainPort, auditor: ChainPort, mine: Callable[[int], None]) -> dict[str, object]:
    auditor.register(Tier.COMPUTER, 1, b"\x42" * 32)
    auditor.stake(200 * TOKEN)
    fee = provider.params().reward * 2
    requests = [
        OpenRequest(merkle_root=ROOTS[0], tiers=[0], weights=[1], fee=fee),
        OpenRequest(merkle_root=ROOTS[1], tiers=[0], weights=[1], fee=1),  # FeeTooLow
        OpenRequest(merkle_root=ROOTS[2], tiers=[0, 0], weights=[1, 1], fee=2 * fee),
    ]
    before = provider.session_count()
    sent = _when_ready(lambda: provider.send_opens(requests), mine)
    assert isinstance(sent[0], str) and isinstance(sent[2], str) and sent[0] != sent[2]
    assert isinstance(sent[1], ContractRevertError)
    first, last = provider.open_receipt(sent[0]), provider.open_receipt(sent[2])
    assert first is not None and last is not None
    assert provider.find_opened(ROOTS[0]) == first and provider.find_opened(ROOTS[2]) == last
    assert provider.find_opened(ROOTS[1]) is None
    assert provider.open_receipt(sent[0], wait=False) == first
    return {
        "refused": sent[1].name,
        "sessions": [first.session_id - before, last.session_id - before],
        "roots": [first.merkle_root, last.merkle_root],
        "stored_roots": [provider.session(o.session_id).merkle_root for o in (first, last)],
        "count": provider.session_count() - before,
        "unknown": provider.open_receipt(UNKNOWN_TX, wait=False),
    }


EXPECTED = {
    "refused": "FeeTooLow",
    "sessions": [1, 2],
    "roots": ["0x" + ROOTS[0].hex(), "0x" + ROOTS[2].hex()],
    "stored_roots": ["0x" + ROOTS[0].hex(), "0x" + ROOTS[2].hex()],
    "count": 2,
    "unknown": None,
}


def test_memory_port_sends_opens_without_waiting() -> None:
    chain = MemoryChain(DEVNET_SESSION_PARAMS)
    provider, auditor = chain.port("0x" + "01" * 20), chain.port("0x" + "02" * 20)
    chain.fund(provider.address, 10_000 * TOKEN)
    chain.fund(auditor.address, 10_000 * TOKEN)
    assert batch(provider, auditor, chain.mine) == EXPECTED


@pytest.mark.chain
def test_web3_port_sends_opens_without_waiting_with_the_same_answers(
    fresh_devnet: Deployment, tmp_path: Path
) -> None:
    owner = Protocol(client_for(fresh_devnet, 0), fresh_devnet.contracts)
    provider_p, auditor_p = (Protocol(client_for(fresh_devnet, i), fresh_devnet.contracts) for i in (1, 2))
    owner.transfer(provider_p.address, 10_000 * TOKEN)
    owner.transfer(auditor_p.address, 10_000 * TOKEN)
    provider = Web3Port(provider_p, deploy_block=fresh_devnet.deploy_block)
    auditor = Web3Port(auditor_p, deploy_block=fresh_devnet.deploy_block)
    nonce = provider_p.client.w3.eth.get_transaction_count(provider_p.address)  # type: ignore[arg-type]
    assert batch(provider, auditor, owner.client.mine) == EXPECTED
    sent = provider_p.client.w3.eth.get_transaction_count(provider_p.address) - nonce  # type: ignore[arg-type]
    assert sent == 3, "one approval and two opens: the refused open took no nonce"

"""ChainClient against a real anvil: deploy, call, transact, decode reverts, concurrent nonces."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import client_for
from trustnode.chain.accounts import dev_account, load_account, load_keystore, write_keystore
from trustnode.chain.client import ChainClient
from trustnode.chain.deployment import Deployment
from trustnode.chain.errors import ChainUnavailableError, ContractRevertError, decode_revert
from trustnode.config import ChainSettings

pytestmark = pytest.mark.chain


def test_deploy_from_python_and_call(fresh_devnet: Deployment) -> None:
    client = client_for(fresh_devnet, 0)
    token = client.deploy("TrustToken", client.address, 5 * 10**18)
    assert client.call(token.functions.totalSupply()) == 5 * 10**18
    assert client.call(token.functions.symbol()) == "TRUST"
    receipt = client.transact(token.functions.transfer(dev_account(1).address, 10**18))
    assert receipt["status"] == 1
    assert client.call(token.functions.balanceOf(dev_account(1).address)) == 10**18


def test_revert_is_decoded_by_custom_error_name(fresh_devnet: Deployment) -> None:
    poor = client_for(fresh_devnet, 3)
    token = poor.contract("TrustToken", fresh_devnet.address("TrustToken"))
    with pytest.raises(ContractRevertError) as info:
        poor.transact(token.functions.transfer(dev_account(1).address, 1))
    err = info.value
    assert err.name == "ERC20InsufficientBalance"
    assert err.args_by_name["sender"].lower() == poor.address.lower()
    assert err.args_by_name["balance"] == 0
    assert err.args_by_name["needed"] == 1
    assert "ERC20InsufficientBalance" in str(err)


def test_constructor_revert_is_decoded(fresh_devnet: Deployment) -> None:
    client = client_for(fresh_devnet, 0)
    with pytest.raises(ContractRevertError) as info:
        client.deploy("TrustToken", "0x" + "00" * 20, 1)
    assert info.value.name == "ZeroHolder"


def test_mined_failure_is_decoded_from_replay(fresh_devnet: Deployment) -> None:
    """With an explicit gas limit estimation is skipped; the mined revert is still named."""
    poor = client_for(fresh_devnet, 4)
    token = poor.contract("TrustToken", fresh_devnet.address("TrustToken"))
    with pytest.raises(ContractRevertError) as info:
        poor.transact(token.functions.transfer(dev_account(1).address, 7), gas=100_000)
    assert info.value.name == "ERC20InsufficientBalance"
    assert info.value.tx_hash is not None


def test_concurrent_senders_share_one_nonce_sequence(fresh_devnet: Deployment) -> None:
    client = client_for(fresh_devnet, 0)
    token = client.contract("TrustToken", fresh_devnet.address("TrustToken"))
    recipient = dev_account(5).address
    before = client.call(token.functions.balanceOf(recipient))

    def send(i: int) -> int:
        # A separate client object for the same key must draw from the same nonce manager.
        c = client_for(fresh_devnet, 0)
        return int(c.transact(token.functions.transfer(recipient, i + 1))["status"])

    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(pool.map(send, range(24)))
    assert statuses == [1] * 24
    assert client.call(token.functions.balanceOf(recipient)) - before == sum(range(1, 25))


def test_a_nonce_taken_by_another_process_is_retried(fresh_devnet: Deployment) -> None:
    """A daemon and the operator's CLI sign with one key from two processes: the other one may
    send with the nonce this client has just read. The send is retried on the next nonce instead
    of failing ("nonce too low" / "replacement transaction underpriced" in CI)."""
    client = client_for(fresh_devnet, 0)
    token = client.contract("TrustToken", fresh_devnet.address("TrustToken"))
    recipient = dev_account(6).address
    before = client.call(token.functions.balanceOf(recipient))
    sign = client.account.sign_transaction
    raced: list[int] = []

    def racing_sign(tx: dict) -> object:  # type: ignore[type-arg]
        if not raced:  # the other process: same key, same nonce, sent first
            raced.append(int(tx["nonce"]))
            other = token.functions.transfer(recipient, 5).build_transaction(
                {"from": client.address, "chainId": client.chain_id, "nonce": tx["nonce"], "gas": 100_000}
            )
            client.w3.eth.send_raw_transaction(sign(other).raw_transaction)
        return sign(tx)

    client.account.sign_transaction = racing_sign  # type: ignore[method-assign]
    try:
        receipt = client.transact(token.functions.transfer(recipient, 7))
    finally:
        client.account.sign_transaction = sign  # type: ignore[method-assign]
    assert receipt["status"] == 1 and raced
    tx = client.w3.eth.get_transaction(receipt["transactionHash"])
    assert tx["nonce"] > raced[0]
    assert client.call(token.functions.balanceOf(recipient)) - before == 12


def test_unknown_revert_data_keeps_selector() -> None:
    err = decode_revert("0xdeadbeef")
    assert err.name == "UnknownError"
    assert err.args_by_name["selector"] == "0xdeadbeef"
    panic = decode_revert("0x4e487b71" + "11".rjust(64, "0"))
    assert panic.name == "Panic" and panic.args_by_name["code"] == 0x11


def test_unreachable_chain_is_a_clear_error() -> None:
    from tests.conftest import free_port

    with pytest.raises(ChainUnavailableError, match="not reachable"):
        ChainClient.connect(f"http://127.0.0.1:{free_port()}", dev_account(0), timeout_s=1)


def test_keys_from_config_keystore_and_devnet(tmp_path: Path) -> None:
    acct = dev_account(7)
    ks = tmp_path / "key.json"
    write_keystore(acct, ks, "pw")
    assert load_keystore(ks, "pw").address == acct.address
    settings = ChainSettings(keystore_path=ks, keystore_password="pw")  # type: ignore[arg-type]
    assert load_account(settings, devnet=False).address == acct.address
    raw = ChainSettings(private_key=acct.key.hex())  # type: ignore[arg-type]
    assert load_account(raw, devnet=False).address == acct.address
    assert load_account(ChainSettings(account_index=2), devnet=True).address == dev_account(2).address
    with pytest.raises(ValueError, match="no signing key"):
        load_account(ChainSettings(), devnet=False)
    with pytest.raises(ValueError, match="cannot decrypt"):
        load_keystore(ks, "wrong")


# -- credentials never reach messages ----------------------------------------------------------

SECRET = "9aE3f0c1b2d4e5f60718293a4b5c6d7e"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (f"https://mainnet.infura.io/v3/{SECRET}", "https://mainnet.infura.io/v3/***"),
        (f"https://eth-mainnet.g.alchemy.com/v2/{SECRET}", "https://eth-mainnet.g.alchemy.com/v2/***"),
        (f"https://user:{SECRET}@rpc.example.org:8545/", "https://***@rpc.example.org:8545/"),
        (
            f"https://rpc.example.org/?apikey={SECRET}&chain=1",
            "https://rpc.example.org/?apikey=***&chain=***",
        ),
        ("http://127.0.0.1:8545", "http://127.0.0.1:8545"),
        ("http://anvil:8545/", "http://anvil:8545/"),
    ],
)
def test_redact_url(url: str, shown: str) -> None:
    from trustnode.chain.errors import redact_url

    assert redact_url(url) == shown


def test_redact_text_removes_secrets_quoted_without_the_host() -> None:
    from trustnode.chain.errors import redact

    url = f"https://mainnet.infura.io/v3/{SECRET}"
    text = (
        f"HTTPSConnectionPool(host='mainnet.infura.io'): Max retries exceeded with url: /v3/{SECRET} ({url})"
    )
    out = redact(text, url)
    assert SECRET not in out and "/v3/***" in out and "mainnet.infura.io" in out


def test_chain_errors_never_show_the_key() -> None:
    from tests.conftest import free_port

    url = f"http://user:pw-{SECRET}@127.0.0.1:{free_port()}/v3/{SECRET}"
    with pytest.raises(ChainUnavailableError) as info:
        ChainClient.connect(url, dev_account(0), timeout_s=1)
    assert SECRET not in str(info.value) and "127.0.0.1" in str(info.value)
    from trustnode.chain.client import wait_for_rpc

    with pytest.raises(ChainUnavailableError) as info2:
        wait_for_rpc(url, timeout_s=0.3)
    assert SECRET not in str(info2.value)


def test_calls_on_a_dead_chain_are_chain_errors_without_the_key(fresh_devnet: Deployment) -> None:
    """A client whose chain goes away: reads raise ChainUnavailableError, with the key redacted."""
    from web3 import Web3

    from tests.conftest import free_port

    client = client_for(fresh_devnet, 0)
    token = client.contract("TrustToken", fresh_devnet.address("TrustToken"))
    dead = f"http://127.0.0.1:{free_port()}/v2/{SECRET}"
    client.w3.provider = Web3.HTTPProvider(dead, request_kwargs={"timeout": 1})
    with pytest.raises(ChainUnavailableError) as info:
        client.call(token.functions.totalSupply())
    assert SECRET not in str(info.value) and client.rpc_url.endswith("/v2/***")
    with pytest.raises(ChainUnavailableError):
        client.block_number()

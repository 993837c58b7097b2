"""Deploy the protocol's contracts and return their addresses by name."""

from __future__ import annotations

from trustnode.chain.client import ChainClient

INITIAL_SUPPLY = 1_000_000_000 * 10**18


def deploy_protocol(client: ChainClient, *, owner: str | None = None) -> dict[str, str]:
    """Deploy every contract of the protocol, wired together; owner defaults to the deployer."""
    owner = owner or client.address
    token = client.deploy("TrustToken", owner, INITIAL_SUPPLY)
    return {"TrustToken": token.address}

"""A session on a fresh anvil devnet whose keys are published (its commit phase open), for the
page tests that need the chain's own deadlines, outcomes and bundle CID."""

from __future__ import annotations

import pytest
from eth_utils import keccak

from tests.conftest import client_for
from trustnode.chain.accounts import dev_account
from trustnode.chain.deployment import Deployment
from trustnode.chain.protocol import TOKEN, Protocol, SessionStatus, segment_leaf
from trustnode.storage.unixfs import compute_cid

HUMANS = (5, 6, 7)  # the devnet draws 3 human auditors per human segment
PROVIDER = 10
#: The (unpublished) bundle CID the session names.
MANIFEST_CID = compute_cid(b"session bundle that was never pinned")


def _root(cids: list[str]) -> bytes:
    a, b = (segment_leaf(i, cid, 2, 1) for i, cid in enumerate(cids))
    return keccak(min(a, b) + max(a, b))


@pytest.fixture
def session(fresh_devnet: Deployment) -> tuple[Protocol, int]:
    """A session of two human segments whose keys are published: its commit phase is open.
    Every human account of HUMANS holds both seats."""
    dep = fresh_devnet
    admin = Protocol(client_for(dep, 0), dep.contracts)
    for acct in HUMANS:
        me = admin.as_signer(client_for(dep, acct))
        admin.transfer(me.address, 250 * TOKEN)
        me.register(2, 1 << 2, keccak(text=f"x25519-{acct}"))
        me.stake(me.address, 200 * TOKEN)  # the devnet's minimum stake
    admin.mine_to_next_epoch()  # protocol v2: the draw samples the snapshot of the opening epoch
    provider = admin.as_signer(client_for(dep, PROVIDER))
    admin.transfer(provider.address, 1_000 * TOKEN)
    cids = [compute_cid(f"segment {i}".encode()) for i in range(2)]
    sid = provider.open_session(_root(cids), [2, 2], [1, 1], 100 * TOKEN)
    admin.client.mine(admin.blocks_until_drawable(sid))
    admin.draw_all(sid)
    provider.publish_keys(sid, MANIFEST_CID)
    assert admin.status(sid) == SessionStatus.KEYS_PUBLISHED
    assert admin.seats_of(sid, dev_account(HUMANS[0]).address) == [0, 1]
    return admin, sid

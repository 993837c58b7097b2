"""Outside review 28: the twin's E with proven leavers never exceeds the brute-force true count, and equals it
when every earlier-panel auditor of the segment is named (Review28ProvenLeaversNeverInflate).

Model: a tier of accounts (one leaf each), a segment's earlier panels of k_0, k_1, ... distinct auditors (the
draw never seats one twice on a segment), some accounts gone (no weight in the round's snapshot), the provider
never on a panel.  Truth = live accounts but the provider on no earlier panel.
Command: `PYTHONPATH=src /work/main/.venv/bin/pytest -q tests/consensus/test_review28_proven_leavers_exact.py`.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from trustnode.consensus.appeal_admission import earlier_seats, eligible_auditors, proven_leavers

ACCOUNTS = [f"0x{i:040x}" for i in range(1, 80)]
PROVIDER = ACCOUNTS[-1]


@given(
    k0=st.sampled_from([1, 3, 7]),
    depth=st.integers(min_value=1, max_value=3),
    gone_mask=st.integers(min_value=0, max_value=(1 << 79) - 1),
    name_mask=st.integers(min_value=0, max_value=(1 << 79) - 1),
    provider_live=st.booleans(),
)
def test_proven_leavers_never_exceed_truth(
    k0: int, depth: int, gone_mask: int, name_mask: int, provider_live: bool
) -> None:
    earlier = set(ACCOUNTS[: earlier_seats(k0, depth)])  # distinct, never the provider
    gone = {a for i, a in enumerate(ACCOUNTS) if (gone_mask >> i) & 1}
    if provider_live:
        gone.discard(PROVIDER)
    live = [a for a in ACCOUNTS if a not in gone]
    members = sum(1 for a in live if a != PROVIDER)
    truth = sum(1 for a in live if a != PROVIDER and a not in earlier)

    def is_live(a: str) -> bool:
        return a not in gone

    def sat(a: str, _seg: int) -> bool:
        return a in earlier

    named = sorted({a for i, a in enumerate(ACCOUNTS) if (name_mask >> i) & 1}, key=lambda a: int(a, 16))
    e = eligible_auditors(members, k0, depth, proven_leavers(named, 0, live=is_live, sat_before=sat))
    assert e <= truth
    everyone = sorted(earlier, key=lambda a: int(a, 16))
    assert (
        eligible_auditors(members, k0, depth, proven_leavers(everyone, 0, live=is_live, sat_before=sat))
        == truth
    )

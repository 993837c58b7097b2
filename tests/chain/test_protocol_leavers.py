"""Outside review 22: the protocol layer sends proven leavers strictly ascending as 160-bit numbers, checksummed
(AppealAdmission refuses LeaversNotAscending otherwise).
Command: `PYTHONPATH=src /work/main/.venv/bin/pytest -q tests/chain/test_protocol_leavers.py`.
"""

from __future__ import annotations

from trustnode.chain.protocol.appeals import _sorted_addresses


def test_leavers_sorted_deduplicated_checksummed() -> None:
    lo, hi = "0x" + "00" * 19 + "01", "0x" + "00" * 19 + "ff"
    assert _sorted_addresses([hi, lo, hi.upper().replace("0X", "0x")]) == [lo, hi]
    assert _sorted_addresses([]) == []

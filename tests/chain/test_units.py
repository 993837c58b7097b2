"""TRUST amounts shown to people: decimal, at most six places, never a 21-digit integer."""

from __future__ import annotations

from decimal import Decimal

import pytest

from trustnode.chain.units import TOKEN, format_trust, parse_trust


@pytest.mark.parametrize(
    ("wei", "shown"),
    [
        (0, "0 TRUST"),
        (TOKEN, "1 TRUST"),
        (1000 * TOKEN, "1,000 TRUST"),
        (15 * TOKEN // 10, "1.5 TRUST"),
        (123456789012345678, "0.123456 TRUST"),
        (1, "<0.000001 TRUST"),
        (-6 * TOKEN, "-6 TRUST"),
    ],
)
def test_format(wei: int, shown: str) -> None:
    assert format_trust(wei) == shown


def test_parse_round_trips_and_refuses_nonsense() -> None:
    assert parse_trust("1.5") == 15 * TOKEN // 10
    assert parse_trust(Decimal("10000")) == 10_000 * TOKEN
    assert parse_trust("1_000") == 1000 * TOKEN
    for bad in ("abc", "-1", "NaN", "Infinity", "0.0000000000000000001"):
        with pytest.raises(ValueError):
            parse_trust(bad)
    assert format_trust(parse_trust("2.25"), unit=False) == "2.25"

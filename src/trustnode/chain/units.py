"""TRUST amounts: token wei on chain, decimal TRUST for people (one place, so every output agrees).

The token has 18 decimals; printing wei (21-digit integers) or every decimal helps no one, so
amounts are shown with at most `PLACES` decimals and no trailing zeros.
"""

from __future__ import annotations

from decimal import ROUND_DOWN, Decimal, InvalidOperation

DECIMALS = 18
TOKEN = 10**DECIMALS
PLACES = 6
SYMBOL = "TRUST"


def to_trust(wei: int) -> Decimal:
    """Exact TRUST value of `wei`."""
    return Decimal(wei) / Decimal(TOKEN)


def format_trust(wei: int, *, places: int = PLACES, unit: bool = True) -> str:
    """`wei` as decimal TRUST, truncated to `places` decimals: 1500000000000000000 -> "1.5 TRUST".

    A non-zero amount too small to show says so ("<0.000001 TRUST") rather than printing 0.
    """
    sign = "-" if wei < 0 else ""
    value = to_trust(abs(wei)).quantize(Decimal(1).scaleb(-places), rounding=ROUND_DOWN)
    if value == 0 and wei != 0:
        text = f"<{Decimal(1).scaleb(-places):f}"
    else:
        text = f"{value:,f}"
        if "." in text:
            text = text.rstrip("0").rstrip(".")
    return f"{sign}{text} {SYMBOL}" if unit else f"{sign}{text}"


def parse_trust(text: str | int | Decimal) -> int:
    """Decimal TRUST ("1.5", 1000) to wei; ValueError for anything else or finer than 1 wei."""
    try:
        value = Decimal(str(text).strip().replace("_", ""))
    except InvalidOperation as exc:
        raise ValueError(f"not an amount of TRUST: {text!r}") from exc
    if not value.is_finite() or value < 0:
        raise ValueError(f"an amount of TRUST must be a non-negative number, got {text!r}")
    wei = value * TOKEN
    if wei != wei.to_integral_value():
        raise ValueError(f"{text!r} TRUST has more than {DECIMALS} decimals")
    return int(wei)

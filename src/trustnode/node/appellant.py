"""Appealing a session's segments (issue 15): quote first, then send, every refusal by its name.

Anyone may appeal (the provider, a user, an auditor). The quote (`ChainPort.appeal_quote`) says
which round the appeal would open, the depth of the named segments, each one's panel seats and
bond, or the named refusal the contract would hit; nothing is sent unless it is admissible and
its bond is within the appellant's limit.
"""

from __future__ import annotations

from collections.abc import Sequence

from trustnode.chain.errors import ContractRevertError
from trustnode.chain.port import ChainPort, reverts
from trustnode.chain.port.revert_meanings import MEANINGS
from trustnode.chain.port.types_appeals import AppealOpened, AppealQuote
from trustnode.chain.units import format_trust

BOND_ABOVE_LIMIT = "BondAboveLimit"
REFUSALS_NOT_CHARGED = "RefusalsNotCharged"
NO_SUCH_SEGMENT = "NoSuchSegment"  # the node's own refusal: an index past the session's last segment
TERMS_CHANGED = "TermsChanged"  # the node's own refusal: the fresh quote differs from the one shown


class AppealRefused(Exception):
    """The appeal would be (or was) refused: `name` is the contract's error, `reason` in words."""

    def __init__(self, name: str, reason: str, quote: AppealQuote | None = None) -> None:
        super().__init__(refusal_text(name, reason))
        self.name, self.reason, self.quote = name, reason, quote


def refusal_text(name: str, reason: str | None) -> str:
    """One line naming the refusal once, with its arguments and the contract error's meaning.

    The in-memory chain says "NotEnoughEligibleAuditors: segment 1 ...", the EVM port "reverted with
    AppealWindowClosed(windowEnd=759): <meaning>"; the operator met "AppealWindowClosed: reverted
    with AppealWindowClosed(...)" printed twice (in the quote and in the error)."""
    text = reason or name
    if name not in text:
        text = f"{name}: {text}"
    meaning = MEANINGS.get(name)
    if meaning and meaning not in text:
        text = f"{text}: {meaning}"
    return text


def parse_segments(text: str) -> list[int]:
    """'2,5' -> [2, 5] (ascending, distinct); ValueError naming what is wrong."""
    try:
        out = sorted({int(x) for x in text.replace(" ", "").split(",") if x != ""})
    except ValueError:
        raise ValueError(f"--segments takes segment indices separated by commas, not {text!r}") from None
    if not out or out[0] < 0:
        raise ValueError("--segments needs at least one segment index (0 or more)")
    return out


def refusal_warning(q: AppealQuote) -> str | None:
    """What the appellant risks when an admitted round's lock refusals are not charged, or None."""
    if not q.admissible or q.refusals_charged:
        return None
    k = q.seats[0] if q.seats else "k"
    return (
        f"k <= eligible < 2k (k = {k}, eligible = {q.eligible}): if drawn auditors refuse their locks the round "
        "ends UNFILLABLE, the PASS stands and R per drawn seat is kept"
    )


def quote(port: ChainPort, session_id: int, segments: Sequence[int]) -> AppealQuote:
    """The chain's quote, with `appealable_until` narrowed to the named segments' windows.

    The port reports the session's latest window end, which a round on one segment extends while
    the others' windows close as before: quoting segment 1 "appealable until block 876" (segment 0's
    window after its round) beside a refusal AppealWindowClosed(windowEnd=759) misled the appellant.
    """
    q = port.appeal_quote(session_id, sorted(segments))
    ends = port.appeal_status(session_id).window_ends
    missing = [i for i in q.segments if ends and i >= len(ends)]
    if missing:  # the contract says AppealWindowClosed(segment=42, windowEnd=670): say what is wrong
        reason = (
            f"session {session_id} has {len(ends)} segments (0..{len(ends) - 1}); there is no segment "
            f"{', '.join(map(str, missing))}"
        )
        update = {"seats": [], "bonds": [], "bond": 0, "refusal": NO_SUCH_SEGMENT, "reason": reason}
        return q.model_copy(update=update)
    if q.appealable_until is None:
        return q
    named = [ends[i] for i in q.segments if 0 <= i < len(ends)]
    if not named:
        return q
    until = min(named)
    return q.model_copy(update={"appealable_until": until if until > 0 else None})


def appeal(
    port: ChainPort,
    session_id: int,
    segments: Sequence[int],
    max_bond: int | None = None,
    shown: AppealQuote | None = None,
) -> tuple[AppealQuote, AppealOpened]:
    """Quote, check, send. `max_bond` None: exactly the quoted bond (the protocol takes no more).
    The quote's `refusal_warning` is the caller's to show: the contract refuses every round its
    snapshot's live members cannot seat (NotEnoughEligibleAuditors, PanelTooLarge), so the node
    refuses nothing more.  `shown`: the quote the caller showed the appellant (outside review 20):
    if the fresh quote's terms (seats, bond, refusals_charged) differ from it, nothing is sent and
    TermsChanged is raised with the fresh quote, so the appellant is never held to terms not shown.
    The appeal is sent with the shown quote's `refusals_charged` as its `requireCharged` (outside
    review 17): a quote of charged refusals is never mined as an uncharged round (the live count of a
    new epoch); that case raises RefusalsNotCharged with a fresh quote, for the caller to show and ask
    again."""
    q = quote(port, session_id, segments)
    if q.refusal is not None:
        raise AppealRefused(q.refusal, q.reason or q.refusal, q)
    if shown is not None and _terms(shown) != _terms(q):
        raise AppealRefused(
            TERMS_CHANGED,
            f"{TERMS_CHANGED}: the terms changed since the quote shown (seats {shown.seats} -> {q.seats}, bond "
            f"{format_trust(shown.bond)} -> {format_trust(q.bond)}, lock refusals charged "
            f"{shown.refusals_charged} -> {q.refusals_charged}). Nothing was sent: appeal again if you accept "
            "these terms",
            q,
        )
    limit = q.bond if max_bond is None else max_bond
    if q.bond > limit:
        raise AppealRefused(
            BOND_ABOVE_LIMIT,
            f"the bond is {format_trust(q.bond)}, above your limit of {format_trust(limit)}",
            q,
        )
    charged = q.refusals_charged if shown is None else shown.refusals_charged
    try:
        opened = port.appeal(session_id, q.segments, limit, require_charged=charged)
    except ContractRevertError as exc:  # the chain moved between the quote and the transaction
        if exc.name == REFUSALS_NOT_CHARGED:
            raise AppealRefused(exc.name, _terms_changed(exc), quote(port, session_id, segments)) from exc
        raise AppealRefused(exc.name, reverts.explain(exc), q) from exc
    return q, opened


def _terms(q: AppealQuote) -> tuple[list[int], int, bool]:
    """What the appellant agrees to: the panels' seats, the bond, whether lock refusals are charged."""
    return list(q.seats), q.bond, q.refusals_charged


def _terms_changed(exc: ContractRevertError) -> str:
    """RefusalsNotCharged in words: what changed, that no bond was taken, what to do."""
    args = exc.args_by_name
    eligible, needed = args.get("eligible", "?"), args.get("needed", "?")
    return (
        f"{REFUSALS_NOT_CHARGED}: the quote said lock refusals would be charged, but in the block the appeal "
        f"was mined only {eligible} auditors can sit on each panel (fewer than 2k = {needed}; the tier's live "
        "count changed with the epoch), so a failed draw would end UNFILLABLE (the PASS stands, R per drawn "
        "seat kept). The appeal reverted, so no bond was taken (its gas, and the token approval sent before "
        "it, are spent): quote again and appeal again if you accept these terms"
    )

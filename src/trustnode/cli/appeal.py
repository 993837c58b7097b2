"""`trustnode appeal SESSION --segments 2,5 [--bond X]`: appeal segments' outcomes to a larger panel.

Prints the quote (the round it opens, the segments' depth, each one's panel seats and bond) and
sends the appeal, warning first when the round's lock refusals would not be charged (k <= eligible
< 2k: a failed draw then ends UNFILLABLE and the PASS stands). An appeal quoted charged is sent
requiring it (outside review 17): if the epoch's live count changed before it was mined it is
refused RefusalsNotCharged, no bond taken, and the new quote is printed (run again to accept). The
appeal is sent on the terms printed (outside review 20): if the node's fresh quote differs from them
(seats, bond, charged refusals) nothing is sent (TermsChanged) and the new quote is printed; a refusal (window closed, no rounds left, not enough eligible auditors, bond
above the limit, ...) is printed with its contract name and reason and exits 1. Anyone may
appeal; it signs with the node's account (on the devnet the provider's, account 1, unless
TRUSTNODE_CHAIN__ACCOUNT_INDEX says otherwise).
"""

from __future__ import annotations

from decimal import Decimal

import typer

from trustnode.chain.errors import ChainError
from trustnode.chain.units import format_trust, parse_trust
from trustnode.cli.common import console, errors_as_exit, fail, node_settings, print_json


def appeal_cmd(
    session: int = typer.Argument(..., metavar="SESSION", help="The session id."),
    segments: str = typer.Option(..., "--segments", metavar="2,5", help="Segment indices, one depth."),
    bond: Decimal = typer.Option(
        None, "--bond", metavar="TRUST", help="The most you agree to pay (default: the quoted bond)."
    ),
    quote_only: bool = typer.Option(False, "--quote", help="Print the quote and send nothing."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Appeal segments of a finalized session to a larger panel (2k+1 seats of their tier), paying a bond."""
    from trustnode.node.appellant import (
        REFUSALS_NOT_CHARGED,
        TERMS_CHANGED,
        AppealRefused,
        appeal,
        parse_segments,
        quote,
        refusal_text,
        refusal_warning,
    )
    from trustnode.node.context import NodeContext

    with errors_as_exit(ValueError):
        wanted = parse_segments(segments)
        limit = None if bond is None else parse_trust(bond)
    ctx = NodeContext(node_settings("provider"))
    with errors_as_exit(ChainError):
        port = ctx.port()
        q = quote(port, session, wanted)
        if not json_out:
            _print_quote(q)
            warning = refusal_warning(q)
            if warning is not None:
                console.print(f"  [yellow]warning:[/] {warning}", highlight=False)
        if q.refusal is not None:  # the pre-check: nothing sent; the reason once, on stderr
            if json_out:
                print_json({"quote": q.model_dump(mode="json"), "refusal": q.refusal, "reason": q.reason})
            fail(f"appeal refused: {refusal_text(q.refusal, q.reason)}")
        if quote_only:
            if json_out:
                print_json(q.model_dump(mode="json"))
            return
        try:
            q, opened = appeal(port, session, wanted, limit, shown=q)
        except AppealRefused as exc:
            q = exc.quote or q  # RefusalsNotCharged, TermsChanged: the fresh quote, the terms now on offer
            if json_out:
                print_json({"quote": q.model_dump(mode="json"), "refusal": exc.name, "reason": exc.reason})
            elif exc.name in (REFUSALS_NOT_CHARGED, TERMS_CHANGED):
                when = (
                    "before the appeal was mined"
                    if exc.name == REFUSALS_NOT_CHARGED
                    else "since the quote above"
                )
                console.print(f"[yellow]the terms changed {when}; the quote now:[/]")
                _print_quote(q)
                if q.refusal is not None:
                    console.print(f"  [red]refused: {refusal_text(q.refusal, q.reason)}[/]", highlight=False)
                warning = refusal_warning(q)
                if warning is not None:
                    console.print(f"  [yellow]warning:[/] {warning}", highlight=False)
            fail(f"appeal refused: {exc}")
    if json_out:
        print_json({"quote": q.model_dump(mode="json"), "opened": opened.model_dump(mode="json")})
        return
    console.print(
        f"[green]appeal round {opened.round} opened[/] by {opened.appellant}: bond "
        f"{format_trust(opened.bond)} held (tx {opened.tx.tx_hash}); its panel is drawn next",
        highlight=False,
    )


def _print_quote(q: object) -> None:
    from trustnode.chain.port.types_appeals import AppealQuote

    assert isinstance(q, AppealQuote)
    named = ", ".join(map(str, q.segments))
    if q.refusal is not None:  # no round opens, no panel, no bond: the caller prints the reason
        console.print(f"session {q.session_id}: an appeal of segments {named} is refused", highlight=False)
        return
    console.print(
        f"session {q.session_id}: appeal of segments {named} would open round "
        f"{q.round}, their panel of depth {q.depth}",
        highlight=False,
    )
    for i, seats, b in zip(q.segments, q.seats, q.bonds, strict=False):
        console.print(f"  segment {i}: a panel of {seats} seats, bond {format_trust(b)}", highlight=False)
    window = f"; appealable until block {q.appealable_until}" if q.appealable_until is not None else ""
    console.print(f"  total bond {format_trust(q.bond)}{window}", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("appeal")(appeal_cmd)

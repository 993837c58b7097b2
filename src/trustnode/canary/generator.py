"""Gold canary segments shaped like the session's own segments (issue 15).

The provider node asks for `canaries_for_real(n, rate)` canaries; each copies the tier and the
length of a real segment of the same session drawn at random, so tiers and sizes follow the
session's own distribution.  The text is written here from templates and a seeded RNG: a
computer-tier canary is a calculation, an LLM-tier canary a verbal inference, a human-tier one
a hedged clinical inference.  A FAIL canary carries exactly one defect (`Mutation`); a PASS
canary is the same style unbroken.  Each canary is routed by the node's own router
(`hdag.rules.classify`) and kept only if it lands in its target tier, so it is seated by
auditors of that tier like the real segment it imitates.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from trustnode.canary.templates import (
    NUMERIC_MUTATIONS,
    VERBAL_MUTATIONS,
    Mutation,
    mutate_numeric,
    numeric_steps,
    short_verbal,
    verbal_sentences,
)
from trustnode.hdag.rules import classify
from trustnode.models.enums import Tier, Verdict

#: Capital letters the checker binds as names (no I, E, O, S, N, Q: constants, functions, lookalikes).
NAMES = "ABCDFGHJKLMPRTUVWXYZ"
MAX_ATTEMPTS = 20
MAX_BLOCKS = 6


class SegmentShape(BaseModel):
    """What an auditor sees of a segment before reading it: its tier and its length."""

    model_config = ConfigDict(frozen=True)

    tier: Tier
    chars: int = Field(ge=1)


class Canary(BaseModel):
    """A generated canary: its text, its truth, and how it was made (never shown to auditors)."""

    model_config = ConfigDict(frozen=True)

    text: str
    verdict: Verdict
    mutation: Mutation
    tier: Tier
    target_chars: int
    source: int | None = Field(
        default=None, description="Position in `make_canaries`' `real` list of the segment it imitates."
    )


def _numeric_text(rng: random.Random, target: int, mutation: Mutation) -> str:
    """Correct calculation blocks until about `target` characters; one block carries the defect."""
    letters = list(NAMES)
    rng.shuffle(letters)
    blocks: list[tuple[str, list]] = []  # type: ignore[type-arg]
    used: set[str] = set()
    length = 0
    while len(blocks) < MAX_BLOCKS and (not blocks or length < 0.8 * target) and len(letters) >= 3:
        names, letters = letters[:3], letters[3:]
        left = target - length
        n_steps = 1 if left < 110 else 2 if left < 190 else rng.randint(2, 3)
        for _ in range(MAX_ATTEMPTS):  # each block its own scenario: a repeated lead reads as generated
            setting, steps = numeric_steps(rng, names, n_steps)
            if setting not in used:
                break
        used.add(setting)
        if left < 150:
            setting = ""  # short segments are bare calculation steps, as in real traces
        blocks.append((setting, steps))
        length += len(setting) + sum(len(s.render()) + 1 for s in steps)
    broken = rng.randrange(len(blocks))
    parts = []
    for i, (setting, steps) in enumerate(blocks):
        sentences = mutate_numeric(rng, steps, mutation if i == broken else Mutation.NONE)
        parts.append(" ".join([setting, *sentences]) if setting else " ".join(sentences))
    return " ".join(parts)


def _verbal_text(rng: random.Random, target: int, mutation: Mutation, clinical: bool) -> str:
    if target < 130:
        return short_verbal(rng, mutation, clinical)
    blocks: list[list[str]] = []
    while len(blocks) < MAX_BLOCKS and (not blocks or sum(len(" ".join(b)) for b in blocks) < 0.8 * target):
        blocks.append(verbal_sentences(rng, Mutation.NONE, clinical))
    broken = rng.randrange(len(blocks))
    blocks[broken] = verbal_sentences(rng, mutation, clinical)
    return " ".join(" ".join(b) for b in blocks)


def routed_tier(text: str, high_stakes: bool) -> Tier:
    """The tier the node's router gives this text (as it does for every real segment)."""
    return classify(text, high_stakes=high_stakes).primary.tier


def make_canary(
    shape: SegmentShape, verdict: Verdict, rng: random.Random, *, high_stakes: bool = False
) -> Canary:
    """One canary of `shape`'s tier and about its length; raises if the router never agrees on the tier."""
    for _ in range(MAX_ATTEMPTS):
        if verdict is Verdict.PASS:
            mutation = Mutation.NONE
        else:
            mutation = rng.choice(NUMERIC_MUTATIONS if shape.tier is Tier.COMPUTER else VERBAL_MUTATIONS)
        if shape.tier is Tier.COMPUTER:
            text = _numeric_text(rng, shape.chars, mutation)
        else:
            text = _verbal_text(rng, shape.chars, mutation, clinical=shape.tier is Tier.HUMAN)
        if routed_tier(text, high_stakes or shape.tier is Tier.HUMAN) is shape.tier:
            return Canary(
                text=text, verdict=verdict, mutation=mutation, tier=shape.tier, target_chars=shape.chars
            )
    raise ValueError(f"no canary text routes to tier {shape.tier.name} after {MAX_ATTEMPTS} attempts")


def make_canaries(
    real: Sequence[SegmentShape],
    count: int,
    rng: random.Random,
    *,
    fail_share: float = 0.5,
    high_stakes: bool = False,
) -> list[Canary]:
    """`count` canaries whose tiers and lengths are drawn from the session's real segments.

    Verdicts are stratified by tier: of a tier's n canaries, ceil(n * fail_share) are FAIL, at random
    places. So every tier that gets a canary gets a FAIL one (when fail_share > 0), and an auditor
    who approves everything cannot sit out a session by luck; which seats are canaries stays hidden.
    """
    if count < 0 or not 0 <= fail_share <= 1:
        raise ValueError("count must be >= 0 and fail_share in [0, 1]")
    if count and not real:
        raise ValueError("canaries imitate real segments: the session has none")
    shapes = list(real)
    sources = [rng.randrange(len(shapes)) for _ in range(count)]
    verdicts: list[Verdict] = [Verdict.PASS] * count
    for tier in sorted({shapes[i].tier for i in sources}, key=lambda t: t.value):
        mine = [k for k, i in enumerate(sources) if shapes[i].tier is tier]
        for k in rng.sample(mine, math.ceil(len(mine) * fail_share)):
            verdicts[k] = Verdict.FAIL
    out = []
    for source, verdict in zip(sources, verdicts, strict=True):
        made = make_canary(shapes[source], verdict, rng, high_stakes=high_stakes)
        out.append(made.model_copy(update={"source": source}))
    return out


__all__ = ["NAMES", "Canary", "SegmentShape", "make_canaries", "make_canary", "routed_tier"]

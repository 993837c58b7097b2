"""Enumerations shared across the HDAG, the auditors and the chain.

The on-chain tier numbering (Computer=0, LLM=1, Human=2) is part of the contract ABI,
so `Tier` values must never be renumbered.
"""

from __future__ import annotations

from enum import IntEnum, StrEnum


class Level(StrEnum):
    """Abstraction level of an HDAG node, from the most abstract down."""

    GOAL = "GOAL"
    STRATEGY = "STRATEGY"
    TACTIC = "TACTIC"
    STEP = "STEP"
    OPERATION = "OPERATION"

    @property
    def depth(self) -> int:
        return list(Level).index(self)

    @property
    def id_prefix(self) -> str:
        return {"GOAL": "G", "STRATEGY": "S", "TACTIC": "T", "STEP": "ST", "OPERATION": "O"}[self.value]


class AuditorType(StrEnum):
    """Who audits a segment (SPEC 2, step 4)."""

    T_AUTO = "T_Auto"
    T_LLM = "T_LLM"
    T_HUMAN = "T_Human"

    @property
    def tier(self) -> Tier:
        return {"T_Auto": Tier.COMPUTER, "T_LLM": Tier.LLM, "T_Human": Tier.HUMAN}[self.value]


class Tier(IntEnum):
    """On-chain auditor tier; the integer is what the contracts store."""

    COMPUTER = 0
    LLM = 1
    HUMAN = 2

    @property
    def auditor_type(self) -> AuditorType:
        return [AuditorType.T_AUTO, AuditorType.T_LLM, AuditorType.T_HUMAN][int(self)]

    @classmethod
    def parse(cls, name: str) -> Tier:
        """Accept 'computer' / 'llm' / 'human' (any case) or the integer."""
        key = name.strip().upper()
        if key.isdigit():
            return cls(int(key))
        return cls[key]


class Relationship(StrEnum):
    DECOMPOSES_TO = "decomposes_to"
    DEPENDS_ON = "depends_on"
    ENABLES = "enables"
    VALIDATES = "validates"
    EXEMPLIFIES = "exemplifies"
    REFINES = "refines"
    CONTRADICTS = "contradicts"


class Strength(StrEnum):
    STRONG = "strong"
    MEDIUM = "medium"
    WEAK = "weak"

    @property
    def rank(self) -> int:
        return {"strong": 3, "medium": 2, "weak": 1}[self.value]


class Complexity(StrEnum):
    LOW = "Low"
    MEDIUM = "Medium"
    HIGH = "High"


class Verdict(StrEnum):
    """An auditor's vote on one segment."""

    PASS = "PASS"
    FAIL = "FAIL"


class SegmentOutcome(IntEnum):
    """On-chain segment verdict (contract enum order)."""

    NONE = 0
    PASS = 1
    FAIL = 2
    INCONCLUSIVE = 3

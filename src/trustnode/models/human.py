"""Human seats: what a person is shown to audit a segment, and what they decide (SPEC 6).

The auditor daemon writes a `HumanSeat` for every human seat it is drawn for; the audit web
page reads it, shows the four parts of the form (prompt context, dependencies, current
reasoning, implications) with the four criteria, and records a `HumanDecision`; the daemon
then commits that verdict on-chain. Both sides live in different processes, so these models
are the contract between them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from trustnode.models.audit import AuditResult, AuditTask, ContextSegment, Evidence
from trustnode.models.enums import Level, Verdict


class Criterion(BaseModel):
    """One question of the human audit form."""

    model_config = ConfigDict(frozen=True)

    key: str = Field(description="Stable identifier used in `HumanDecision.criteria`.")
    label: str
    question: str


#: The four criteria of the human audit form (TRUST appendix C.2), in display order.
CRITERIA: tuple[Criterion, ...] = (
    Criterion(
        key="logical_consistency",
        label="Logical consistency",
        question="Does this step follow from the steps it depends on, without gaps or contradictions?",
    ),
    Criterion(
        key="mathematical_accuracy",
        label="Mathematical accuracy",
        question="Is every calculation and quantitative statement in this step correct?",
    ),
    Criterion(
        key="completeness",
        label="Completeness",
        question="Does the step cover what it needs to, without silently skipping a case or a condition?",
    ),
    Criterion(
        key="clarity",
        label="Clarity",
        question="Is the step stated clearly enough that its claim can be checked?",
    ),
)
CRITERIA_KEYS: tuple[str, ...] = tuple(c.key for c in CRITERIA)

MAX_NOTE_CHARS = 4000


def normalize_address(value: str) -> str:
    """EIP-55 checksum form of a 20-byte hex address; a clear error otherwise."""
    from eth_utils import is_hex_address, to_checksum_address

    text = value.strip() if isinstance(value, str) else value
    if not isinstance(text, str) or not is_hex_address(text):
        raise ValueError(f"not an Ethereum address: {value!r}")
    return str(to_checksum_address(text))


def seat_id_for(session_id: int, segment_index: int, auditor: str, round: int = 0) -> str:
    """Deterministic seat id, so a daemon that re-enqueues after a restart hits the same row.

    `session:segment:auditor` for a session's first panel (round 0, the ids queues already
    hold) and `session:segment:auditor:r<round>` for an appeal round (issue 15), where the same
    person may sit on the same segment again.
    """
    if round < 0:
        raise ValueError(f"round must be >= 0, got {round}")
    base = f"{session_id}:{segment_index}:{normalize_address(auditor).lower()}"
    return base if round == 0 else f"{base}:r{round}"


def round_of_seat_id(seat_id: str) -> int:
    """The panel round a seat id names (see `seat_id_for`)."""
    last = seat_id.rsplit(":", 1)[-1]
    if seat_id.count(":") == 3 and last.startswith("r") and last[1:].isdigit():
        return int(last[1:])
    return 0


class HumanSeat(BaseModel):
    """A pending human audit: everything the audit form shows, plus where the vote goes."""

    model_config = ConfigDict(frozen=True)

    seat_id: str = Field(default="", description="`session:segment:auditor` (see `seat_id_for`).")
    session_id: int = Field(ge=0, description="On-chain audit session id.")
    segment_index: int = Field(ge=0, description="Index of the segment in the session.")
    auditor: str = Field(description="Address of the human auditor holding the seat (checksummed).")
    round: int = Field(default=0, ge=0, description="The session's panel: 0 the first, 1.. appeal rounds.")
    node_id: str = Field(description="HDAG node id of the segment, e.g. ST3.")
    level: Level
    problem: str = Field(description="Prompt context: the problem statement of the trace.")
    dependencies: list[ContextSegment] = Field(
        default_factory=list, description="Parent segments the current one builds on."
    )
    reasoning: str = Field(description="The current reasoning: the segment under audit.")
    implications: list[ContextSegment] = Field(
        default_factory=list, description="Child segments that follow from the current one."
    )
    criteria: list[Criterion] = Field(default_factory=lambda: list(CRITERIA))
    commit_deadline: float | None = Field(
        default=None, description="Unix time after which a decision can no longer be committed."
    )
    created_at: float | None = Field(default=None, description="Set by the queue on first enqueue.")

    @field_validator("auditor")
    @classmethod
    def _address(cls, v: str) -> str:
        return normalize_address(v)

    @model_validator(mode="before")
    @classmethod
    def _seat_id(cls, data: Any) -> Any:
        """Fill `seat_id` from (session, segment, auditor, round); refuse one that disagrees."""
        if not isinstance(data, dict):
            return data
        try:
            expected = seat_id_for(
                int(data["session_id"]),
                int(data["segment_index"]),
                str(data["auditor"]),
                int(data.get("round") or 0),
            )
        except (KeyError, TypeError, ValueError):
            return data  # the field validators report what is missing or malformed
        given = data.get("seat_id") or ""
        if given and given != expected:
            raise ValueError(
                f"seat_id {given!r} does not match its session, segment and auditor ({expected})"
            )
        return {**data, "seat_id": expected}

    @classmethod
    def from_task(
        cls,
        task: AuditTask,
        *,
        session_id: int,
        auditor: str,
        commit_deadline: float | None = None,
        round: int = 0,
    ) -> HumanSeat:
        """The seat for one audit task (its context becomes the form's four parts)."""
        return cls(
            session_id=session_id,
            segment_index=task.segment_index,
            auditor=auditor,
            round=round,
            node_id=task.node_id,
            level=task.level,
            problem=task.context.problem,
            dependencies=list(task.context.parents),
            reasoning=task.content,
            implications=list(task.context.children),
            commit_deadline=commit_deadline,
        )

    def same_content(self, other: HumanSeat) -> bool:
        """Equal apart from the queue's bookkeeping (`created_at`)."""
        return self.model_dump(exclude={"created_at"}) == other.model_dump(exclude={"created_at"})


class HumanDecision(BaseModel):
    """A person's verdict on one seat, with the four criteria and a note."""

    model_config = ConfigDict(frozen=True)

    seat_id: str
    session_id: int = Field(ge=0)
    segment_index: int = Field(ge=0)
    auditor: str
    round: int = Field(
        default=0, ge=0, description="The seat's panel round (read from `seat_id` when not given)."
    )
    verdict: Verdict
    criteria: dict[str, bool] = Field(description="One answer per key of `CRITERIA_KEYS`.")
    note: str = Field(default="", max_length=MAX_NOTE_CHARS)
    decided_at: float
    committed: bool = False

    @field_validator("criteria")
    @classmethod
    def _all_criteria(cls, v: dict[str, bool]) -> dict[str, bool]:
        return check_criteria(v)

    @model_validator(mode="before")
    @classmethod
    def _round(cls, data: Any) -> Any:
        """The round is part of the seat id: fill it from there, refuse a decision that disagrees
        (a verdict of one round must never be committed in another)."""
        if not isinstance(data, dict) or not isinstance(data.get("seat_id"), str):
            return data
        named = round_of_seat_id(data["seat_id"])
        given = data.get("round")
        if given is None:
            return {**data, "round": named}
        if isinstance(given, int) and given != named:
            raise ValueError(
                f"decision for round {given} on seat {data['seat_id']!r}, which is round {named}"
            )
        return data

    def to_result(self) -> AuditResult:
        """The decision as an auditor result: the daemon commits it and hashes it into the vote."""
        return AuditResult(
            verdict=self.verdict,
            decided=True,
            evidence=Evidence.model_validate(
                {
                    "auditor": "human",
                    "checkable": True,
                    "details": {
                        "seat_id": self.seat_id,
                        "criteria": {k: self.criteria[k] for k in CRITERIA_KEYS},
                        "note": self.note,
                    },
                }
            ),
        )


def check_criteria(criteria: dict[str, bool]) -> dict[str, bool]:
    """Exactly the four criteria, each a boolean; otherwise a ValueError naming the problem."""
    if not isinstance(criteria, dict):
        raise ValueError("criteria must be a mapping of criterion key to true/false")
    missing = [k for k in CRITERIA_KEYS if k not in criteria]
    unknown = sorted(k for k in criteria if k not in CRITERIA_KEYS)
    if missing or unknown:
        parts = []
        if missing:
            parts.append(f"missing {', '.join(missing)}")
        if unknown:
            parts.append(f"unknown {', '.join(unknown)}")
        raise ValueError(f"criteria must answer exactly {', '.join(CRITERIA_KEYS)}: {'; '.join(parts)}")
    bad = [k for k in CRITERIA_KEYS if not isinstance(criteria[k], bool)]
    if bad:
        raise ValueError(f"criteria answers must be true or false: {', '.join(bad)}")
    return {k: criteria[k] for k in CRITERIA_KEYS}

"""The core ontology of seed 002: concept hypotheses with message-level evidence."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from ontology.strict import StrictBase

__all__ = [
    "CONCEPT_STATES",
    "CONCEPT_TYPES",
    "RELATION_TYPES",
    "ConceptHypothesis",
    "ConceptRelation",
    "ConceptState",
    "ConceptType",
    "EvidenceSpan",
    "RelationType",
]

ConceptType = Literal[
    "behavioral_pattern", "project", "event", "tension", "goal", "belief", "entity"
]
ConceptState = Literal["active", "weak", "merged", "split", "archived"]
RelationType = Literal["causes", "conflicts_with", "supports", "instance_of", "enables"]

CONCEPT_TYPES: tuple[str, ...] = ConceptType.__args__  # type: ignore[attr-defined]
CONCEPT_STATES: tuple[str, ...] = ConceptState.__args__  # type: ignore[attr-defined]
RELATION_TYPES: tuple[str, ...] = RelationType.__args__  # type: ignore[attr-defined]


class EvidenceSpan(StrictBase):
    """A verbatim quote from one message that supports a concept."""

    source_id: str = Field(description="Id of the imported source (export file) of the message.")
    message_id: str = Field(description="Stable id of the message the quote comes from.")
    text: str = Field(description="The quote, verbatim from the message text.")
    confidence: float = Field(ge=0.0, le=1.0, description="Confidence that the quote supports it.")
    start: int = Field(ge=0, description="Character offset where the quote starts in the message.")
    end: int = Field(ge=0, description="Character offset just past the quote's last character.")


class ConceptRelation(StrictBase):
    """A typed, directed relation from one concept to another."""

    target_id: str = Field(description="concept_id of the relation's target concept.")
    relation: RelationType = Field(description="Kind of relation.")
    confidence: float = Field(ge=0.0, le=1.0, description="Confidence in the relation.")


class ConceptHypothesis(StrictBase):
    """A concept as the memory currently believes it, with the evidence that supports it."""

    concept_id: str = Field(description="Stable id of the concept.")
    title: str = Field(description="Short canonical name.")
    type: ConceptType = Field(description="Kind of concept.")
    description: str = Field(description="One or two sentences on what the concept is.")
    state: ConceptState = Field(description="Lifecycle state.")
    confidence: float = Field(ge=0.0, le=1.0, description="Confidence the concept is real.")
    aliases: list[str] = Field(description="Other names the concept goes by.")
    evidence_spans: list[EvidenceSpan] = Field(description="Verbatim evidence, by message.")
    relations: list[ConceptRelation] = Field(description="Relations to other concepts.")
    revision_count: int = Field(ge=0, description="How many times the concept was revised.")
    first_seen: datetime | None = Field(description="Earliest evidence time (UTC), if known.")
    last_seen: datetime | None = Field(description="Latest evidence time (UTC), if known.")



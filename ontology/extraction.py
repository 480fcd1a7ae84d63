"""The LLM-facing extraction schema (SGR): raw mentions only.

The LLM executes this schema; it never invents ids and never decides identity. Messages are
shown to it with short labels (``m1``, ``m2``...) that the pipeline maps back to message ids.
Identity, offsets and concept ids are decided later by deterministic code (the mapper).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pydantic import Field

from ontology.concepts import ConceptType, RelationType
from ontology.strict import StrictBase

__all__ = [
    "ExtractionRequest",
    "ExtractionResult",
    "RawMention",
    "RawRelation",
    "SegmentMessage",
]


class RawRelation(StrictBase):
    """A relation from the mention to another mention of the same reply, by title."""

    target_title: str = Field(description="Title of another mention in this same reply.")
    relation: RelationType = Field(description="Kind of relation from this mention to target.")
    confidence: float = Field(ge=0.0, le=1.0, description="Confidence in the relation, 0 to 1.")


class RawMention(StrictBase):
    """One concept as it appears in the conversation, with a verbatim supporting quote."""

    title: str = Field(description="Short canonical name of the concept (2-6 words).")
    type: ConceptType = Field(description="Kind of concept.")
    description: str = Field(description="One sentence on what the concept is for this person.")
    quote: str = Field(description="An exact, verbatim substring of the labelled message.")
    message_ref: str = Field(description="Label of the quoted message, e.g. 'm3'.")
    confidence: float = Field(ge=0.0, le=1.0, description="Confidence in the mention, 0 to 1.")
    relations: list[RawRelation] = Field(description="Relations to other mentions in this reply.")


class ExtractionResult(StrictBase):
    """The whole reply of the extractor for one segment."""

    mentions: list[RawMention] = Field(description="Concept mentions found in the segment.")


@dataclass(frozen=True)
class SegmentMessage:
    """A message as shown to an extractor: a short label instead of its id."""

    ref: str
    message_id: str
    role: str
    author: str | None
    created_at: datetime | None
    text: str


@dataclass(frozen=True)
class ExtractionRequest:
    """One segment to extract from."""

    segment_id: str
    conversation_title: str | None
    messages: tuple[SegmentMessage, ...]

    def message_for(self, ref: str) -> SegmentMessage | None:
        for message in self.messages:
            if message.ref == ref:
                return message
        return None

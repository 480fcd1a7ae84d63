"""The graph model: node and edge row types, the schema both engines declare, query results.

Rows are plain dicts (``TypedDict``), so projections cost nothing to build and both engines
receive the same keys in the same order. Every node and edge carries ``user_scope`` and
``assistant_scope`` and a ``row_hash`` (SHA-256 of the other properties) that makes syncs
incremental. Timestamps are canonical UTC ISO-8601 strings (microseconds, ``+00:00``), so
they compare as text on every engine.

Concept relations are ONE relationship type, ``RELATES``, with the kind in its ``relation``
property (causes, conflicts_with, supports, instance_of, enables): one table to declare,
one bitemporal query for ``as_of``. ``MERGED_INTO`` and ``SPLIT_INTO`` are their own types.
Topics form a two-level hierarchy: parent topics are ``Topic`` nodes too (no ``BELONGS_TO``
edge ends at them; their ``size`` counts the concepts under them) and ``SUBTOPIC_OF`` goes from
a topic to its parent, so a person drills down parent -> topics -> concepts -> messages.
Edges carry a deterministic ``id``; for evidence and relations it is the staging row id.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypedDict, get_type_hints

__all__ = [
    "EDGE_TYPES",
    "NODE_LABELS",
    "SCHEMA",
    "AsOfConcept",
    "AsOfRelation",
    "AsOfState",
    "BelongsToEdge",
    "ConceptHistory",
    "ConceptLinkEdge",
    "ConceptNode",
    "ConceptRef",
    "ContainsMessageEdge",
    "ConversationNode",
    "EdgeSpec",
    "EvidenceForEdge",
    "EvidenceRow",
    "HasMessageEdge",
    "MessageNode",
    "NextEdge",
    "NodeSpec",
    "RelatesEdge",
    "Row",
    "SegmentNode",
    "SubtopicEdge",
    "TopicNode",
    "WindowMessage",
]

Row = dict[str, Any]


class _Scoped(TypedDict):
    user_scope: str
    assistant_scope: str
    row_hash: str


class ConversationNode(_Scoped):
    id: str
    source_id: str
    external_id: str
    title: str | None
    created_at: str | None
    updated_at: str | None


class MessageNode(_Scoped):
    id: str
    conversation_id: str
    parent_id: str | None
    role: str
    author: str | None
    text: str
    created_at: str | None
    position: int
    on_current_branch: bool
    source_id: str


class SegmentNode(_Scoped):
    id: str
    conversation_id: str
    ordinal: int
    branch: str
    token_estimate: int
    status: str
    run_id: str


class ConceptNode(_Scoped):
    id: str
    title: str
    concept_type: str
    description: str
    state: str
    confidence: float
    aliases: str  # JSON list
    revision_count: int
    revisions: str  # JSON list of {revision, action, reason, run_id, written_at, title, state}
    first_seen: str | None
    last_seen: str | None
    merged_into: str | None
    created_at: str
    updated_at: str
    run_id: str


class TopicNode(_Scoped):
    id: str
    label: str
    keywords: str  # JSON list
    size: int
    active: bool
    plan_id: str | None
    run_id: str


class _Edge(_Scoped):
    id: str
    src: str
    dst: str


class HasMessageEdge(_Edge):
    pass


class NextEdge(_Edge):
    pass


class ContainsMessageEdge(_Edge):
    position: int


class EvidenceForEdge(_Edge):
    quote: str
    span_start: int
    span_end: int
    confidence: float
    source_id: str
    mention_id: str | None
    run_id: str
    written_at: str


class BelongsToEdge(_Edge):
    probability: float
    active: bool
    plan_id: str | None
    run_id: str


class SubtopicEdge(_Edge):
    plan_id: str | None
    active: bool
    run_id: str


class RelatesEdge(_Edge):
    relation: str
    confidence: float
    valid_at: str | None
    invalid_at: str | None
    created_at: str
    expired_at: str | None
    evidence_message_id: str | None
    invalidated_by: str | None
    run_id: str


class ConceptLinkEdge(_Edge):
    plan_id: str | None
    active: bool
    run_id: str
    written_at: str


_PY_TO_KIND = {str: "STRING", int: "INT64", float: "DOUBLE", bool: "BOOLEAN"}


def _properties(row_type: type) -> tuple[tuple[str, str], ...]:
    """(name, kind) pairs in declaration order, ``src``/``dst`` excluded; ``id`` first."""
    hints = get_type_hints(row_type)
    pairs: list[tuple[str, str]] = []
    for name, hint in hints.items():
        if name in ("src", "dst"):
            continue
        args = [a for a in getattr(hint, "__args__", (hint,)) if a is not type(None)]
        pairs.append((name, _PY_TO_KIND[args[0]]))
    pairs.sort(key=lambda pair: pair[0] != "id")
    return tuple(pairs)


@dataclass(frozen=True)
class NodeSpec:
    label: str
    properties: tuple[tuple[str, str], ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.properties)


@dataclass(frozen=True)
class EdgeSpec:
    type: str
    src_label: str
    dst_label: str
    properties: tuple[tuple[str, str], ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.properties)


NODE_SPECS: tuple[NodeSpec, ...] = tuple(
    NodeSpec(label, _properties(row_type))
    for label, row_type in (
        ("Conversation", ConversationNode),
        ("Message", MessageNode),
        ("Segment", SegmentNode),
        ("Concept", ConceptNode),
        ("Topic", TopicNode),
    )
)
EDGE_SPECS: tuple[EdgeSpec, ...] = tuple(
    EdgeSpec(name, src, dst, _properties(row_type))
    for name, src, dst, row_type in (
        ("HAS_MESSAGE", "Conversation", "Message", HasMessageEdge),
        ("NEXT", "Message", "Message", NextEdge),
        ("CONTAINS_MESSAGE", "Segment", "Message", ContainsMessageEdge),
        ("EVIDENCE_FOR", "Message", "Concept", EvidenceForEdge),
        ("BELONGS_TO", "Concept", "Topic", BelongsToEdge),
        ("RELATES", "Concept", "Concept", RelatesEdge),
        ("MERGED_INTO", "Concept", "Concept", ConceptLinkEdge),
        ("SPLIT_INTO", "Concept", "Concept", ConceptLinkEdge),
        ("SUBTOPIC_OF", "Topic", "Topic", SubtopicEdge),
    )
)


@dataclass(frozen=True)
class _Schema:
    nodes: dict[str, NodeSpec] = field(default_factory=dict)
    edges: dict[str, EdgeSpec] = field(default_factory=dict)

    def kinds(self) -> tuple[str, ...]:
        """Every label then every edge type, in schema order."""
        return (*self.nodes, *self.edges)


SCHEMA = _Schema({s.label: s for s in NODE_SPECS}, {s.type: s for s in EDGE_SPECS})
NODE_LABELS: tuple[str, ...] = tuple(SCHEMA.nodes)
EDGE_TYPES: tuple[str, ...] = tuple(SCHEMA.edges)


# -- query results (engine-independent) ------------------------------------------------------


@dataclass(frozen=True)
class EvidenceRow:
    """One verbatim span supporting a concept, with the message it comes from."""

    evidence_id: str
    concept_id: str
    quote: str
    start: int
    end: int
    confidence: float
    message_id: str
    conversation_id: str
    created_at: str | None
    role: str
    run_id: str


@dataclass(frozen=True)
class ConceptRef:
    """A concept as seen from a message, with the spans of that message that support it."""

    concept_id: str
    title: str
    concept_type: str
    state: str
    evidence_ids: tuple[str, ...]


@dataclass(frozen=True)
class WindowMessage:
    """A message around an anchor along NEXT: offset < 0 before it, > 0 after it."""

    offset: int
    message_id: str
    conversation_id: str
    role: str
    created_at: str | None
    position: int
    text: str


@dataclass(frozen=True)
class ConceptHistory:
    concept_id: str
    title: str
    state: str
    revisions: tuple[dict[str, Any], ...]
    merged_into: tuple[str, ...]
    merged_from: tuple[str, ...]
    split_into: tuple[str, ...]
    split_from: tuple[str, ...]


@dataclass(frozen=True)
class AsOfConcept:
    concept_id: str
    title: str
    state: str
    revision: int


@dataclass(frozen=True)
class AsOfRelation:
    relation_id: str
    source_id: str
    target_id: str
    relation: str
    confidence: float
    valid_at: str | None
    invalid_at: str | None
    created_at: str
    expired_at: str | None


@dataclass(frozen=True)
class AsOfState:
    """Concepts and relations that held at world time ``at``, as believed at ``believed_at``."""

    at: str
    believed_at: str
    concepts: tuple[AsOfConcept, ...]
    relations: tuple[AsOfRelation, ...]

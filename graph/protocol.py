"""The one protocol every graph backend implements, in model terms (no Cypher in signatures).

``kind`` below is a node label or an edge type of ``graph.model.SCHEMA``. Rows carry every
property of their spec (edges also ``src`` and ``dst``, the ids of their end nodes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, runtime_checkable

from graph.model import AsOfState, ConceptHistory, ConceptRef, EvidenceRow, Row, WindowMessage

__all__ = ["GraphExport", "GraphStore"]

GraphExport = dict[str, list[Row]]
"""Every label and edge type mapped to all its rows sorted by id (edges with src and dst)."""


@runtime_checkable
class GraphStore(Protocol):
    backend: str
    """``embedded`` or ``neo4j``."""

    target: str
    """Where the graph lives: a file path or a Bolt URI with database name."""

    def ensure_schema(self) -> None:
        """Declare node tables/constraints and edge tables/indexes (idempotent)."""

    def batch(self) -> AbstractContextManager[None]:
        """Group the writes inside the block into as few commits as the engine allows."""

    def upsert_nodes(self, label: str, rows: Sequence[Row]) -> int:
        """Insert or update nodes by id; returns the number of rows sent."""

    def upsert_edges(self, edge_type: str, rows: Sequence[Row]) -> int:
        """Insert or update edges by id between existing nodes; returns rows sent."""

    def bulk_load(
        self, nodes: Mapping[str, Sequence[Row]], edges: Mapping[str, Sequence[Row]]
    ) -> None:
        """Insert rows whose ids are not in the graph yet, as fast as the engine allows.

        Used for rebuilds (after ``delete_all``) and for the new rows of an incremental sync.
        Nodes are written before edges; edge ends must exist.
        """

    def delete_nodes(self, label: str, ids: Sequence[str]) -> int:
        """Remove nodes (and their edges) by id; returns ids sent."""

    def delete_edges(self, edge_type: str, ids: Sequence[str]) -> int:
        """Remove edges by id; returns ids sent."""

    def delete_all(self) -> None:
        """Remove every node and edge; the schema stays."""

    def counts(self) -> dict[str, int]:
        """Number of nodes per label and edges per type, every kind present (0 if none)."""

    def ids(self, kind: str) -> set[str]:
        """Ids of the nodes of a label or the edges of a type."""

    def hashes(self, kind: str) -> dict[str, str]:
        """``id -> row_hash`` for a label or edge type."""

    def rows(self, kind: str) -> list[Row]:
        """Every node of a label or edge of a type, all properties (edges: src, dst), by id."""

    def export(self) -> GraphExport:
        """A full deterministic dump, for rebuild-equality checks."""

    def evidence_for_concept(self, concept_id: str) -> list[EvidenceRow]:
        """Spans supporting a concept, by message time then message id then offset."""

    def concepts_for_message(self, message_id: str) -> list[ConceptRef]:
        """Concepts a message supports, by concept id."""

    def window(self, message_id: str, n: int) -> list[WindowMessage]:
        """The message and up to ``n`` messages before and after it along NEXT."""

    def concept_history(self, concept_id: str) -> ConceptHistory | None:
        """Revisions plus merges and splits in and out; None if the concept is unknown."""

    def as_of(self, at: str, believed_at: str) -> AsOfState:
        """What held at world time ``at``, as the memory believed it at system time ``believed_at``.

        Concepts first seen by ``at`` and known by ``believed_at`` (their latest revision then);
        relations valid at ``at`` (valid_at/invalid_at) and recorded, not yet expired, at
        ``believed_at`` (created_at/expired_at). ``believed_at = at`` asks what was believed then;
        ``believed_at = now`` asks what we now know held then.
        """

    def run_cypher(self, query: str, params: Mapping[str, Any] | None = None) -> list[Row]:
        """A passthrough (read-only when the store was opened so); input in ``params`` only."""

    def close(self) -> None: ...

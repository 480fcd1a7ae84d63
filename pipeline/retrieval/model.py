"""Retrieval types: the request, a route's candidates, the fused results, the route protocol."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

__all__ = ["Candidate", "PathStep", "Route", "SearchRequest", "SearchResult"]


@dataclass(frozen=True)
class PathStep:
    """One hop on the way from the query to a message: a node or an edge of the memory.

    ``kind`` is a graph label or edge type (``Concept``, ``EVIDENCE_FOR``, ``RELATES``,
    ``MERGED_INTO``, ``IN_TOPIC``, ``NEXT``, ``Message``) or a prior (``speaker``, ``time``);
    ``id`` is the staging/source row id (empty for priors); ``label`` a short readable note.
    """

    kind: str
    id: str
    label: str = ""


@dataclass(frozen=True)
class SearchRequest:
    """What to look for, and where: conversations narrow the search (empty: all visible)."""

    text: str
    k: int = 10
    conversations: frozenset[str] = frozenset()
    as_of: str | None = None


@dataclass(frozen=True)
class Candidate:
    """A message a route found, with its score (higher is better) and why it was found."""

    message_id: str
    score: float
    route: str
    path: tuple[PathStep, ...] = ()


@dataclass
class SearchResult:
    """One fused result: the message, where it lives, and every route and path behind it."""

    message_id: str
    score: float
    excerpt: str
    conversation_id: str
    session: str
    created_at: str | None
    author: str | None
    role: str
    routes: list[str] = field(default_factory=list)
    paths: list[list[PathStep]] = field(default_factory=list)
    external_id: str = ""


class Route(Protocol):
    """A swappable retrieval part: query in, ranked candidates out (best first)."""

    name: str

    def candidates(self, request: SearchRequest, limit: int) -> list[Candidate]: ...

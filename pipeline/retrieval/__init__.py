"""Retrieval over messages, concepts and graph structure; the library behind `conceptmem search`.

Routes are small parts behind one protocol (:class:`Route`: request in, ranked candidates
with scores and reasons out); :class:`Searcher` wires them over one store and scope.
"""

from pipeline.retrieval.corpus import Corpus, MessageRow, Visibility, visible_messages
from pipeline.retrieval.fusion import Fused, rrf
from pipeline.retrieval.model import Candidate, PathStep, Route, SearchRequest, SearchResult
from pipeline.retrieval.searcher import ROUTES, NoStoreError, Searcher, UnknownRouteError

__all__ = [
    "ROUTES",
    "Candidate",
    "Corpus",
    "Fused",
    "MessageRow",
    "NoStoreError",
    "PathStep",
    "Route",
    "SearchRequest",
    "SearchResult",
    "Searcher",
    "UnknownRouteError",
    "Visibility",
    "rrf",
    "visible_messages",
]

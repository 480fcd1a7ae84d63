"""The ``memory`` route: everything the store knows, fused.

1. Priors from the query (:mod:`pipeline.retrieval.priors`): the speakers it names (authors of
   the messages in scope) and its time windows.
2. Sub-routes, each with the named speakers taken out of the query text (a name says *whose*
   turn, which the prior handles, not *what* was said): BM25, dense over "author: text"
   documents, and concepts -> graph hops -> evidence (:mod:`pipeline.retrieval.concepts`).
3. Weighted RRF, then the priors as boosts: turns by a named speaker, turns inside a named
   time window.
4. Expansion around the best hits along NEXT within the same session: a neighbour inherits a
   share of the hit's score (answers often sit one turn from the words that match).

Weights live in :class:`MemoryConfig`; the defaults were chosen on LoCoMo dev conversations
(``locomo_dev3.json``) only, from a 48-point grid whose every point scored between +9 and +15
recall@10 points over ``flat_hybrid`` there; a middle point was kept, not the best one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ontology import Embedder
from pipeline.retrieval.concepts import ConceptRoute, load_concept_graph
from pipeline.retrieval.corpus import Corpus
from pipeline.retrieval.dense import DenseRoute
from pipeline.retrieval.fusion import Fused, rrf
from pipeline.retrieval.lexical import Bm25Route, query_words
from pipeline.retrieval.model import Candidate, PathStep, SearchRequest
from pipeline.retrieval.priors import QueryPriors, read_priors, strip_names
from staging import StagingStore

__all__ = ["Gathered", "MemoryConfig", "MemoryRoute", "fuse"]


@dataclass(frozen=True)
class MemoryConfig:
    weights: dict[str, float] = field(
        default_factory=lambda: {"bm25": 1.0, "dense": 1.0, "concepts": 0.25})
    rrf_k: float = 60.0
    speaker_boost: float = 0.5  # score * (1 + boost) for turns by a speaker the query names
    time_boost: float = 0.3
    expand_top: int = 10  # hits whose neighbours are added
    expand_width: int = 2
    expand_share: float = 0.25  # a neighbour gets share / |offset| of the hit's score


@dataclass
class Gathered:
    """What the sub-routes returned for one request, before fusion (fusion is pure)."""

    priors: QueryPriors
    lists: dict[str, list[Candidate]]


class MemoryRoute:
    name = "memory"

    def __init__(self, corpus: Corpus, bm25: Bm25Route, dense: DenseRoute,
                 staging: StagingStore, embedder: Embedder,
                 config: MemoryConfig | None = None) -> None:
        self.corpus, self.bm25, self.dense = corpus, bm25, dense
        self.config = config or MemoryConfig()
        graph = load_concept_graph(staging, corpus.visibility)
        self.concepts = ConceptRoute(corpus, graph, embedder, dense.encode)
        self._speakers = corpus.speakers()
        self._newest = max((r.created_at for r in corpus.rows.values() if r.created_at),
                           default=None)

    def gather(self, request: SearchRequest, depth: int) -> Gathered:
        names = [n for n, convs in self._speakers.items()
                 if not request.conversations or convs & request.conversations]
        priors = read_priors(request.text, names, self._newest)
        text = strip_names(request.text, priors.speakers)
        stripped = SearchRequest(text, request.k, request.conversations, request.as_of)
        vec = self.dense.encode(text)
        dense = [Candidate(mid, s, "dense", (PathStep("dense", "", f"cos {s:.3f}"),))
                 for mid, s in self.dense.index.top(vec, depth, self._subset(request))]
        lists = {
            "bm25": [Candidate(c.message_id, c.score, "bm25", c.path)
                     for c in self.bm25.candidates(stripped, depth)],
            "dense": dense,
            "concepts": self.concepts.candidates(stripped, depth, vec, text, self.bm25.informative(
                query_words(text))),
        }
        return Gathered(priors, lists)

    def _subset(self, request: SearchRequest) -> list[int] | None:
        return self.dense._subset(request.conversations) if request.conversations else None

    def rank(self, request: SearchRequest, depth: int) -> list[Fused]:
        return fuse(self.gather(request, depth), self.corpus, self.config)[:depth]


def fuse(gathered: Gathered, corpus: Corpus, config: MemoryConfig) -> list[Fused]:
    """Weighted RRF of the sub-routes, prior boosts, then NEXT expansion (pure)."""
    fused = {f.message_id: f for f in rrf(gathered.lists, config.rrf_k, config.weights)}
    _boost(fused, gathered.priors, corpus, config)
    ranked = sorted(fused.values(), key=lambda f: (-f.score, f.message_id))
    _expand(ranked[: config.expand_top], fused, corpus, config)
    return sorted(fused.values(), key=lambda f: (-f.score, f.message_id))


def _boost(fused: dict[str, Fused], priors: QueryPriors, corpus: Corpus,
           config: MemoryConfig) -> None:
    for item in fused.values():
        row = corpus.rows[item.message_id]
        if priors.speakers and row.author and row.author.casefold() in priors.speakers:
            item.score *= 1 + config.speaker_boost
            item.found_by.append(Candidate(row.id, 0.0, "speaker",
                                           (PathStep("speaker", "", row.author),)))
        if priors.windows and any(w.contains(row.created_at) for w in priors.windows):
            item.score *= 1 + config.time_boost
            item.found_by.append(Candidate(row.id, 0.0, "time",
                                           (PathStep("time", "", row.created_at or ""),)))


def _expand(hits: Sequence[Fused], fused: dict[str, Fused], corpus: Corpus,
            config: MemoryConfig) -> None:
    if config.expand_share <= 0:
        return
    for hit in hits:
        for mid, offset in corpus.neighbours(hit.message_id, config.expand_width):
            gain = hit.score * config.expand_share / abs(offset)
            item = fused.setdefault(mid, Fused(mid, 0.0))
            item.score += gain
            item.found_by.append(Candidate(mid, gain, "next", (
                PathStep("Message", hit.message_id, "hit"),
                PathStep("NEXT", "", f"{offset:+d}"))))

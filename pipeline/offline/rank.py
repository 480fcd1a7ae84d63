"""Rank a sentence's candidate phrases: lexically, or KeyBERT-style with embeddings and MMR.

Lexical score: proper names first, then phrases the segment repeats, then longer phrases, then
earlier ones. With an ``Embedder``: relevance is the cosine between the phrase and its sentence
(both embedded as passages), and Maximal Marginal Relevance (``diversity``) picks each next
phrase by relevance minus its highest similarity to the phrases already picked.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np

from ontology import Embedder, normalize_name
from pipeline.offline.phrases import Candidate

__all__ = ["mmr", "rank"]


def _lexical(candidate: Candidate, counts: Counter[str], key: Callable[[str], str]) -> tuple[
    int, int, int, int
]:
    return (int(candidate.proper), min(counts[key(candidate.text)], 3),
            min(candidate.words, 3), -candidate.start)


def rank(
    sentence: str, found: Sequence[Candidate], counts: Counter[str],
    embedder: Embedder | None = None, diversity: float = 0.3,
    key: Callable[[str], str] = normalize_name,
) -> list[Candidate]:
    """The candidates, best first (deterministic for a deterministic embedder)."""
    lexical = sorted(found, key=lambda c: _lexical(c, counts, key), reverse=True)
    if embedder is None or len(lexical) < 2:
        return lexical
    vectors = np.asarray(embedder.embed([sentence, *(c.text for c in lexical)]), np.float32)
    order = mmr(vectors[0], vectors[1:], diversity)
    return [lexical[i] for i in order]


def mmr(query: np.ndarray, items: np.ndarray, diversity: float) -> list[int]:
    """Indices of ``items`` (unit rows) in MMR order against the unit vector ``query``."""
    relevance = items @ query
    similarity = items @ items.T
    chosen: list[int] = [int(np.argmax(relevance))]
    left = [i for i in range(len(items)) if i != chosen[0]]
    while left:
        redundancy = similarity[np.ix_(left, chosen)].max(axis=1)
        scores = (1 - diversity) * relevance[left] - diversity * redundancy
        pick = left[int(np.argmax(scores))]
        chosen.append(pick)
        left.remove(pick)
    return chosen

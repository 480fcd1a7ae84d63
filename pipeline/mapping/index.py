"""Candidate search over existing concepts: alias dict, rapidfuzz over names, numpy cosine.

Every concept contributes one "name row" per distinct normalised name (title and aliases). The
alias dict answers exact hits in O(1); rapidfuzz's C loop scores a name against all rows (names
are kept token-sorted, so plain ``ratio`` equals ``token_sort_ratio``); one matrix product per
extraction gives the cosines against all rows. No Python loop over concept pairs.

Names of ``weak`` concepts (one piece of evidence, most of them never seen again) are matched
by alias and fuzzy score only: their rows keep a zero vector, so embedding them is deferred
until the concept becomes active (``add`` again), which keeps the embedder off the hot path.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from rapidfuzz import fuzz, process

from ontology import Embedder, normalize_name
from staging.concept_repo import ConceptRow

__all__ = ["Candidate", "ConceptIndex"]

FloatMatrix = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Candidate:
    """An existing concept and how the mention's name scores against it."""

    concept_id: str
    alias_hit: bool
    fuzzy: float
    cosine: float


class ConceptIndex:
    """Existing concepts by name, kept in step with the mapper's writes."""

    def __init__(self, embedder: Embedder, top_k: int = 5) -> None:
        self.embedder = embedder
        self.top_k = top_k
        self.concepts: dict[str, ConceptRow] = {}
        self.alias: dict[str, list[str]] = {}
        self.names: list[str] = []
        self.sorted_names: list[str] = []
        self.owners: list[str] = []
        self.rows_of: dict[str, list[int]] = {}
        self._pairs: set[tuple[str, str]] = set()
        self._unembedded: dict[str, list[int]] = {}  # weak owner -> rows with a zero vector
        self._vectors: FloatMatrix = np.zeros((64, embedder.dim), dtype=np.float32)

    @classmethod
    def build(cls, embedder: Embedder, rows: list[ConceptRow]) -> ConceptIndex:
        index = cls(embedder)
        for row in rows:
            index.concepts[row.id] = row
        for embed in (True, False):
            pending = [(row.id, name) for row in rows for name in _names(row)
                       if (row.state != "weak") == embed]
            index._add_names(pending, embed)
        return index

    def add(self, row: ConceptRow) -> None:
        """A new concept, new aliases of a known one, or a weak concept that became active."""
        self.concepts[row.id] = row
        embed = row.state != "weak"
        if embed and row.id in self._unembedded:
            rows = self._unembedded.pop(row.id)
            vectors = self.embed_names([self.names[i] for i in rows])
            for i, vector in zip(rows, vectors, strict=True):
                self._vectors[i] = vector
        self._add_names([(row.id, name) for name in _names(row)], embed)

    def embed_names(self, names: list[str]) -> FloatMatrix:
        if not names:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        return np.asarray(self.embedder.embed(names), dtype=np.float32)

    def _add_names(self, pairs: list[tuple[str, str]], embed: bool = True) -> None:
        fresh = [pair for pair in dict.fromkeys(pairs) if pair not in self._pairs]
        if not fresh:
            return
        if embed:
            vectors = self.embed_names([name for _, name in fresh])
        else:
            vectors = np.zeros((len(fresh), self.embedder.dim), dtype=np.float32)
        needed = len(self.names) + len(fresh)
        if needed > len(self._vectors):
            grown = np.zeros((max(needed, 2 * len(self._vectors)), self.embedder.dim),
                             dtype=np.float32)
            grown[: len(self.names)] = self._vectors[: len(self.names)]
            self._vectors = grown
        for (owner, name), vector in zip(fresh, vectors, strict=True):
            row_index = len(self.names)
            self._vectors[row_index] = vector
            self.names.append(name)
            self.sorted_names.append(_token_sorted(name))
            self.owners.append(owner)
            self._pairs.add((owner, name))
            self.rows_of.setdefault(owner, []).append(row_index)
            if not embed:
                self._unembedded.setdefault(owner, []).append(row_index)
            owners = self.alias.setdefault(name, [])
            if owner not in owners:
                owners.append(owner)

    def cosines(self, vectors: FloatMatrix) -> FloatMatrix:
        """Cosines of the current name rows against several vectors at once: (rows, k)."""
        return self._vectors[: len(self.names)] @ np.asarray(vectors, dtype=np.float32).T

    def candidates(
        self, name: str, vector: FloatMatrix, precomputed: FloatMatrix | None = None
    ) -> list[Candidate]:
        """Concepts hit by alias, or among the top-k by fuzzy score or by cosine.

        ``precomputed`` holds this vector's cosines against the first rows (from ``cosines``);
        only rows added since are computed here.
        """
        count = len(self.names)
        if count == 0:
            return []
        if precomputed is None:
            cosines = self._vectors[:count] @ vector
        else:
            tail = self._vectors[len(precomputed) : count] @ vector
            cosines = np.concatenate([precomputed, tail])
        ids: dict[str, None] = dict.fromkeys(self.alias.get(name, []))
        query = _token_sorted(name)
        for _, _, position in process.extract(
            query, self.sorted_names, scorer=fuzz.ratio, processor=None, limit=self.top_k
        ):
            ids.setdefault(self.owners[position])
        top = min(self.top_k, count)
        for position in np.argpartition(-cosines, top - 1)[:top]:
            ids.setdefault(self.owners[int(position)])
        return [self._score(cid, name, query, cosines) for cid in ids]

    def _score(
        self, concept_id: str, name: str, query: str, cosines: FloatMatrix
    ) -> Candidate:
        positions = self.rows_of[concept_id]
        fuzzy = max(fuzz.ratio(query, self.sorted_names[p]) for p in positions)
        cosine = max(float(cosines[p]) for p in positions)
        alias_hit = concept_id in self.alias.get(name, [])
        return Candidate(concept_id, alias_hit, round(fuzzy, 2), round(cosine, 4))


def _token_sorted(name: str) -> str:
    return " ".join(sorted(name.split()))


def _names(row: ConceptRow) -> list[str]:
    names = [normalize_name(row.title), *(normalize_name(alias) for alias in row.aliases)]
    return [name for name in dict.fromkeys(names) if name]

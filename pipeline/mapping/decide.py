"""Pure decision rules of the semantic mapper: which candidate, and what changes.

A candidate matches a mention when their types are compatible and one signal clears its
threshold: an exact alias hit on the normalised name, a fuzzy score (rapidfuzz
token_sort_ratio, 0-100), or an embedding cosine (same type only: names that merely sound alike
in embedding space are a weaker signal, and it also needs a minimum fuzzy score, because
e5-style embeddings score short unrelated names around 0.90). Ties break on the signal order,
then on concept id. A token-sorted fuzzy score of 100 * ``alias`` counts as an alias hit.

Fuzzy and embedding matches must also meet the gardener's merge bar: the mention's title and
one of the candidate's credible names relate by ``gardener.sameness.name_relation`` (equal
canonical forms, an acronym, a kind-word, role or vendor word, a typo), so "Portugal" never
joins "Portuguese", nor "monthly total" "monthly summary". The mapper does not know in which
conversations a candidate lives, so the evidence-overlap part of that bar is the gardener's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gardener.sameness import credible_names, name_relation
from ontology import RawMention, normalize_name
from pipeline.mapping.index import Candidate
from staging.concept_repo import ConceptRow

__all__ = [
    "COMPATIBLE_TYPES",
    "Decision",
    "NameCheck",
    "Refinement",
    "Thresholds",
    "choose",
    "refinement_for",
    "scores_of",
    "type_compat",
]

COMPATIBLE_TYPES: frozenset[frozenset[str]] = frozenset(
    {
        frozenset({"goal", "project"}),
        frozenset({"project", "entity"}),
        frozenset({"belief", "tension"}),
        frozenset({"behavioral_pattern", "tension"}),
    }
)


def type_compat(left: str, right: str) -> float:
    """1.0 same type, 0.5 compatible pair (goal~project...), 0.0 incompatible (entity~event)."""
    if left == right:
        return 1.0
    return 0.5 if frozenset({left, right}) in COMPATIBLE_TYPES else 0.0


@dataclass(frozen=True)
class Thresholds:
    alias: float = 1.0  # token-sorted similarity (0-1) that counts as an alias hit
    fuzzy: float = 92.0
    cosine: float = 0.95
    cosine_min_fuzzy: float = 50.0  # an embedding match needs this much lexical support
    description_gain: float = 1.5
    confidence_gain: float = 0.05


@dataclass(frozen=True)
class Refinement:
    """What a mention improves on a concept; empty means a plain attach."""

    alias: str | None = None
    description: str | None = None
    confidence: float | None = None
    state: str | None = None  # "active" when new evidence revives an archived concept

    def __bool__(self) -> bool:
        values = (self.alias, self.description, self.confidence, self.state)
        return any(value is not None for value in values)

    def summary(self) -> str:
        names = ("alias", "description", "confidence", "state")
        return "improves " + "+".join(name for name in names if getattr(self, name))


@dataclass(frozen=True)
class Decision:
    """create | attach | refine | reject, the concept it concerns, why, and the scores."""

    action: str
    concept_id: str | None
    reason: str
    scores: dict[str, Any]
    refinement: Refinement | None = None


def _via(candidate: Candidate, compat: float, limits: Thresholds,
         names: NameCheck | None = None) -> str | None:
    if compat <= 0.0:
        return None
    if candidate.alias_hit or candidate.fuzzy >= 100.0 * limits.alias:
        return "alias"
    related = names is None or names.related(candidate.concept_id)
    if candidate.fuzzy >= limits.fuzzy and related:
        return "fuzzy"
    if (compat >= 1.0 and candidate.cosine >= limits.cosine
            and candidate.fuzzy >= limits.cosine_min_fuzzy and related):
        return "embedding"
    return None


@dataclass(frozen=True)
class NameCheck:
    """The mention's title and each candidate's (title, aliases), for the merge bar."""

    title: str
    names: Mapping[str, tuple[str, Sequence[str]]]

    def related(self, concept_id: str) -> bool:
        title, aliases = self.names.get(concept_id, ("", ()))
        return name_relation([self.title], credible_names(title, aliases)) is not None


_VIA_RANK = {"alias": 3, "fuzzy": 2, "embedding": 1}


def choose(
    candidates: list[Candidate], mention_type: str, types: dict[str, str], limits: Thresholds,
    names: NameCheck | None = None,
) -> tuple[Candidate | None, str | None, Candidate | None]:
    """(matched candidate, via, best candidate overall) — the last one is kept for the record.

    ``names`` applies the merge bar to fuzzy and embedding matches (see the module docstring);
    without it only the thresholds decide.
    """

    def key(candidate: Candidate) -> tuple[Any, ...]:
        compat = type_compat(mention_type, types[candidate.concept_id])
        via = _via(candidate, compat, limits, names)
        rank = _VIA_RANK.get(via or "", 0)
        return (rank, compat, candidate.alias_hit, candidate.fuzzy, candidate.cosine,
                _reverse(candidate.concept_id))

    if not candidates:
        return None, None, None
    best = max(candidates, key=key)
    via = _via(best, type_compat(mention_type, types[best.concept_id]), limits, names)
    return (best if via else None), via, best


def _reverse(text: str) -> tuple[int, ...]:
    """Sort key that prefers the smaller id under ``max``."""
    return tuple(-ord(char) for char in text)


def scores_of(
    candidate: Candidate | None, mention_type: str, types: dict[str, str]
) -> dict[str, Any]:
    if candidate is None:
        return {"alias_hit": False, "fuzzy": 0.0, "cosine": 0.0, "type_compat": None,
                "candidate": None}
    return {
        "alias_hit": candidate.alias_hit,
        "fuzzy": candidate.fuzzy,
        "cosine": candidate.cosine,
        "type_compat": type_compat(mention_type, types[candidate.concept_id]),
        "candidate": candidate.concept_id,
    }


def refinement_for(row: ConceptRow, mention: RawMention, limits: Thresholds) -> Refinement:
    """New alias (a name not yet known), a clearly fuller description, a higher confidence."""
    known = {normalize_name(row.title), *(normalize_name(alias) for alias in row.aliases)}
    title = mention.title.strip()
    alias = title if normalize_name(title) not in known and normalize_name(title) else None
    description = mention.description.strip()
    fuller = bool(description) and (
        not row.description.strip()
        or len(description) >= limits.description_gain * len(row.description.strip())
    )
    confidence = (
        mention.confidence if mention.confidence >= row.confidence + limits.confidence_gain
        else None
    )
    return Refinement(alias, description if fuller else None, confidence)

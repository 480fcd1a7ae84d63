"""Reciprocal-rank fusion of ranked candidate lists, deduplicated by message (pure)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pipeline.retrieval.model import Candidate

__all__ = ["Fused", "rrf"]


@dataclass
class Fused:
    """A message after fusion: its score and every candidate (route, path) that found it."""

    message_id: str
    score: float
    found_by: list[Candidate] = field(default_factory=list)


def rrf(
    rankings: Mapping[str, Sequence[Candidate]],
    k: float = 60.0,
    weights: Mapping[str, float] | None = None,
) -> list[Fused]:
    """Sum of ``weight / (k + rank)`` over the lists (rank from 1; a message counts once per
    list, at its best rank); ties broken by message id so the order is deterministic."""
    fused: dict[str, Fused] = {}
    for route, ranking in rankings.items():
        weight = 1.0 if weights is None else weights.get(route, 1.0)
        seen: set[str] = set()
        for rank, cand in enumerate(ranking, start=1):
            item = fused.setdefault(cand.message_id, Fused(cand.message_id, 0.0))
            item.found_by.append(cand)
            if cand.message_id not in seen:
                seen.add(cand.message_id)
                item.score += weight / (k + rank)
    return sorted(fused.values(), key=lambda f: (-f.score, f.message_id))

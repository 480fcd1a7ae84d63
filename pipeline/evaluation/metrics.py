"""Retrieval metrics over one ranked list (pure): recall-any/all, fractional recall, NDCG."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["Scores", "Tally", "ndcg", "score_ranking"]


@dataclass(frozen=True)
class Scores:
    """One question's metrics at one k."""

    recall_any: float
    recall_all: float
    recall: float
    session_recall: float
    ndcg: float
    session_ndcg: float


def ndcg(ranked: Sequence[str], gold: set[str], k: int) -> float:
    """Binary-relevance NDCG@k."""
    if not gold:
        return 0.0
    dcg = sum(1.0 / math.log2(i + 2) for i, item in enumerate(ranked[:k]) if item in gold)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(gold), k)))
    return dcg / ideal


def score_ranking(ranked: Sequence[str], gold: set[str], session_of: Mapping[str, str],
                  gold_sessions: set[str], k: int) -> Scores:
    """Metrics of the top ``k`` of ``ranked`` (message ids) against gold message ids/sessions.

    Turn level: recall-any (a gold turn in the top k), recall-all (every gold turn), fractional
    recall, NDCG. Session level: sessions ranked by their best turn; recall and NDCG of the
    first k sessions against the gold sessions.
    """
    turns = list(dict.fromkeys(ranked))
    top = turns[:k]
    hit = gold.intersection(top)
    sessions = list(dict.fromkeys(session_of[m] for m in turns if m in session_of))[:k]
    return Scores(
        recall_any=1.0 if hit else 0.0,
        recall_all=1.0 if hit == gold else 0.0,
        recall=len(hit) / len(gold) if gold else 0.0,
        session_recall=len(gold_sessions.intersection(sessions)) / len(gold_sessions)
        if gold_sessions else 0.0,
        ndcg=ndcg(top, gold, k),
        session_ndcg=ndcg(sessions, gold_sessions, k),
    )


@dataclass
class Tally:
    """Mean of each metric per (group, k); a group is "all" or a category."""

    sums: dict[tuple[str, int, str], float] = field(default_factory=lambda: defaultdict(float))
    counts: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def add(self, groups: Iterable[str], by_k: Mapping[int, Scores]) -> None:
        for group in groups:
            self.counts[group] += 1
            for k, scores in by_k.items():
                for name, value in vars(scores).items():
                    self.sums[(group, k, name)] += value

    def mean(self, group: str, k: int, metric: str) -> float:
        n = self.counts.get(group, 0)
        return self.sums.get((group, k, metric), 0.0) / n if n else 0.0

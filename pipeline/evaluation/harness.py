"""Run every route over a list of questions and tally the metrics side by side (one run)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pipeline.evaluation.metrics import Scores, Tally, score_ranking
from pipeline.retrieval import Searcher, SearchRequest

__all__ = ["EvalQuestion", "EvalReport", "run_questions"]

MAIN_GROUP = "all"  # the categories that count for the headline (LoCoMo: 1-4)


@dataclass(frozen=True)
class EvalQuestion:
    text: str
    category: str
    conversations: frozenset[str]
    gold: frozenset[str]  # message ids
    gold_sessions: frozenset[str]
    headline: bool = True  # counted in "all" (LoCoMo category 5 is reported apart)


@dataclass
class EvalReport:
    dataset: str
    ks: tuple[int, ...]
    routes: tuple[str, ...]
    questions: int = 0
    tallies: dict[str, Tally] = field(default_factory=dict)
    notes: dict[str, Any] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    def categories(self) -> list[str]:
        first = next(iter(self.tallies.values()), Tally())
        return sorted(g for g in first.counts if g != MAIN_GROUP)

    def as_json(self) -> dict[str, Any]:
        metrics = ("recall_any", "recall_all", "recall", "session_recall", "ndcg", "session_ndcg")
        routes: dict[str, Any] = {}
        for route, tally in self.tallies.items():
            entry: dict[str, Any] = {
                m: {str(k): round(tally.mean(MAIN_GROUP, k, m), 4) for k in self.ks}
                for m in metrics
            }
            entry["by_category"] = {
                c: {str(k): round(tally.mean(c, k, "recall_any"), 4) for k in self.ks}
                for c in self.categories()
            }
            entry["by_category_detail"] = {
                c: {m: {str(k): round(tally.mean(c, k, m), 4) for k in self.ks}
                    for m in metrics} for c in self.categories()
            }
            entry["seconds"] = round(self.seconds.get(route, 0.0), 2)
            routes[route] = entry
        first = next(iter(self.tallies.values()), Tally())
        return {"dataset": self.dataset, "questions": self.questions,
                "question_counts": dict(first.counts), "ks": list(self.ks),
                "routes": routes, "notes": self.notes}


def run_questions(
    searcher: Searcher, questions: Sequence[EvalQuestion], ks: Sequence[int],
    routes: Sequence[str], dataset: str, progress: Callable[[int, int], None] | None = None,
) -> EvalReport:
    """Each question searched by each route inside its own conversations; metrics at each k."""
    report = EvalReport(dataset, tuple(ks), tuple(routes))
    report.tallies = {route: Tally() for route in routes}
    session_of = {mid: row.session for mid, row in searcher.corpus.rows.items()}
    depth = max(ks)
    for n, q in enumerate(questions, start=1):
        request = SearchRequest(q.text, depth, q.conversations)
        groups = [q.category, MAIN_GROUP] if q.headline else [q.category]
        for route in routes:
            start = time.perf_counter()
            ranked = [f.message_id for f in searcher.rank(request, route)[:depth]]
            report.seconds[route] = report.seconds.get(route, 0.0) + time.perf_counter() - start
            by_k: dict[int, Scores] = {
                k: score_ranking(ranked, set(q.gold), session_of, set(q.gold_sessions), k)
                for k in ks
            }
            report.tallies[route].add(groups, by_k)
        report.questions += 1 if q.headline else 0
        if progress is not None:
            progress(n, len(questions))
    return report

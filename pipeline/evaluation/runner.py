"""`conceptmem eval`: build the store from a benchmark file, then run the harness on it."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

from pipeline.evaluation.harness import EvalQuestion, EvalReport, run_questions
from pipeline.evaluation.locomo import LocomoSet, load_locomo
from pipeline.retrieval import ROUTES, Corpus, Searcher
from pipeline.run import RunOptions, StageReport, run_pipeline
from pipeline.settings import Settings

__all__ = ["build_store", "evaluate_locomo", "evaluate_longmemeval", "locomo_questions"]

Say = Callable[[str], None]


def build_store(settings: Settings, path: Path, format_name: str, say: Say) -> None:
    """Ingest ``path`` and run the whole pipeline (idempotent: a built store changes nothing)."""
    def show(name: str, report: StageReport) -> None:
        say(f"{name}: {report.summary()}")

    run_pipeline(settings, RunOptions((path,), format_name, None), on_stage=show)


def locomo_questions(corpus: Corpus, data: LocomoSet) -> list[EvalQuestion]:
    """Questions mapped onto stored messages: each searches its own conversation only."""
    by_sample: dict[str, dict[str, str]] = defaultdict(dict)  # sample -> dia_id -> message id
    conv_of: dict[str, set[str]] = defaultdict(set)
    external = {row.conversation_id: row for row in corpus.rows.values()}
    samples = _sample_ids(corpus, set(external))
    for row in corpus.rows.values():
        sample = samples.get(row.conversation_id)
        if sample is not None:
            by_sample[sample][row.external_id] = row.id
            conv_of[sample].add(row.conversation_id)
    out = []
    for q in data.questions:
        ids = by_sample.get(q.sample_id, {})
        gold = frozenset(ids[e] for e in q.evidence if e in ids)
        if not gold:
            continue
        sessions = frozenset(corpus.rows[m].session for m in gold)
        out.append(EvalQuestion(q.question, q.category, frozenset(conv_of[q.sample_id]), gold,
                                sessions, headline=q.category != "5"))
    return out


def _sample_ids(corpus: Corpus, conversations: set[str]) -> dict[str, str]:
    """Conversation id -> its external id (the LoCoMo sample_id), read from the source db."""
    return corpus.external_ids(conversations)


def evaluate_locomo(settings: Settings, path: Path, ks: Sequence[int],
                    routes: Sequence[str] = ROUTES, say: Say = lambda _m: None,
                    progress: Callable[[int, int], None] | None = None) -> EvalReport:
    build_store(settings, path, "locomo", say)
    data = load_locomo(path)
    with Searcher(settings, progress=say) as searcher:
        questions = locomo_questions(searcher.corpus, data)
        report = run_questions(searcher, questions, ks, routes, f"locomo:{path.name}", progress)
    report.notes = {"skipped_questions": dict(data.skipped), "dropped_evidence_ids":
                    data.dropped_ids, "unmapped_questions": len(data.questions) - len(questions),
                    "headline": "categories 1-4; category 5 reported apart"}
    return report


def evaluate_longmemeval(settings: Settings, path: Path, ks: Sequence[int],
                         routes: Sequence[str] = ROUTES, say: Say = lambda _m: None,
                         progress: Callable[[int, int], None] | None = None) -> EvalReport:
    from pipeline.evaluation.longmemeval import evaluate

    return evaluate(settings, path, ks, routes, say, progress)

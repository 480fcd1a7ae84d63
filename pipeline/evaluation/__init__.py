"""Retrieval evaluation: LoCoMo and LongMemEval harnesses behind `conceptmem eval`."""

from pipeline.evaluation.harness import EvalQuestion, EvalReport, run_questions
from pipeline.evaluation.locomo import LocomoQuestion, LocomoSet, load_locomo, parse_evidence
from pipeline.evaluation.metrics import Scores, Tally, ndcg, score_ranking
from pipeline.evaluation.report import LOCOMO_REFERENCE, report_table
from pipeline.evaluation.runner import (
    build_store,
    evaluate_locomo,
    evaluate_longmemeval,
    locomo_questions,
)

__all__ = [
    "LOCOMO_REFERENCE",
    "EvalQuestion",
    "EvalReport",
    "LocomoQuestion",
    "LocomoSet",
    "Scores",
    "Tally",
    "build_store",
    "evaluate_locomo",
    "evaluate_longmemeval",
    "load_locomo",
    "locomo_questions",
    "ndcg",
    "parse_evidence",
    "report_table",
    "run_questions",
    "score_ranking",
]

"""LongMemEval (official JSON): each question searches its own haystack of sessions.

An item is ``{question_id, question_type, question, haystack_session_ids, haystack_dates,
haystack_sessions: [[{role, content, has_answer?}]], answer_session_ids}``. Every distinct
session is stored once as a conversation (its id as the external id, turns ``<session>:<i>``)
through the JSONL importer; a question's search is limited to its haystack's conversations.
Gold turns are those marked ``has_answer``; a question whose answer sessions mark none counts
every turn of those sessions. Abstention questions (``_abs`` in the id) are skipped.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from pipeline.errors import InputFileError
from pipeline.evaluation.files import read_json_list
from pipeline.evaluation.harness import EvalQuestion, EvalReport, run_questions
from pipeline.retrieval import ROUTES, Corpus, Searcher
from pipeline.settings import Settings

__all__ = ["LongMemItem", "evaluate", "load_longmemeval", "to_jsonl_lines"]


@dataclass(frozen=True)
class LongMemItem:
    question_id: str
    question_type: str
    question: str
    haystack: tuple[str, ...]
    answer_sessions: tuple[str, ...]
    answer_turns: tuple[str, ...]  # "<session>:<i>" of has_answer turns


@dataclass
class LongMemSet:
    items: list[LongMemItem] = field(default_factory=list)
    sessions: dict[str, tuple[str | None, list[dict[str, Any]]]] = field(default_factory=dict)
    skipped_abstention: int = 0


def _date(value: object) -> str | None:
    """'2023/05/20 (Sat) 02:21' -> ISO-8601 UTC (None if absent or unreadable)."""
    if not isinstance(value, str):
        return None
    cleaned = " ".join(p for p in value.split() if not p.startswith("("))
    for fmt in ("%Y/%m/%d %H:%M", "%Y/%m/%d", "%Y-%m-%d %H:%M", "%Y-%m-%d"):
        try:
            return datetime.strptime(cleaned, fmt).isoformat() + "+00:00"
        except ValueError:
            continue
    return None


def _item(path: Path, n: int, raw: Any, out: LongMemSet) -> None:
    if not isinstance(raw, dict) or not isinstance(raw.get("haystack_sessions"), list):
        raise InputFileError(str(path), f"item {n}", "no haystack_sessions list")
    qid = str(raw.get("question_id", n))
    ids = [str(s) for s in raw.get("haystack_session_ids") or []]
    sessions = raw["haystack_sessions"]
    if len(ids) != len(sessions):
        raise InputFileError(str(path), f"item {n} ({qid})",
                             "haystack_session_ids and haystack_sessions differ in length")
    dates = list(raw.get("haystack_dates") or [None] * len(ids))
    turns = []
    for sid, session, date in zip(ids, sessions, dates + [None] * len(ids), strict=False):
        out.sessions.setdefault(sid, (_date(date), [t for t in session if isinstance(t, dict)]))
        turns += [f"{sid}:{i}" for i, t in enumerate(session)
                  if isinstance(t, dict) and t.get("has_answer")]
    if "_abs" in qid:
        out.skipped_abstention += 1
        return
    out.items.append(LongMemItem(qid, str(raw.get("question_type", "")),
                                 str(raw.get("question", "")), tuple(ids),
                                 tuple(str(s) for s in raw.get("answer_session_ids") or []),
                                 tuple(turns)))


def load_longmemeval(path: Path) -> LongMemSet:
    data = read_json_list(path, "LongMemEval", "questions")
    out = LongMemSet()
    for n, raw in enumerate(data):
        _item(path, n, raw, out)
    return out


def to_jsonl_lines(data: LongMemSet) -> list[str]:
    """The sessions as JSONL message lines (one conversation per session)."""
    lines = []
    for sid, (date, turns) in data.sessions.items():
        for i, turn in enumerate(turns):
            line = {"conversation_id": sid, "id": f"{sid}:{i}",
                    "role": str(turn.get("role") or "user"), "content": str(turn.get("content")
                                                                           or "")}
            if date:
                line["timestamp"] = date
            lines.append(json.dumps(line, ensure_ascii=False))
    return lines


def _questions(corpus: Corpus, data: LongMemSet) -> list[EvalQuestion]:
    conv_by_session = {ext: cid for cid, ext in corpus.conversation_external.items()}
    turn_ids = {(corpus.conversation_external.get(r.conversation_id), r.external_id): r.id
                for r in corpus.rows.values()}
    out = []
    for item in data.items:
        convs = frozenset(conv_by_session[s] for s in item.haystack if s in conv_by_session)
        gold = {turn_ids[(t.rsplit(":", 1)[0], t)] for t in item.answer_turns
                if (t.rsplit(":", 1)[0], t) in turn_ids and t.rsplit(":", 1)[0]
                in item.answer_sessions}
        if not gold:
            gold = {r.id for r in corpus.rows.values()
                    if corpus.conversation_external.get(r.conversation_id)
                    in item.answer_sessions}
        if not gold:
            continue
        sessions = frozenset(corpus.rows[m].session for m in gold)
        out.append(EvalQuestion(item.question, item.question_type, convs, frozenset(gold),
                                sessions))
    return out


def evaluate(settings: Settings, path: Path, ks: Sequence[int], routes: Sequence[str] = ROUTES,
             say: Callable[[str], None] = lambda _m: None,
             progress: Callable[[int, int], None] | None = None) -> EvalReport:
    from pipeline.evaluation.runner import build_store

    data = load_longmemeval(path)
    with tempfile.TemporaryDirectory(prefix="conceptmem-lme-") as tmp:
        lines = Path(tmp) / f"{path.stem}.jsonl"
        lines.write_text("\n".join(to_jsonl_lines(data)) + "\n", encoding="utf-8")
        build_store(settings, lines, "jsonl", say)
    with Searcher(settings, progress=say) as searcher:
        questions = _questions(searcher.corpus, data)
        report = run_questions(searcher, questions, ks, routes, f"longmemeval:{path.name}",
                               progress)
    report.notes = {"skipped_abstention": data.skipped_abstention,
                    "unmapped_questions": len(data.items) - len(questions)}
    return report

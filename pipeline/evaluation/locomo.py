"""LoCoMo questions with their gold evidence, cleaned of the file's known oddities (pure).

Evidence strings may hold several ids ("D8:6; D9:17"), malformed ids ("D", "D:11:26"), ids
that name no turn of the conversation, or nothing at all. Each id is read as ``D<s>:<t>``
(an extra colon after the D is tolerated); ids that still do not parse or name no turn are
dropped and counted; a question left without evidence is skipped and counted. Answers may be
integers; category 5 items have ``adversarial_answer`` instead of ``answer``.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.errors import InputFileError
from pipeline.evaluation.files import read_json_list

__all__ = ["LocomoQuestion", "LocomoSet", "load_locomo", "parse_evidence"]

_DIA = re.compile(r"D:?(\d+):(\d+)")


@dataclass(frozen=True)
class LocomoQuestion:
    sample_id: str
    index: int
    question: str
    category: str
    evidence: tuple[str, ...]  # dia_ids present in the conversation


@dataclass
class LocomoSet:
    questions: list[LocomoQuestion] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)  # reason -> count
    dropped_ids: int = 0


def parse_evidence(values: object) -> list[str]:
    """Every ``D<s>:<t>`` id in an evidence list, in order, each once."""
    items = values if isinstance(values, list) else [values] if values else []
    found: list[str] = []
    for item in items:
        for s, t in _DIA.findall(str(item)):
            found.append(f"D{int(s)}:{int(t)}")
    return list(dict.fromkeys(found))


def _turn_ids(conversation: dict[str, Any]) -> set[str]:
    ids: set[str] = set()
    for key, turns in conversation.items():
        if key.startswith("session_") and isinstance(turns, list):
            ids.update(str(t.get("dia_id")) for t in turns if isinstance(t, dict))
    return ids


def load_locomo(path: Path) -> LocomoSet:
    """All QA items of a LoCoMo file, evidence cleaned (see the module docstring)."""
    data = read_json_list(path, "LoCoMo", "LoCoMo samples")
    out = LocomoSet()
    for n, sample in enumerate(data):
        if not isinstance(sample, dict) or not isinstance(sample.get("conversation"), dict):
            raise InputFileError(str(path), f"sample {n}", "no conversation object")
        known = _turn_ids(sample["conversation"])
        for i, qa in enumerate(sample.get("qa") or []):
            raw = parse_evidence(qa.get("evidence"))
            kept = tuple(e for e in raw if e in known)
            out.dropped_ids += len(raw) - len(kept)
            if not kept:
                out.skipped["no usable evidence"] += 1
                continue
            out.questions.append(LocomoQuestion(str(sample.get("sample_id")), i,
                                                str(qa.get("question") or ""),
                                                str(qa.get("category")), kept))
    return out

"""Settling a parsed record: undoing the stream edits of the guard's reader.

The reader marks what it changed with tagged strings (a per-file random token, so no export
can forge one): a cut too-deep value, a lone surrogate, a number yajl could not hold.
:func:`settle` walks one record and finds them: cut values make the record a quarantine case,
tagged numbers become the exact int or float again, lone surrogates (tagged, or left in the
strings by ``json.loads``) become U+FFFD and are listed with their JSON path.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from pipeline.importers.guard import Edits

__all__ = ["Settled", "settle"]

_LONE = re.compile("[\ud800-\udfff]")


@dataclass
class Settled:
    """A record after :func:`settle`: the value, whether a value was cut, what was replaced."""

    value: object
    cuts: int = 0
    cut_at: int | None = None  # file offset of the first cut value
    numbers: int = 0  # tagged numbers turned back into numbers
    repairs: list[tuple[str, str]] = field(default_factory=list)  # (path, what was done)


def _fixer(edits: Edits | None) -> Callable[[str], tuple[str, list[str]]]:
    if edits is None:
        pattern = _LONE

        def found(match: re.Match[str]) -> str:
            return f"\\u{ord(match.group()):04x}"
    else:
        pattern = re.compile("\ue000" + edits.token + "([0-9a-fA-F]{4})")

        def found(match: re.Match[str]) -> str:
            return "\\u" + match.group(1).lower()

    def fix(text: str) -> tuple[str, list[str]]:
        notes: list[str] = []
        shift = 0  # how much shorter the text before this match has become

        def replace(match: re.Match[str]) -> str:
            nonlocal shift
            notes.append(f"lone surrogate {found(match)} at offset {match.start() - shift}")
            shift += len(match.group()) - 1
            return "\ufffd"

        return pattern.sub(replace, text), notes

    return fix


def settle(value: object, edits: Edits | None = None) -> Settled:
    """Find cut placeholders and lone surrogates in one parsed record.

    ``edits`` is the reader's :attr:`GuardedReader.edits` (ijson) or None (``json.loads``,
    whose strings hold the lone surrogates themselves). Each lone surrogate becomes U+FFFD and
    is listed in ``repairs`` with its JSON path, code point and offset. With ``edits``, the
    record is first checked for the reader's token in its C-encoded JSON: a record without it
    is returned as it is, and one with a cut value is not walked (it will be quarantined).
    """
    if edits is None:
        settled = Settled(value)
        settled.value = _walk(value, "$", _fixer(None), None, settled)
        return settled
    text = json.dumps(value, ensure_ascii=False, default=str)
    marks = text.count("\ue000" + edits.token)
    if not marks:
        return Settled(value)
    cuts, numbers = text.count(edits.cut_text), text.count(edits.number_prefix)
    edits.surrogates = max(0, edits.surrogates - (marks - cuts - numbers))
    edits.numbers = max(0, edits.numbers - numbers)
    if cuts:
        at = edits.cuts[0] if edits.cuts else None
        del edits.cuts[:cuts]
        return Settled(value, cuts=cuts, cut_at=at)
    settled = Settled(value)
    settled.value = _walk(value, "$", _fixer(edits), edits, settled)
    return settled


def _number(literal: str) -> int | float:
    """The value json.loads gives a number literal (ints are exact, 1e400 is inf)."""
    if not any(c in literal for c in ".eE"):
        try:
            return int(literal)
        except ValueError:  # more digits than int() reads from text
            pass
    return float(literal)


def _walk(
    value: object, path: str, fix: Callable[[str], tuple[str, list[str]]],
    edits: Edits | None, settled: Settled,
) -> object:
    if isinstance(value, str):
        if edits is not None and value.startswith("\ue000" + edits.token):
            if value == edits.cut_text:
                settled.cuts += 1
                return value
            if value.startswith(edits.number_prefix):
                settled.numbers += 1
                return _number(value[len(edits.number_prefix):])
        fixed, notes = fix(value)
        settled.repairs.extend((path, f"{note} replaced by U+FFFD") for note in notes)
        return fixed
    if isinstance(value, list):
        return [_walk(item, f"{path}[{i}]", fix, edits, settled)
                for i, item in enumerate(value)]
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            new_key = fix(key)[0] if isinstance(key, str) else key
            if new_key != key:
                settled.repairs.extend((f"{path}.<key>", f"{note} replaced by U+FFFD")
                                       for note in fix(key)[1])
            out[new_key] = _walk(item, f"{path}.{new_key}", fix, edits, settled)
        return out
    return value

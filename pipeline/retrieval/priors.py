"""Structure priors read from the query (pure): speakers it names, time windows it mentions.

Speaker names come from the store (the authors of the messages in scope), never from a list
fitted to a dataset. Time expressions understood: a month with or without a year ("in May
2023", "May"), a year ("2022"), and "last year"/"last month"/"this year" relative to the
newest message in scope.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

__all__ = ["QueryPriors", "TimeWindow", "read_priors", "strip_names"]

_MONTH_NAMES = ("january", "february", "march", "april", "may", "june", "july", "august",
                "september", "october", "november", "december")
_MONTHS = {name: i for i, name in enumerate(_MONTH_NAMES, start=1)}
_MONTHS.update({name[:3]: i for name, i in list(_MONTHS.items())})
_MONTH_RE = re.compile(r"\b(" + "|".join(sorted(_MONTHS, key=len, reverse=True))
                       + r")\b\.?(?:,?\s+(\d{4}))?", re.IGNORECASE)
_YEAR_RE = re.compile(r"\b(19\d{2}|20\d{2})\b")
_RELATIVE_RE = re.compile(r"\b(last|this|past)\s+(year|month)\b", re.IGNORECASE)
_WORD_RE = re.compile(r"[\w'’]+", re.UNICODE)


@dataclass(frozen=True)
class TimeWindow:
    """A span of message time (ISO strings, inclusive start, exclusive end) or a month."""

    start: str | None = None
    end: str | None = None
    month: int | None = None  # any year

    def contains(self, created_at: str | None) -> bool:
        if created_at is None:
            return False
        if self.month is not None:
            return int(created_at[5:7]) == self.month
        return (self.start is None or created_at >= self.start) and (
            self.end is None or created_at < self.end)


@dataclass(frozen=True)
class QueryPriors:
    speakers: tuple[str, ...] = ()  # case-folded author names the query mentions
    windows: tuple[TimeWindow, ...] = ()


def _possessive(word: str) -> str:
    w = word.casefold().replace("’", "'")
    return w[:-2] if w.endswith("'s") else w.rstrip("'")


def _name_words(name: str) -> set[str]:
    """The words of a speaker's name that identify it ("Ana Lima" -> {"ana", "lima"})."""
    return {_possessive(w) for w in _WORD_RE.findall(name) if len(w) > 1}


def strip_names(text: str, names: Iterable[str]) -> str:
    """The query without the named speakers (their names dominate dense similarity)."""
    drop = {w for n in names for w in _name_words(n)}
    if not drop:
        return text
    kept = [w for w in _WORD_RE.findall(text) if _possessive(w) not in drop]
    return " ".join(kept) or text


def _month_window(month: int, year: int | None) -> TimeWindow:
    if year is None:
        return TimeWindow(month=month)
    start = datetime(year, month, 1).isoformat()
    end = (datetime(year + 1, 1, 1) if month == 12 else datetime(year, month + 1, 1)).isoformat()
    return TimeWindow(start, end)


def _is_month(match: re.Match[str], names: set[str]) -> bool:
    word = match.group(1)
    if word.casefold() in names:
        return False
    return word.casefold() != "may" or bool(match.group(2)) or word[0] == "M"


def _windows(text: str, newest: str | None, names: set[str]) -> list[TimeWindow]:
    found = [_month_window(_MONTHS[m.group(1).casefold()], int(m.group(2)) if m.group(2)
                           else None) for m in _MONTH_RE.finditer(text) if _is_month(m, names)]
    if not found:
        found = [TimeWindow(f"{y}-01-01", f"{int(y) + 1}-01-01") for y in _YEAR_RE.findall(text)]
    if newest and not found:
        for rel, unit in _RELATIVE_RE.findall(text):
            year, month = int(newest[:4]), int(newest[5:7])
            if unit.casefold() == "year":
                y = year - 1 if rel.casefold() == "last" else year
                found.append(TimeWindow(f"{y}-01-01", f"{y + 1}-01-01"))
            else:
                m = month - 1 or 12 if rel.casefold() == "last" else month
                found.append(_month_window(m, year if m <= month else year - 1))
    return found


def read_priors(text: str, speakers: Iterable[str], newest: str | None) -> QueryPriors:
    """Speakers (from ``speakers``, case-folded) named in ``text``; its time windows."""
    names = {s.casefold() for s in speakers if s}
    words = {_possessive(w) for w in _WORD_RE.findall(text)}
    named = tuple(sorted(n for n in names if _name_words(n) & words))
    taken = {w for n in named for w in _name_words(n)}
    return QueryPriors(named, tuple(_windows(text, newest, taken)))

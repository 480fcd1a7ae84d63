"""Sentence spans over message text, with code masked out, and title clean-up.

Offsets always index the original message text, so every quote cut from a span is a verbatim
substring of the message.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["MAX_QUOTE_CHARS", "Span", "clean_title", "mask_code", "quote_around", "sentences"]

MAX_QUOTE_CHARS = 280
MAX_TITLE_WORDS = 6

_FENCE = re.compile(
    r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)|`[^`\n]{1,200}`|</?[A-Za-z!][^<>\n]{0,200}>", re.S
)
_BOUNDARY = re.compile(r"[.!?…]+(?=[\s\"')\]]|$)|\n")
_CLAUSE_CUT = re.compile(
    r"[,;:()\[\]{}\"“”«»]|\s[-–—]\s|\s(?:and|or|but) (?:I|I'm|I’m|I've)\s"
    r"|\s(?:because|so that|since|but|and then|which|while|"
    r"although|whereas|porque|pero|aunque|parce que|mais|weil|aber|obwohl|mas|embora)\s",
    re.I,
)


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


_EDGE_WORDS = _word_set(
    "a an the my our your his her their this that these those to of for and or in on at with by"
    " from as about into it is are be so just really also very more some any"
    " un una unos unas el la los las mi mis de del y o en con por para"
    " le les des du et ou mon ma mes au aux pour avec dans"
    " der die das ein eine einen mein meine und oder mit für zu im am"
    " o os as um uma meu minha meus e ou com em no na do da"
)


@dataclass(frozen=True)
class Span:
    start: int
    end: int


def mask_code(text: str) -> str:
    """Code blocks and inline code become newlines, markup tags spaces (same length)."""
    return _FENCE.sub(_blank, text)


def _blank(match: re.Match[str]) -> str:
    """Code ends a sentence (newlines); a markup tag is only hidden (spaces)."""
    found = match.group(0)
    return (" " if found.startswith("<") else "\n") * len(found)


def sentences(text: str) -> Iterator[Span]:
    """Trimmed sentence spans of the text, code excluded."""
    masked = mask_code(text)
    start = 0
    for boundary in _BOUNDARY.finditer(masked):
        end = boundary.end() if boundary.group(0) != "\n" else boundary.start()
        span = _trim(masked, start, end)
        if span is not None:
            yield span
        start = boundary.end()
    span = _trim(masked, start, len(masked))
    if span is not None:
        yield span


def _trim(text: str, start: int, end: int) -> Span | None:
    while start < end and (text[start].isspace() or text[start] in "-*•>#"):
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return Span(start, end) if end - start >= 3 else None


def quote_around(text: str, sentence: Span, at: int) -> Span:
    """The sentence, or a clause of it starting near ``at`` when the sentence is too long."""
    if sentence.end - sentence.start <= MAX_QUOTE_CHARS:
        return sentence
    start = max(sentence.start, at)
    end = min(sentence.end, start + MAX_QUOTE_CHARS)
    if end < sentence.end:
        cut = text.rfind(" ", start + 1, end)
        end = cut if cut > start else end
    while end > start and text[end - 1].isspace():
        end -= 1
    return Span(start, end)


def clean_title(phrase: str, max_words: int = MAX_TITLE_WORDS, strip_leading: bool = False) -> str:
    """A short name from a captured phrase: first clause, a few words, no dangling words."""
    head = _CLAUSE_CUT.split(phrase, maxsplit=1)[0]
    words = [w.strip(".,;:!?'\"`*_") for w in head.split()]
    words = [w for w in words if w]
    while strip_leading and words and words[0].casefold() in _EDGE_WORDS:
        words.pop(0)
    words = words[:max_words]
    while words and words[-1].casefold() in _EDGE_WORDS:
        words.pop()
    return " ".join(words)

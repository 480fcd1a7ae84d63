"""Keyphrases with YAKE (statistical, no model) and a cheap stopword-based language guess."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

__all__ = ["Keyphrase", "guess_language", "keyphrases", "stopwords"]

_WORD = re.compile(r"[^\W\d_][\w'’-]*", re.U)
_MAX_CHARS = 12_000
_LANGS = ("en", "es", "fr", "de", "pt", "it", "nl")
_ELIDED = re.compile(r"(?:[jldcnmst]|qu)['’]", re.I)  # j'ai, l'école, qu'il: function words
_WEAK_SUFFIXES = ("ing", "ed", "ly", "ful", "ous", "ive", "ble", "ent", "ant")
_SENTENCE_STARTERS = frozenset(".!?…:;\n\"'“(-*#>")

Keyphrase = tuple[str, float]


def _stopword_dir() -> Path:
    import yake

    return Path(yake.__file__).parent / "core" / "StopwordsList"


@cache
def stopwords(lang: str) -> frozenset[str]:
    """YAKE's stopword list for ``lang`` (empty when YAKE has none)."""
    path = _stopword_dir() / f"stopwords_{lang}.txt"
    if not path.exists():
        return frozenset()
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    return frozenset(w.strip() for w in text.lower().splitlines() if w.strip())


def guess_language(text: str) -> str:
    """The language whose stopwords cover most words; 'en' when unclear (too little text)."""
    words = [w.lower() for w in _WORD.findall(text[:4000])]
    if len(words) < 3:
        return "en"
    scores = {lang: sum(1 for w in words if w in stopwords(lang)) for lang in _LANGS}
    best = max(_LANGS, key=lambda lang: (scores[lang], lang == "en"))
    return best if scores[best] >= max(2, len(words) // 20) else "en"


@cache
def _extractor(lang: str, top: int) -> object:
    import yake

    return yake.KeywordExtractor(
        lan=lang, n=3, top=top, dedup_lim=0.8, stopwords=set(stopwords(lang))
    )


def keyphrases(text: str, lang: str, top: int = 10) -> list[Keyphrase]:
    """Up to ``top`` keyphrases, best first, filtered to plausible names."""
    sample = text[:_MAX_CHARS]
    if len(_WORD.findall(sample)) < 3:
        return []
    try:
        found = _extractor(lang, top * 3).extract_keywords(sample)  # type: ignore[attr-defined]
    except Exception:  # YAKE is a heuristic library; a failure must not stop extraction
        return []
    stops = stopwords(lang) | stopwords("en")
    kept: dict[str, Keyphrase] = {}
    for phrase, score in found:
        for run in _runs(str(phrase), stops):
            if _plausible(run) and _single_word_ok(run, sample):
                kept.setdefault(run.casefold(), (run, float(score)))
    return _drop_subsumed(list(kept.values()))[:top]


def _drop_subsumed(phrases: list[Keyphrase]) -> list[Keyphrase]:
    """"input tokens" goes when "million input tokens" is there; single names stay."""
    padded = [f" {p.casefold()} " for p, _ in phrases]
    return [
        (phrase, score)
        for (phrase, score), mine in zip(phrases, padded, strict=True)
        if not (" " in phrase or phrase.islower())
        or not any(mine in other and mine != other for other in padded)
    ]


def _runs(phrase: str, stops: frozenset[str]) -> list[str]:
    """The stopword-free runs of words of a YAKE n-gram ("lives in Lisbon" -> lives, Lisbon)."""
    runs: list[list[str]] = [[]]
    for word in phrase.split():
        if word.lower() in stops or _ELIDED.match(word):
            runs.append([])
        else:
            runs[-1].append(word)
    return [" ".join(run) for run in runs if run]


def _single_word_ok(word: str, text: str) -> bool:
    """Single words: a name used mid-sentence, an acronym, or a noun the text keeps using."""
    if " " in word or any(ch.isupper() for ch in word[1:]) or any(ch.isdigit() for ch in word):
        return True
    if word[0].isupper():  # "Lisbon" yes; "Life" (only ever capitalised at a start) no
        return any(_mid_sentence(text, m.start()) for m in _exact(word).finditer(text))
    if word.endswith(_WEAK_SUFFIXES):
        return False
    return len(re.findall(rf"(?<!\w){re.escape(word)}(?!\w)", text, re.I)) >= 3


def _exact(word: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w){re.escape(word)}(?!\w)")


def _mid_sentence(text: str, at: int) -> bool:
    before = text[:at].rstrip()
    return bool(before) and before[-1] not in _SENTENCE_STARTERS


def _plausible(phrase: str) -> bool:
    words = phrase.split()
    if not words or len(phrase) > 60 or not all(_WORD.fullmatch(w) for w in words):
        return False
    if len(words) > 1:
        return True
    word = words[0]
    return any(ch.isupper() for ch in word) or len(word) >= 6

"""Stopword lists (shipped in the YAKE wheel) and a cheap stopword-based language guess.

YAKE's keyphrase ranking itself is no longer used: offline:v2 builds candidates from token
rules (``pipeline.offline.phrases``), which covered more sentences with less junk on the
labelled set (benchmarks/extraction_quality.py, offline:v1 = YAKE vs offline:v2).
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

__all__ = ["guess_language", "stopwords"]

_WORD = re.compile(r"[^\W\d_][\w'’-]*", re.U)
_LANGS = ("en", "es", "fr", "de", "pt", "it", "nl")


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

"""Topic labels from class-based TF-IDF (c-TF-IDF) keywords of the member concepts' texts.

All documents of one class (topic) are joined into one; a term's weight in class ``c`` is
``tf(t, c) * log(1 + A / f(t))`` where ``tf`` is the term's frequency in the class normalised by
the class length, ``A`` the average number of words per class and ``f(t)`` the term's frequency
over all classes (BERTopic's formulation). Ties break alphabetically, so labels are deterministic.
Terms that occur in at least two of the class's documents rank before the others: a word from
one concept's quote describes that concept, not the topic.

Stop words: every language found in the documents (py3langid, restricted to the languages that
stopwordsiso has a list for, on documents of at least ``MIN_DETECT_WORDS`` words) contributes
its stopwords-iso list; a language counts when it is the language of at least ``MIN_LANG_SHARE``
of the detected documents. ``FALLBACK_STOP`` (a small English + Spanish list) is always included,
so short titles that escape detection still lose their articles. Both libraries ship their data
in their wheels (nothing is downloaded) and are imported lazily.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = [
    "FALLBACK_STOP",
    "MIN_DETECT_WORDS",
    "MIN_LANG_SHARE",
    "STOP_WORDS",
    "ctfidf_keywords",
    "detect_languages",
    "label_from_keywords",
    "stop_words_for",
    "tokenize",
]

_TOKEN = re.compile(r"[^\W\d_][\w'-]*[^\W_]|[^\W\d_]", re.UNICODE)

#: A small English + Spanish stop list, used with every detected language's list.
_STOP = """a an and are as at be but by for from has have how i in into is it its me my of on or our
so that the their them then there these they this to was we what when which who will with
you your not no do does did can about over more most very also just than too via per
el la los las de del y en un una unos unas que por para con se su sus al lo es como"""
FALLBACK_STOP = frozenset(_STOP.split())
STOP_WORDS = FALLBACK_STOP  # kept for callers of the previous API

#: Documents shorter than this many words are not language-detected (too little signal).
MIN_DETECT_WORDS = 4
#: A language's share of the detected documents from which its stop words apply.
MIN_LANG_SHARE = 0.05


def _words(text: str) -> list[str]:
    return [match.group(0).casefold() for match in _TOKEN.finditer(text)]


def tokenize(text: str, stop: frozenset[str] = FALLBACK_STOP) -> list[str]:
    return [word for word in _words(text) if len(word) > 1 and word not in stop]


@lru_cache(maxsize=1)
def _identifier() -> Any:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=False)
    identifier.set_languages(sorted(set(identifier.nb_classes) & _stop_languages()))
    return identifier


@lru_cache(maxsize=1)
def _stop_languages() -> frozenset[str]:
    import stopwordsiso

    return frozenset(stopwordsiso.langs())


@lru_cache(maxsize=64)
def _stop_list(language: str) -> frozenset[str]:
    import stopwordsiso

    return frozenset(word.casefold() for word in stopwordsiso.stopwords(language))


def detect_languages(texts: Iterable[str], min_share: float = MIN_LANG_SHARE) -> list[str]:
    """ISO 639-1 codes of the languages of at least ``min_share`` of the detectable texts."""
    counts: Counter[str] = Counter()
    identifier = None
    for text in texts:
        if len(_words(text)) < MIN_DETECT_WORDS:
            continue
        identifier = identifier or _identifier()
        counts[str(identifier.classify(text)[0])] += 1
    total = sum(counts.values())
    return sorted(lang for lang, n in counts.items() if total and n / total >= min_share)


def stop_words_for(texts: Iterable[str]) -> frozenset[str]:
    """The fallback list plus the stopwords-iso list of every language found in ``texts``."""
    words = set(FALLBACK_STOP)
    for language in detect_languages(texts):
        words |= _stop_list(language)
    return frozenset(words)


def ctfidf_keywords(
    class_docs: Sequence[Sequence[str]], top_n: int = 5, stop: frozenset[str] | None = None
) -> list[list[str]]:
    """The ``top_n`` keywords of each class, in order of c-TF-IDF weight.

    ``stop`` None detects the languages of the documents (``stop_words_for``).
    """
    if stop is None:
        stop = stop_words_for(doc for docs in class_docs for doc in docs)
    counts = [Counter(token for doc in docs for token in tokenize(doc, stop))
              for docs in class_docs]
    vocab = sorted(set().union(*counts)) if counts else []
    if not vocab:
        return [[] for _ in class_docs]
    index = {term: i for i, term in enumerate(vocab)}
    tf = np.zeros((len(counts), len(vocab)), dtype=np.float64)
    for row, counter in enumerate(counts):
        for term, count in counter.items():
            tf[row, index[term]] = count
    words_per_class = tf.sum(axis=1)
    avg_words = float(words_per_class.mean()) or 1.0
    idf = np.log(1.0 + avg_words / tf.sum(axis=0))
    weights = tf / np.maximum(words_per_class, 1.0)[:, None] * idf[None, :]
    spread = _spread(class_docs, stop, index)
    keywords = []
    for row in range(len(counts)):
        present = np.flatnonzero(tf[row] > 0).tolist()
        order = sorted(present, key=lambda i, r=row: (
            bool(spread[r][i] < 2), -weights[r, i], vocab[i]))
        keywords.append([vocab[i] for i in order[:top_n]])
    return keywords


def _spread(class_docs: Sequence[Sequence[str]], stop: frozenset[str],
            index: dict[str, int]) -> list[npt.NDArray[np.int64]]:
    """Per class, in how many of its documents each term occurs."""
    out = []
    for docs in class_docs:
        row = np.zeros(len(index), dtype=np.int64)
        for doc in docs:
            for term in set(tokenize(doc, stop)):
                row[index[term]] += 1
        out.append(row)
    return out


def label_from_keywords(keywords: Sequence[str], size: int = 3) -> str:
    """``"kw1, kw2, kw3"``, or ``"unlabelled"`` when a topic has no keyword."""
    return ", ".join(keywords[:size]) if keywords else "unlabelled"

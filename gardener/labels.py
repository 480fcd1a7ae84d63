"""Topic labels from class-based TF-IDF (c-TF-IDF) keywords of the member concepts' texts.

All documents of one class (topic) are joined into one; a term's weight in class ``c`` is
``tf(t, c) * log(1 + A / f(t))`` where ``tf`` is the term's frequency in the class normalised by
the class length, ``A`` the average number of words per class and ``f(t)`` the term's frequency
over all classes (BERTopic's formulation). Ties break alphabetically, so labels are deterministic.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

__all__ = ["STOP_WORDS", "ctfidf_keywords", "label_from_keywords", "tokenize"]

_TOKEN = re.compile(r"[^\W\d_][\w'-]*[^\W_]|[^\W\d_]", re.UNICODE)

#: A small English + Spanish stop list: titles are short, so a big list would eat the signal.
_STOP = """a an and are as at be but by for from has have how i in into is it its me my of on or our
so that the their them then there these they this to was we what when which who will with
you your not no do does did can about over more most very also just than too via per
el la los las de del y en un una unos unas que por para con se su sus al lo es como"""
STOP_WORDS = frozenset(_STOP.split())


def tokenize(text: str) -> list[str]:
    words = (match.group(0).casefold() for match in _TOKEN.finditer(text))
    return [word for word in words if len(word) > 1 and word not in STOP_WORDS]


def ctfidf_keywords(class_docs: Sequence[Sequence[str]], top_n: int = 5) -> list[list[str]]:
    """The ``top_n`` keywords of each class, in order of c-TF-IDF weight."""
    counts = [Counter(token for doc in docs for token in tokenize(doc)) for docs in class_docs]
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
    keywords = []
    for row in range(len(counts)):
        order = sorted(
            (i for i in range(len(vocab)) if tf[row, i] > 0),
            key=lambda i, r=row: (-weights[r, i], vocab[i]),
        )
        keywords.append([vocab[i] for i in order[:top_n]])
    return keywords


def label_from_keywords(keywords: Sequence[str], size: int = 3) -> str:
    """``"kw1, kw2, kw3"``, or ``"unlabelled"`` when a topic has no keyword."""
    return ", ".join(keywords[:size]) if keywords else "unlabelled"

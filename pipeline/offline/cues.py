"""Cue words that type a plain first-person sentence: event, habit, plan, opinion, work, conflict.

The phrase patterns catch explicit phrasings ("my goal is", "I'm torn between"); these cues type
the rest of what people say about themselves, so that a sentence's main noun phrase becomes a
``goal``, ``event``... rather than a bare ``entity``. First match in a fixed order wins.
"""

from __future__ import annotations

import re

from ontology import ConceptType

__all__ = ["sentence_type"]


def _any(*words: str) -> str:
    return r"(?<!\w)(?:" + "|".join(words) + r")(?!\w)"


_SOURCES: tuple[tuple[ConceptType, str], ...] = (
    ("tension", _any(
        r"torn", r"struggl\w*", r"overwhelm\w*", r"stressed", r"conflict\w*", r"can'?t decide",
        r"hard to balance", r"juggl\w*", r"swamped", r"worried", r"anxious",
    )),
    ("goal", _any(
        r"going to", r"gonna", r"plan(?:ning|s)? to", r"want to", r"hope to", r"hoping to",
        r"would love to", r"dream\w*", r"someday", r"one day", r"next (?:week|month|year)",
        r"goal", r"aim\w* to", r"looking forward", r"can'?t wait", r"i'?ll", r"will",
        r"wil(?:t|len)?", r"quiero", r"je veux", r"ich will",
    )),
    ("event", _any(
        r"yesterday", r"last (?:week|weekend|month|year|night|friday|saturday|sunday)",
        r"ago", r"just (?:got|had|finished|went|came|started|moved)", r"recently",
        r"went", r"got", r"had", r"took", r"visited", r"finished", r"attended", r"met",
        r"won", r"lost", r"bought", r"adopted", r"gisteren", r"vorige week", r"ayer", r"hier",
    )),
    ("behavioral_pattern", _any(
        r"usually", r"always", r"often", r"every (?:day|morning|evening|week|weekend|night)",
        r"regularly", r"habit", r"routine", r"i'?ve been \w+ing", r"i love \w+ing",
        r"i enjoy", r"i like to", r"hobby", r"in my free time", r"keeps? me", r"altijd",
        r"elke dag", r"vaak",
    )),
    ("belief", _any(
        r"i think", r"i believe", r"i feel (?:like|that)", r"in my opinion", r"i'?m sure",
        r"important", r"should", r"matters?", r"worth it", r"ik denk", r"ik vind",
    )),
    ("project", _any(
        r"working on", r"building", r"my (?:project|startup|business|book|thesis|app|company)",
        r"side project", r"launch\w*", r"develop\w*",
    )),
)
_CUES = tuple((family, re.compile(source, re.I)) for family, source in _SOURCES)


def sentence_type(sentence: str) -> ConceptType:
    """The ontology type a first-person sentence's main phrase gets; ``entity`` by default."""
    for family, regex in _CUES:
        if regex.search(sentence):
            return family
    return "entity"

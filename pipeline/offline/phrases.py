"""Noun-phrase candidates from token rules, and the junk filter.

A candidate is a run of content words inside one sentence: runs break at function words (YAKE's
stopword list for the language plus pronouns, auxiliaries and light verbs), punctuation and
code. Words are lemmatised with simplemma (its data ships in the wheel) to spot bare verbs and
to compare phrases. ``junk_reason`` says why a phrase is not worth remembering: a generic word,
a bare verb or adjective, a UI string, a code identifier, a markup or template token, or a
fragment that ends in a function word. Offsets index the sentence text, so a candidate can
always be located verbatim.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import simplemma

from pipeline.offline.keyphrases import stopwords

__all__ = ["Candidate", "candidates", "function_words", "junk_reason", "lemma"]

_TOKEN = re.compile(r"[^\W_][\w'’&+.-]*[\w+]|[^\W_]", re.U)
_MAX_WORDS = 4


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words that are never the head of a memorable phrase, on top of YAKE's stopwords.
_EXTRA_FUNCTION = {
    "en": _words(
        "i i'm i’m im i've i’ve i'd i’d i'll i’ll me my mine myself you you're you’re your yours"
        " we we're our us they them their it it's it’s its he she him her his hers there here"
        " what's that's let's don't doesn't didn't can't won't isn't aren't wasn't"
        " is are was were be been being am do does did done have has had having get got getting"
        " go going gone went make made making take took let lets want wanted need needed"
        " know knew think thought feel felt like liked love loved see saw seen say said tell told"
        " try tried trying give gave come came keep kept put use used using seem seems look"
        " looks looking sounds sound mean means meant guess hope"
        " also just really very so too still even maybe probably actually definitely totally"
        " always never often usually sometimes lot lots bit kind sort thing things stuff way"
        " something anything everything nothing someone anyone everyone yeah yes no ok okay"
        " hey hi hello thanks thank please sure oh wow haha lol"
        " can could would should will shall may might must"
        " yesterday today tomorrow tonight ago last next recently lately soon now then"
        " week weeks weekend weekends month months year years night day days"
        " one two three four five six seven eight nine ten eleven twelve fifteen twenty"
        " eighteen hundred thousand"
    ),
    "nl": _words(
        "ik je jij u we wij ze zij hij het mijn jouw uw ons onze hun is zijn was waren ben bent"
        " heb hebt heeft hebben had kan kun kunt kunnen wil wilt willen moet moeten zou zouden"
        " graag even ook nog wel niet geen maar dus dan als hoe wat waar wie hieronder"
        " hierboven één welke deze dit die daar hier gewoon echt heel erg"
    ),
}

# Generic nouns and chat words: memorable only inside a longer phrase.
_GENERIC = _words(
    "time times day days year years people person man woman guy guys question questions answer"
    " answers example examples problem problems idea ideas help information info option options"
    " step steps part parts type types case cases point points fact facts reason reasons issue"
    " issues result results way ways thing things stuff lot work life world today tomorrow"
    " yesterday week weekend month morning night moment end start place number list code file"
    " files data value values name names text line lines word words version item items system"
    " method function class object string error output input process detail details topic"
    " software hardware app application tool tools service page site website user users"
    " experience chance sense feeling feelings friend friends family kids everything fun"
    " picture photo image pic goal goals plan plans difference support impact reminder task tasks"
    " journey advice care event talk chat news update updates stories story memories moments"
    " lots bunch couple glad pleasure luck hope wish congrats congratulations"
)
_UI = _words(
    "click tap press button submit cancel ok save delete edit copy paste download upload login"
    " logout signup sign log settings menu dashboard home back next previous continue close"
    " open share like subscribe loading"
)
_VERB_INTRODUCERS = _words(
    "to i you we they can could will would should must might may please don't didn't"
    " doesn't won't can't let's i'll we'll i'd i'm ik je jij we wij om te"
    " always never usually often sometimes also just really still rarely"
)
_DETERMINERS = _words(
    "the a an my your our his her their this that these those some any de het een mijn je"
)
_CODE_WORDS = _words("true false none null nil undefined nan void self this async await")
_ADJECTIVE_SUFFIXES = ("ous", "ful", "ive", "able", "ible", "ical", "less", "ish", "lijk", "ig")
_VERB_SUFFIXES = ("ing", "ed", "ize", "ise", "ify", "eren", "en")
_ADJECTIVES = _words(
    "good great nice new old big small little happy sad easy hard simple best better awesome"
    " amazing cool fine bad worse worst right wrong true real sure important different same"
    " other own main whole full free open high low long short quick fast slow young tough"
    " proud glad special awesome super cute lovely beautiful wonderful incredible fantastic"
    " excited thrilled grateful thankful sorry busy tired crazy wild huge tiny"
    " gemakkelijk makkelijk moeilijk leuk goed mooi groot klein nieuw"
)
_DATE_WORDS = _words(
    "january february march april may june july august september october november december"
    " monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays"
    " thursdays fridays saturdays sundays morning mornings evening evenings afternoon night"
    " nights weekend weekends easter christmas summer winter spring autumn fall ago"
    " first second third last next early late"
)
_CODE_SHAPE = re.compile(
    r"^\d+(?:px|em|rem|pt|vh|vw|ms|fr|deg)$|^#[0-9a-f]{3,8}$|^[a-z]{2,}[A-Z]\w*|\w+_\w+|\w+\.\w+\.?\w*|\w+\(\)|[=<>{}\[\]$%@#/\\|~^`]|::|->|^\d[\d.,:%]*$"
)
_MARKUP = re.compile(r"\{\{|\}\}|\{%|%\}|<[^>]*>|&\w+;|\[/?\w+\]|^\W+$|\*\*|__")


def function_words(lang: str) -> frozenset[str]:
    """Stopwords of ``lang`` and of English, plus pronouns, auxiliaries and light verbs."""
    return _function_words(lang if lang in _EXTRA_FUNCTION or stopwords(lang) else "en")


@cache
def _function_words(lang: str) -> frozenset[str]:
    words = stopwords(lang) | stopwords("en") | _EXTRA_FUNCTION["en"]
    return words | _EXTRA_FUNCTION.get(lang, frozenset())


@cache
def lemma(word: str, lang: str) -> str:
    """simplemma's lemma of a lowercase word (English as a fallback language)."""
    langs = (lang, "en") if lang != "en" else ("en",)
    try:
        return str(simplemma.lemmatize(word.casefold(), lang=langs))
    except ValueError:  # a language simplemma does not know
        return str(simplemma.lemmatize(word.casefold(), lang="en"))


@dataclass(frozen=True)
class Candidate:
    """A phrase inside a sentence: [start, end) offsets into the sentence text."""

    text: str
    start: int
    end: int
    words: int
    proper: bool  # a capitalised word mid-sentence, an acronym or a name with digits


def candidates(sentence: str, lang: str) -> list[Candidate]:
    """Runs of content words of one sentence that pass the junk filter, in text order.

    A word right after a verb introducer ("to", "can", "I", "please"...) or an imperative at
    the start of the sentence ("Run the app") is taken as a verb and breaks the run.
    """
    stops = function_words(lang)
    found: list[Candidate] = []
    run: list[re.Match[str]] = []
    last_end, previous = 0, ""
    tokens = list(_TOKEN.finditer(sentence))
    for i, match in enumerate(tokens):
        word, low = match.group(0), match.group(0).casefold()
        gap = sentence[last_end : match.start()]
        after = tokens[i + 1].group(0).casefold() if i + 1 < len(tokens) else ""
        verb = _verb_here(word, previous if not gap.strip() else "", after, i == 0, lang)
        stop = low in stops or lemma(low, lang) in stops
        if run and (gap.strip() or stop or verb):
            found.extend(_emit(sentence, run, lang))
            run = []
        last_end, previous = match.end(), low
        if not stop and not _is_marker(word) and not verb:
            run.append(match)
    found.extend(_emit(sentence, run, lang))
    return found


def _verb_here(word: str, previous: str, after: str, first: bool, lang: str) -> bool:
    """"to validate", "I love", "validate the idea", "painted": a verb, not a noun."""
    if not (first or word.islower()):
        return False  # "to Lisbon": a name, not a verb
    if previous in _VERB_INTRODUCERS or after in _DETERMINERS:
        return True
    low = word.casefold()
    return lang == "en" and word.islower() and low.endswith("ed") and len(low) > 4


def _is_marker(word: str) -> bool:
    return word.casefold() in _CODE_WORDS or bool(_CODE_SHAPE.search(word))


def _emit(sentence: str, run: list[re.Match[str]], lang: str) -> list[Candidate]:
    if not run:
        return []
    while run and run[-1].group(0).casefold().endswith("ly") and len(run[-1].group(0)) > 4:
        run = run[:-1]  # "Rust properly": the adverb is not part of the name
    while run and run[0].group(0)[0].isdigit():
        run = run[1:]  # "45-minute sessions", "3 weeks": a count is not a name
    if not run:
        return []
    run = run[-_MAX_WORDS:]  # the head of an English noun phrase is at its end
    while len(run) > 1 and _weak_edge(run[0].group(0), lang):
        run = run[1:]
    start, end = run[0].start(), run[-1].end()
    text = sentence[start:end].rstrip(".'’-")
    if text.endswith(("'s", "’s")):
        text = text[:-2]
    end = start + len(text)
    if junk_reason(text, lang) is not None:
        return []
    proper = any(_is_proper(m.group(0), m.start(), sentence) for m in run)
    return [Candidate(text, start, end, len(run), proper)]


def _weak_edge(word: str, lang: str) -> bool:
    """A leading adjective or verb form ("amazing", "running") that the phrase does not need."""
    low = word.casefold()
    return word.islower() and (low in _ADJECTIVES or low.endswith(_ADJECTIVE_SUFFIXES))


def _is_proper(word: str, offset: int, sentence: str) -> bool:
    if (len(word) > 1 and word.isupper()) or (
        any(ch.isdigit() for ch in word) and any(ch.isupper() for ch in word)
    ):
        return True
    if not word[0].isupper():
        return False
    before = sentence[:offset].rstrip()
    return bool(before) and before[-1] not in ".!?:;\"'“(-*#>"


def _looks_verbal(low: str, lang: str) -> bool:
    if lang == "en" and low.endswith(("ing", "ed")) and len(low) > 5:
        return True
    return lemma(low, lang) != low and low.endswith(_VERB_SUFFIXES) and lang != "en"


def junk_reason(phrase: str, lang: str = "en") -> str | None:
    """Why ``phrase`` is not a memorable concept name, or None when it may be one."""
    words = phrase.split()
    if not words:
        return "empty"
    if _MARKUP.search(phrase):
        return "markup"
    if any(_is_marker(w) for w in words):
        return "code"
    stops = function_words(lang)
    if words[-1].casefold() in stops or words[0].casefold() in stops:
        return "function_word_edge"
    if all(w.casefold() in _DATE_WORDS or w[0].isdigit() for w in words):
        return "date"
    if words[-1].casefold().endswith("ly") and len(words[-1]) > 4:
        return "adverb_edge"
    if len(words) > 1:
        return None
    return _single_word_junk(words[0], lang)


def _single_word_junk(word: str, lang: str) -> str | None:
    low = word.casefold()
    if len(low) < 3 and not word.isupper():
        return "too_short"
    if low in _UI:
        return "ui"
    if low in _GENERIC or lemma(low, lang) in _GENERIC:
        return "generic"
    if word != low and not word.istitle():  # "iPhone", "LGBTQ", "B2": a name
        return None
    if low in _ADJECTIVES or low.endswith(_ADJECTIVE_SUFFIXES):
        return "adjective"
    if _looks_verbal(low, lang) or low.endswith(("ly",)):
        return "verb_or_adverb"
    return None

"""Are two concepts the same thing? The pure pair rule behind merges and the mapper's attach.

Names decide, embeddings do not: e5-style embeddings score short unrelated names (Saturday /
Sunday, Portuguese / Spanish) as high as true duplicates, so a cosine can only propose
candidates. Two concepts are the same when their types are compatible, neither is a split
sibling of the other, and one of their names relates to one of the other's by:

* ``exact``: equal canonical forms (casefolded, punctuation and spacing dropped, each word
  singularised): ``Tuesdays`` / ``tuesday``, ``real-time`` / ``realtime``;
* ``acronym``: a short name written in capitals equals the initials of the other, written in
  Title Case (function words skipped): ``GCP`` / ``Google Cloud Platform``; ``initials`` when
  the expansion is lowercase (``LLM`` / ``large language model``), a weaker relation;
* ``category``: the longer name is the shorter plus one trailing kind-word
  (``CATEGORY_WORDS``): ``BFS algorithm`` / ``BFS``, ``Mermaid syntax`` / ``Mermaid``;
* ``role``: a person's name with a leading relation word (``ROLE_WORDS``): ``partner Tomás``;
* ``prefix``: a rare leading word (a vendor) before a rare name of five letters or more:
  ``Apache Airflow`` / ``Airflow``;
* ``spelling``: the same number of words, a character ratio >= 90 and the differing words not
  both dictionary words (``EmployeelD`` / ``EmployeeID``, not ``Tuesday`` / ``Thursday``).

The weaker relations (all but exact and acronym) also need evidence overlap: when both
concepts' conversations are known they must share one. A **generic** name (one common word:
word frequency >= ``GENERIC_ZIPF``, e.g. "Data", "Program"; see ``zipf`` for languages) is never
matched by anything but an exact name, so it can neither absorb nor be absorbed; ``is_junk``
flags extractor fragments ("Hive manages") so that they never survive a merge.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

__all__ = [
    "CATEGORY_WORDS",
    "COMPATIBLE_TYPES",
    "GENERIC_ZIPF",
    "LANGUAGES",
    "ROLE_WORDS",
    "ConceptFacts",
    "Verdict",
    "canonical",
    "compare",
    "credible_names",
    "is_generic",
    "is_junk",
    "name_relation",
    "names_of",
    "types_compatible",
]

COMPATIBLE_TYPES = frozenset({frozenset({"project", "goal"})})
LANGUAGES = ("en", "es", "pt", "fr", "de", "nl", "it")
#: Zipf frequency (log10 per billion words) at or above which one word is a common word:
#: about 20 occurrences per million words ("data" 5.3, "server" 4.5; "Kubernetes" 2.3).
GENERIC_ZIPF = 4.3
_FUNCTION_ZIPF = 6.0  # "the", "of", "and", "do": a name starting or ending with one is a fragment
_RARE_ZIPF = 3.6  # below this a word is a name rather than vocabulary ("Flink", "Apache")
_KNOWN_ZIPF = 3.0  # a word this frequent is a dictionary word, not a typo

_CATEGORY = """
algorithm api app architecture language framework library tool toolkit service
platform protocol format database engine package module plugin sdk syntax software system
model method technique pattern methodology standard specification spec notation
programming product company project website site
"""
_ROLE = """
partner friend wife husband girlfriend boyfriend mom mother dad father brother sister son
daughter aunt uncle cousin grandma grandmother grandpa grandfather boss manager colleague
coworker coach teacher tutor doctor dr mr mrs ms miss sir
"""
#: Trailing words that name what kind of thing the rest is ("BFS algorithm" is BFS).
CATEGORY_WORDS = frozenset(_CATEGORY.split())
#: Leading words that name a person's relation to the user ("partner Tomás" is Tomás).
ROLE_WORDS = frozenset(_ROLE.split())


@dataclass(frozen=True)
class ConceptFacts:
    """What the rule looks at: names (title first), type, where the evidence lives."""

    title: str
    type: str
    names: tuple[str, ...] = ()
    conversations: frozenset[str] | None = None  # None: unknown (no overlap test)
    split_origin: str | None = None  # the concept this one was split from

    def all_names(self) -> tuple[str, ...]:
        return (self.title, *(name for name in self.names if name != self.title))


@dataclass(frozen=True)
class Verdict:
    same: bool
    reason: str  # the relation found, or why not
    strength: int = 0  # 3 exact, 2 acronym, 1 weaker relation, 0 not the same

    def __bool__(self) -> bool:
        return self.same


_STRONG = {"exact": 3, "acronym": 2}


def types_compatible(a: str, b: str) -> bool:
    return a == b or frozenset({a, b}) in COMPATIBLE_TYPES


@lru_cache(maxsize=len(LANGUAGES))
def _frequencies(lang: str) -> dict[str, float]:
    """wordfreq's small list for ``lang`` (words of Zipf >= 3), loaded once per process."""
    from wordfreq import get_frequency_dict

    return dict(get_frequency_dict(lang, wordlist="small"))


def _zipf_in(word: str, lang: str) -> float:
    frequency = _frequencies(lang).get(word, 0.0)
    return math.log10(frequency) + 9.0 if frequency > 0 else 0.0


@lru_cache(maxsize=500_000)
def zipf(word: str) -> float:
    """The word's Zipf frequency (log10 per billion words; 0.0 below 3, i.e. rare): in
    English when English knows it ("rust" is not Dutch "rest" here), else the highest over
    ``LANGUAGES``."""
    english = _zipf_in(word, "en")
    if english > 0.0:
        return english
    return max(_zipf_in(word, lang) for lang in LANGUAGES)


def _words(name: str) -> list[str]:
    """Words of a name, accents dropped (``Tomás`` -> ``Tomas``), punctuation a break."""
    text = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", name))
    kept = "".join(ch for ch in text if not unicodedata.combining(ch))
    cleaned = "".join(ch if ch.isalnum() else " " for ch in kept)
    return cleaned.split()


def _singular(word: str) -> str:
    """``Tuesdays`` -> ``tuesday``, ``DAGs`` -> ``dag``; acronyms (``AWS``) stay as they are."""
    if word.isupper() or len(word) <= 3:
        return word.casefold()
    if word.endswith("s") and word[:-1].isupper():
        return word[:-1].casefold()
    low = word.casefold()
    if low.endswith("ies") and len(low) > 4:
        return low[:-3] + "y"
    if low.endswith(("sses", "xes", "ches", "shes")):
        return low[:-2]
    if low.endswith("s") and not low.endswith(("ss", "us", "is", "os")):
        return low[:-1]
    return low


@lru_cache(maxsize=200_000)
def canonical(name: str) -> tuple[str, ...]:
    """Casefolded, singularised words of a name (punctuation is a word break)."""
    return tuple(_singular(word) for word in _words(name))


def is_generic(name: str) -> bool:
    """One common word ("Data", "Program", "Server") or nothing at all."""
    words = [word.casefold() for word in _words(name)]  # as written: "Tomas" is not "toma"
    if not words:
        return True
    return len(words) == 1 and (zipf(words[0]) >= GENERIC_ZIPF or len(words[0]) < 2)


def is_junk(name: str) -> bool:
    """An extractor fragment: no letters, or starting/ending with a function word."""
    words = [word.casefold() for word in _words(name)]
    if not words or not any(ch.isalpha() for ch in "".join(words)):
        return True
    ends = {words[0], words[-1]} if len(words) > 1 else set()
    return any(zipf(word) >= _FUNCTION_ZIPF for word in ends)


_Form = tuple[tuple[str, ...], tuple[str, ...]]  # canonical words, words as written


@lru_cache(maxsize=200_000)
def _form(name: str) -> _Form:
    return canonical(name), tuple(_words(name))


def _expansion_like(written: tuple[str, ...]) -> bool:
    """Title Case words, or lowercase ones that do not read as a verb ("requesting ...")."""
    return all(word[0].isupper() or not word.endswith(("ing", "ed")) for word in written)


def _acronym(short: _Form, long: _Form) -> bool:
    (word, *rest), words = short[0], long[0]
    if rest or len(words) < 2 or not word.isalpha() or not 2 <= len(word) <= 6:
        return False
    written = short[1][0].rstrip("s")
    if not written.isupper():
        return False  # "Ist" is a word, "IST" may be initials
    initials = "".join(w[0] for w in words if zipf(w) < _FUNCTION_ZIPF)
    return initials == word and _expansion_like(long[1])


def _title_case(written: tuple[str, ...]) -> bool:
    return all(word[0].isupper() or zipf(word) >= _FUNCTION_ZIPF for word in written)


def _containment(short: _Form, long: _Form) -> str | None:
    (s, short_written), (w, written) = short, long
    if len(w) != len(s) + 1:
        return None
    if w[:-1] == s and w[-1] in CATEGORY_WORDS:
        return "category"
    if w[1:] != s:
        return None
    if w[0] in ROLE_WORDS:
        return "role"
    if len(s) == 1 and len(s[0]) <= 4:
        return None  # "ORM", "S3": too short to tell a product from its kind
    proper = written[0][0].isupper() and written[1][0].isupper()  # "Apache Airflow"
    rare = (max(zipf(word.casefold()) for word in short_written) < _RARE_ZIPF
            and zipf(written[0].casefold()) < _RARE_ZIPF)
    return "prefix" if proper and rare else None


def _spelling(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """One word differs, by a typo: both words long enough, not both dictionary words."""
    from rapidfuzz.fuzz import ratio

    if len(a) != len(b):
        return False
    differing = [(x, y) for x, y in zip(a, b, strict=True) if x != y]
    if len(differing) != 1:
        return False
    x, y = differing[0]
    digits = ("".join(filter(str.isdigit, x)), "".join(filter(str.isdigit, y)))
    if min(len(x), len(y)) < 5 or digits[0] != digits[1] or min(zipf(x), zipf(y)) >= _KNOWN_ZIPF:
        return False
    return ratio(x, y) >= 85.0


def _relation(left: str, right: str) -> str | None:
    a, b = _form(left), _form(right)
    if not a[0] or not b[0]:
        return None
    if "".join(a[0]) == "".join(b[0]):
        return "exact"
    short, long = (a, b) if len(a[0]) <= len(b[0]) else (b, a)
    if _acronym(short, long):  # lowercase expansions ("resolve data skew") need shared evidence
        return "acronym" if _title_case(long[1]) else "initials"
    if len(short[0]) == 1 and zipf(short[1][0].casefold()) >= GENERIC_ZIPF:
        return None  # a generic word relates to nothing but itself
    return _containment(short, long) or ("spelling" if _spelling(a[0], b[0]) else None)


def name_relation(left: Iterable[str], right: Iterable[str]) -> str | None:
    """The strongest relation between any name on the left and any on the right."""
    best: str | None = None
    rights = list(right)
    for a in left:
        for b in rights:
            found = _relation(a, b)
            if found is not None and (best is None or _STRONG.get(found, 1) > _STRONG.get(best, 1)):
                best = found
    return best


def credible_names(title: str, aliases: Sequence[str]) -> tuple[str, ...]:
    """The title and the aliases that are names of the same thing by this rule.

    Aliases collected by an earlier, looser matcher ("Apache Hive" on "Hadoop configuration")
    must not carry a merge: an alias speaks for a concept only when it relates to its title.
    """
    return names_of(title, [alias for alias in aliases if name_relation([title], [alias])])


def compare(a: ConceptFacts, b: ConceptFacts, *, overlap: bool | None = None) -> Verdict:
    """The pair rule of the module docstring. ``overlap`` overrides the evidence-overlap test
    (``None``: from the two concepts' conversations, passing when either is unknown)."""
    if not types_compatible(a.type, b.type):
        return Verdict(False, "type")
    if a.split_origin is not None and a.split_origin == b.split_origin:
        return Verdict(False, "split_siblings")
    relation = _cached_relation(a.all_names(), b.all_names())
    if relation is None:
        return Verdict(False, "no_name_relation")
    strength = _STRONG.get(relation, 1)
    shared = not _disjoint(a.conversations, b.conversations) if overlap is None else overlap
    if strength == 1 and not shared:
        return Verdict(False, f"{relation}_without_shared_evidence")
    return Verdict(True, relation, strength)


@lru_cache(maxsize=500_000)
def _cached_relation(left: tuple[str, ...], right: tuple[str, ...]) -> str | None:
    return name_relation(left, right)


def _disjoint(a: frozenset[str] | None, b: frozenset[str] | None) -> bool:
    return a is not None and b is not None and not (a & b)


def names_of(title: str, aliases: Sequence[str]) -> tuple[str, ...]:
    """Title first, then aliases, without repeats (by canonical form)."""
    seen: set[tuple[str, ...]] = set()
    out = []
    for name in (title, *aliases):
        key = canonical(name)
        if key and key not in seen:
            seen.add(key)
            out.append(name)
    return tuple(out)

"""The offline extractor: phrase patterns, typed noun phrases and named things, deterministic.

No model, no download, no network: the default when no LLM endpoint is configured. It returns
the same ``ExtractionResult`` an LLM would, labelled ``offline:vN`` in provenance. Every quote
is cut from the message text by offsets, so it is a verbatim substring of its message.

- Human messages (role ``user``; in a two-person export both speakers are) are first-person
  memory about their speaker (the message's ``author``, "the person" when there is none). Each
  sentence is matched against patterns for goals, beliefs, projects, events, tensions and
  habits; every substantive sentence also yields its best noun phrase (token rules, function
  words, simplemma lemmas, the junk filter), typed by the sentence's cues, so that every such
  sentence becomes evidence. Phrases that only cover a sentence get a tentative confidence
  (``COVERAGE_CONFIDENCE``): the mapper attaches them to a concept that fits, else keeps them
  as ``weak`` hypotheses until more evidence comes.
- Named things (proper names, acronyms, multi-word phrases the segment repeats) become
  entities; from assistant messages only proper names, with lower confidence.
- Phrases are ranked by a cheap lexical score, or, given an ``Embedder``, by relevance to their
  sentence (KeyBERT-style cosine) with MMR for diversity.
- System and tool messages are skipped. Code blocks are masked out.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from ontology import (
    ConceptType,
    Embedder,
    ExtractionRequest,
    ExtractionResult,
    RawMention,
    RawRelation,
    RelationType,
    SegmentMessage,
    normalize_name,
)
from pipeline.offline.cues import sentence_type
from pipeline.offline.keyphrases import guess_language, stopwords
from pipeline.offline.patterns import Pattern, patterns_for
from pipeline.offline.phrases import Candidate, candidates, function_words, junk_reason, lemma
from pipeline.offline.rank import rank
from pipeline.offline.text import Span, clean_title, quote_around, sentences

__all__ = ["COVERAGE_CONFIDENCE", "OfflineExtractor"]


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


COVERAGE_CONFIDENCE = 0.3  # below the mapper's weak bar: attach where a concept fits
_TITLE_WORDS = 6
_MAX_PATTERN_CHARS = 2000  # patterns look at the start of very long "sentences" only
_MAX_SENTENCE_CHARS = 600  # phrases come from the start of very long "sentences" only
_LONG_TITLE_WORDS = 8
_NAMED_CONFIDENCE = 0.45
_ASSISTANT_CONFIDENCE = 0.3
_ASSISTANT_CHARS = 1500
_NAME_HINT = re.compile(r"(?<=[\w,;] )[A-Z]|[A-Z]{2}|\d[A-Za-z]|[A-Za-z]\d")
_MIN_WORDS = 4
_PROJECT_WORDS = _word_set(
    "app application tool library website site startup book thesis project platform bot game"
    " course podcast blog plugin extension api cli service dashboard newsletter channel"
    " proyecto projet projekt projeto"
)
_FILLER = _word_set(
    "great sure thanks thank hello hi hey yes yeah okay ok sorry please absolutely certainly"
    " here let good nice awesome perfect excellent glad happy welcome sounds wow oh cool"
    " amazing congrats congratulations haha lol omg aw aww dear"
)
_DANGLING = _word_set("you it them that this me him her us out up there so too")
_THAT = re.compile(r"(?<!\w)(?:that|que|dass)(?!\w)", re.I)
_PRONOUNS = _word_set("i i'm i’m im yo je ich eu")
_WORDS = re.compile(r"\w+")
_CLAUSE_WORDS = re.compile(r"\w[\w'’]*")  # "I'll" is one (function) word
_PERSON_LABELS = _word_set("user human person me you")
_DESCRIPTIONS: dict[str, str] = {
    "goal": "Something {who} wants to achieve: {t}.",
    "belief": "Something {who} believes: {t}.",
    "project": "A project {who} is working on: {t}.",
    "event": "Something that happened in {whose} life: {t}.",
    "tension": "A tension {who} feels: {t}.",
    "behavioral_pattern": "A recurring behaviour of {who}: {t}.",
    "entity": "Something {who} talked about: {t}.",
}


@dataclass
class _Draft:
    title: str
    type: ConceptType
    quote: str
    ref: str
    confidence: float
    quote_start: int = 0
    who: str = "the person"
    relations: list[RawRelation] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, str, int]:
        return (normalize_name(self.title), self.ref, self.quote_start)


@dataclass(frozen=True)
class _Sentence:
    message: SegmentMessage
    span: Span
    text: str
    who: str


def speaker(message: SegmentMessage) -> str:
    """Whom a human message's first-person statements are about: its named speaker."""
    author = (message.author or "").strip()
    return author if author and author.casefold() not in _PERSON_LABELS else "the person"


class OfflineExtractor:
    """``ontology.Extractor`` without a model: patterns, noun phrases, named things."""

    label = "offline:v2"

    def __init__(self, max_mentions: int = 400, embedder: Embedder | None = None) -> None:
        self.max_mentions = max_mentions
        self.embedder = embedder

    def extract(self, request: ExtractionRequest) -> ExtractionResult:
        human = [m for m in request.messages if m.role == "user" and m.text.strip()]
        assistant = [m for m in request.messages if m.role == "assistant" and m.text.strip()]
        lang = guess_language(" ".join(m.text[:2000] for m in human or assistant))
        split = [s for m in human for s in _split(m, speaker(m))]
        found = {id(s): candidates(s.text[:_MAX_SENTENCE_CHARS], lang) for s in split}
        counts = _phrase_counts(c for cs in found.values() for c in cs)
        drafts: list[_Draft] = []
        for sentence in split:
            drafts += self._sentence_drafts(sentence, found[id(sentence)], counts, lang)
        drafts += self._assistant_drafts(assistant, lang, counts)
        unique = _dedupe(drafts)[: self.max_mentions]
        _link(unique)
        return ExtractionResult(mentions=[_mention(d) for d in unique])

    def _sentence_drafts(
        self, sentence: _Sentence, found: list[Candidate], counts: Counter[str], lang: str
    ) -> list[_Draft]:
        drafts = _pattern_drafts(sentence, patterns_for(lang), lang)
        patterned = bool(drafts)
        ranked = rank(sentence.text, found, counts, self.embedder)
        for candidate in ranked:
            named = candidate.proper or candidate.words > 1
            repeated = named and counts[_key(candidate.text)] >= 2
            if candidate.proper or repeated:
                kind: ConceptType = "project" if _is_project(candidate.text) else "entity"
                # a name the segment repeats is confident; other phrases wait for recurrence
                weight = _NAMED_CONFIDENCE if repeated and candidate.proper else (
                    COVERAGE_CONFIDENCE)
                drafts.append(_phrase_draft(sentence, candidate, kind, weight))
        if len(drafts) > int(patterned) or not _substantive(sentence.text, lang):
            return drafts
        kind = "entity" if patterned else sentence_type(sentence.text)
        best = _coverage_phrase(sentence.text, ranked, patterned, lang)
        if best is not None:
            drafts.append(_phrase_draft(sentence, best, kind, COVERAGE_CONFIDENCE))
        return drafts

    def _assistant_drafts(
        self, assistant: list[SegmentMessage], lang: str, counts: Counter[str]
    ) -> list[_Draft]:
        """Proper names from a bounded share of assistant text, at a lower confidence."""
        drafts: list[_Draft] = []
        budget = _ASSISTANT_CHARS
        for message in assistant:
            for sentence in _split(message, "the assistant"):
                if budget <= 0:
                    return drafts
                budget -= len(sentence.text)
                if not _NAME_HINT.search(sentence.text):  # no name in it: skip the tokenizer
                    continue
                for candidate in candidates(sentence.text[:_MAX_SENTENCE_CHARS], lang):
                    if candidate.proper and (candidate.words > 1 or counts[_key(candidate.text)]):
                        drafts.append(_phrase_draft(
                            sentence, candidate, "entity", _ASSISTANT_CONFIDENCE
                        ))
        return drafts


def _split(message: SegmentMessage, who: str) -> list[_Sentence]:
    text = message.text
    split = [_Sentence(message, s, text[s.start : s.end], who) for s in sentences(text)]
    return [s for s in split if not _code_or_label(s.text)]


def _code_or_label(sentence: str) -> bool:
    """A line of code, CSS or a comment ("padding: 8px;", "// init") or a form label ("Name:")."""
    if sentence.startswith(("//", "/*", "#", "<", "{", "}", "$ ", ">>>")):
        return True
    if sum(sentence.count(ch) for ch in "{};=<>") >= 2 or sentence.rstrip().endswith(";"):
        return True
    return sentence.endswith(":") and len(sentence.split()) <= 6


def _key(phrase: str) -> str:
    return " ".join(lemma(w, "en") for w in normalize_name(phrase).split())


def _phrase_counts(found: object) -> Counter[str]:
    return Counter(_key(c.text) for c in found)  # type: ignore[attr-defined]


def _substantive(text: str, lang: str) -> bool:
    """Not a greeting or filler: enough words, and some beyond fillers and stopwords."""
    words = [w.casefold() for w in _WORDS.findall(text)]
    if len(words) < _MIN_WORDS:
        return False
    stops = stopwords(lang) | stopwords("en")
    return any(w not in _FILLER and w not in stops for w in words)


def _coverage_phrase(
    text: str, ranked: list[Candidate], patterned: bool, lang: str
) -> Candidate | None:
    """A phrase to cover the sentence with: a name or a multi-word phrase first, then the best
    single word (it attaches where the noun recurs; the mapper keeps a lone common noun weak),
    then the sentence's first clause."""
    named = [c for c in ranked if c.proper or c.words > 1]
    if named or ranked:
        return (named or ranked)[0]
    return None if patterned else _clause(text, lang)


def _clause(text: str, lang: str) -> Candidate | None:
    """A sentence without a noun phrase ("I'm swamped with the kids"): its first clause."""
    words = list(_CLAUSE_WORDS.finditer(text))
    stops = function_words(lang)
    first = next((w for w in words if w.group(0).casefold() not in stops | _FILLER), None)
    if first is None:
        return None
    title = clean_title(text[first.start() :], max_words=5).rstrip(" &+/-")
    if len(title) < 3 or junk_reason(title, lang) is not None:
        return None
    return Candidate(title, first.start(), first.start() + len(title), len(title.split()), False)


def _phrase_draft(
    sentence: _Sentence, candidate: Candidate, kind: ConceptType, confidence: float
) -> _Draft:
    message, span = sentence.message, sentence.span
    quote = quote_around(message.text, span, span.start + candidate.start)
    return _Draft(
        candidate.text, kind, message.text[quote.start : quote.end], message.ref, confidence,
        quote.start, sentence.who,
    )


def _pattern_drafts(
    sentence: _Sentence, patterns: tuple[Pattern, ...], lang: str
) -> list[_Draft]:
    drafts: list[_Draft] = []
    message, span = sentence.message, sentence.span
    text = message.text
    chunk = text[span.start : min(span.end, span.start + _MAX_PATTERN_CHARS)]
    for pattern in patterns:
        match = pattern.regex.search(chunk)
        if match is None:
            continue
        title = _title(match, pattern)
        if not _meaningful(title, pattern, lang):
            continue
        quote = quote_around(text, span, span.start + match.start())
        drafts.append(
            _Draft(title, pattern.family, text[quote.start : quote.end], message.ref,
                   pattern.confidence, quote.start, sentence.who)
        )
    return drafts


def _title(match: re.Match[str], pattern: Pattern) -> str:
    limit = _LONG_TITLE_WORDS if pattern.family in ("belief", "tension") else _TITLE_WORDS
    obj = clean_title(match.group("obj"), limit, strip_leading=pattern.strip_leading)
    left = match.groupdict().get("left")
    if left is None:
        return obj
    clause = _THAT.split(left)[-1]  # "I think that X but I also Y" -> X
    words = [w for w in clause.split() if w.casefold() not in _PRONOUNS]
    head = clean_title(" ".join(words), max_words=4)
    tail = clean_title(obj, max_words=4)
    return f"{head} vs {tail}" if head and tail else ""


def _meaningful(title: str, pattern: Pattern, lang: str) -> bool:
    """Not "tell you", "check them out" or a bare "started": some content must be named."""
    words = title.split()
    stops = stopwords(lang) | stopwords("en")
    content = [w for w in words if w.casefold() not in stops]
    if len(title) < 3 or not content or (pattern.family == "event" and len(words) < 2):
        return False
    if pattern.family in ("event", "behavioral_pattern") and not candidates(title, lang):
        return False  # "always struggle", "started": a habit or event names something
    if len(words) > 2 and words[1].casefold() in _DANGLING:
        return False  # "apply that to Spanish": the object is elsewhere
    return len(content) >= 2 or words[-1].casefold() not in _DANGLING


def _is_project(phrase: str) -> bool:
    return any(w.casefold() in _PROJECT_WORDS for w in phrase.split()[1:])


def _dedupe(drafts: list[_Draft]) -> list[_Draft]:
    """One draft per (title, message, quote), the most confident (first on ties), in order."""
    best: dict[tuple[str, str, int], _Draft] = {}
    for draft in drafts:
        kept = best.get(draft.key)
        if kept is None or draft.confidence > kept.confidence:
            best[draft.key] = draft
    return [d for d in drafts if best.get(d.key) is d]


def _link(drafts: list[_Draft]) -> None:
    """Cheap relations between a mention and the named things quoted in its sentence."""
    named: dict[str, list[_Draft]] = {}
    for d in drafts:
        if d.type in ("entity", "project") and d.confidence > COVERAGE_CONFIDENCE:
            named.setdefault(d.ref, []).append(d)
    for draft in drafts:
        title = normalize_name(draft.title)
        inside = [
            n
            for n in named.get(draft.ref, [])
            if n.title.casefold() in draft.quote.casefold() and normalize_name(n.title) != title
        ]
        if draft.type == "tension" and len(inside) >= 2:
            _relate(inside[0], inside[1].title, "conflicts_with", 0.5)
        for other in inside:
            if draft.type == "goal" and other.type == "project":
                _relate(draft, other.title, "supports", 0.45)
            elif (
                draft.type == "project"
                and other.type == "entity"
                and not title.startswith(normalize_name(other.title))  # not its own head noun
            ):
                _relate(other, draft.title, "enables", 0.4)


def _relate(draft: _Draft, target: str, relation: RelationType, confidence: float) -> None:
    if target == draft.title or any(r.target_title == target for r in draft.relations):
        return
    draft.relations.append(
        RawRelation(target_title=target, relation=relation, confidence=confidence)
    )


def _mention(draft: _Draft) -> RawMention:
    return RawMention(
        title=draft.title,
        type=draft.type,
        description=_DESCRIPTIONS[draft.type].format(
            t=draft.title, who=draft.who, whose=_possessive(draft.who)
        ),
        quote=draft.quote,
        message_ref=draft.ref,
        confidence=draft.confidence,
        relations=list(draft.relations),
    )


def _possessive(who: str) -> str:
    return f"{who}'s" if who != "the person" else "the person's"

"""The offline extractor: deterministic mentions from phrase patterns and YAKE keyphrases.

No model, no download, no network: the default when no LLM endpoint is configured. It returns
the same ``ExtractionResult`` an LLM would, labelled ``offline:vN`` in provenance. Every quote
is cut from the message text by offsets, so it is a verbatim substring of its message.

- User messages (the person's memory) are matched against patterns for goals, beliefs,
  projects, events, tensions and behavioural patterns, and yield keyphrase entities.
- Assistant messages yield only keyphrase entities, with lower confidence.
- System and tool messages are skipped. Code blocks are masked out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ontology import (
    ConceptType,
    ExtractionRequest,
    ExtractionResult,
    RawMention,
    RawRelation,
    RelationType,
    SegmentMessage,
    normalize_name,
)
from pipeline.offline.keyphrases import guess_language, keyphrases, stopwords
from pipeline.offline.patterns import Pattern, patterns_for
from pipeline.offline.text import Span, clean_title, mask_code, quote_around, sentences

_Sentences = list[tuple[SegmentMessage, list[tuple[Span, str]]]]

__all__ = ["OfflineExtractor"]


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


_TITLE_WORDS = 6
_MAX_PATTERN_CHARS = 2000  # patterns look at the start of very long "sentences" only
_LONG_TITLE_WORDS = 8
_USER_KEYPHRASE_CONFIDENCE = 0.45
_ASSISTANT_KEYPHRASE_CONFIDENCE = 0.3
_USER_KEYPHRASE_CHARS = 6000
_ASSISTANT_KEYPHRASE_CHARS = 1500
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
_DESCRIPTIONS: dict[str, str] = {
    "goal": "Something the person wants to achieve: {t}.",
    "belief": "Something the person believes: {t}.",
    "project": "A project the person is working on: {t}.",
    "event": "Something that happened in the person's life: {t}.",
    "tension": "A tension the person feels: {t}.",
    "behavioral_pattern": "A recurring behaviour of the person: {t}.",
    "entity": "Something discussed in the conversation: {t}.",
}


@dataclass
class _Draft:
    title: str
    type: ConceptType
    quote: str
    ref: str
    confidence: float
    quote_start: int = 0
    relations: list[RawRelation] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, str]:
        return (self.type, normalize_name(self.title))


class OfflineExtractor:
    """``ontology.Extractor`` without a model: patterns plus keyphrases, deterministic."""

    label = "offline:v1"

    def __init__(self, max_keyphrases: int = 10, max_mentions: int = 40) -> None:
        self.max_keyphrases = max_keyphrases
        self.max_mentions = max_mentions

    def extract(self, request: ExtractionRequest) -> ExtractionResult:
        user = [m for m in request.messages if m.role == "user" and m.text.strip()]
        assistant = [m for m in request.messages if m.role == "assistant" and m.text.strip()]
        lang = guess_language(" ".join(m.text[:2000] for m in user or assistant))
        drafts = [d for m in user for d in _pattern_drafts(m, patterns_for(lang), lang)]
        named = self._keyphrase_drafts(user, assistant, lang)
        drafts += [d for d in named if not _inside_pattern_title(d, drafts)]
        unique = _dedupe(drafts)[: self.max_mentions]
        _link(unique)
        return ExtractionResult(mentions=[_mention(d) for d in unique])

    def _keyphrase_drafts(
        self, user: list[SegmentMessage], assistant: list[SegmentMessage], lang: str
    ) -> list[_Draft]:
        """One YAKE pass per segment (user text, then a bounded share of assistant text)."""
        text = "\n".join(mask_code(m.text) for m in user)[:_USER_KEYPHRASE_CHARS]
        text += "\n" + "\n".join(mask_code(m.text) for m in assistant)[:_ASSISTANT_KEYPHRASE_CHARS]
        split = [
            (m, [(s, m.text[s.start : s.end]) for s in sentences(m.text)])
            for m in [*user, *assistant]
        ]
        drafts: list[_Draft] = []
        for rank, (phrase, _score) in enumerate(keyphrases(text, lang, self.max_keyphrases)):
            found = _locate(phrase, split)
            if found is None:
                continue
            message, quote, start = found
            kind: ConceptType = "project" if _is_project(phrase) else "entity"
            base = (
                _USER_KEYPHRASE_CONFIDENCE
                if message.role == "user"
                else _ASSISTANT_KEYPHRASE_CONFIDENCE
            )
            weight = round(max(0.1, base - 0.02 * rank), 3)
            drafts.append(_Draft(phrase, kind, quote, message.ref, weight, start))
        return drafts


def _pattern_drafts(
    message: SegmentMessage, patterns: tuple[Pattern, ...], lang: str
) -> list[_Draft]:
    drafts: list[_Draft] = []
    text = message.text
    for sentence in sentences(text):
        chunk = text[sentence.start : min(sentence.end, sentence.start + _MAX_PATTERN_CHARS)]
        for pattern in patterns:
            match = pattern.regex.search(chunk)
            if match is None:
                continue
            title = _title(match, pattern)
            if not _meaningful(title, pattern, lang):
                continue
            span = quote_around(text, sentence, sentence.start + match.start())
            drafts.append(
                _Draft(
                    title,
                    pattern.family,
                    text[span.start : span.end],
                    message.ref,
                    pattern.confidence,
                    span.start,
                )
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
    return len(content) >= 2 or words[-1].casefold() not in _DANGLING


def _locate(phrase: str, split: _Sentences) -> tuple[SegmentMessage, str, int] | None:
    """The first message and sentence holding the phrase (case- and space-insensitive)."""
    words = [re.escape(w) for w in phrase.split()]
    regex = re.compile(r"(?<!\w)" + r"\s+".join(words) + r"(?!\w)", re.I)
    for message, spans in split:
        for sentence, chunk in spans:
            match = regex.search(chunk)
            if match is not None and not _chatty(phrase, match.start()):
                span = quote_around(message.text, sentence, sentence.start + match.start())
                return message, message.text[span.start : span.end], span.start
    return None


def _inside_pattern_title(draft: _Draft, pattern_drafts: list[_Draft]) -> bool:
    """A keyphrase project already named by a pattern mention ("app" in "build an app")."""
    if draft.type != "project":
        return False
    name = normalize_name(draft.title)
    return any(p.type == "project" and name in normalize_name(p.title) for p in pattern_drafts)


def _chatty(phrase: str, offset: int) -> bool:
    """Filler ("Great plan", "Sure") or a lone capitalised word that only starts a sentence."""
    words = phrase.split()
    if words[0].casefold() in _FILLER:
        return True
    word = words[0]
    return len(words) == 1 and offset == 0 and word[1:].islower() and not word.isupper()


def _is_project(phrase: str) -> bool:
    return any(w.casefold() in _PROJECT_WORDS for w in phrase.split()[1:])


def _dedupe(drafts: list[_Draft]) -> list[_Draft]:
    """One draft per (type, normalised title), keeping the most confident (first on ties)."""
    best: dict[tuple[str, str], _Draft] = {}
    for draft in drafts:
        kept = best.get(draft.key)
        if kept is None or draft.confidence > kept.confidence:
            best[draft.key] = draft
    seen_titles: set[str] = set()
    unique: list[_Draft] = []
    for draft in drafts:
        if best.get(draft.key) is draft and draft.key[1] not in seen_titles:
            seen_titles.add(draft.key[1])
            unique.append(draft)
    return unique


def _link(drafts: list[_Draft]) -> None:
    """Cheap relations between a mention and the named things quoted in its sentence."""
    named = [d for d in drafts if d.type in ("entity", "project")]
    for draft in drafts:
        title = normalize_name(draft.title)
        inside = [
            n
            for n in named
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
        description=_DESCRIPTIONS[draft.type].format(t=draft.title),
        quote=draft.quote,
        message_ref=draft.ref,
        confidence=draft.confidence,
        relations=list(draft.relations),
    )

"""Noun-phrase candidates, the junk filter, sentence cues and ranking of the offline extractor."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.embeddings import HashingEmbedder
from pipeline.offline.cues import sentence_type
from pipeline.offline.phrases import candidates, junk_reason, lemma
from pipeline.offline.rank import mmr, rank


def texts(sentence: str, lang: str = "en") -> list[str]:
    return [c.text for c in candidates(sentence, lang)]


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("I went to a LGBTQ support group yesterday and it was so powerful.",
         ["LGBTQ support group"]),
        ("How do I run the django application?", ["django application"]),
        ("The Todoist Gmail plug-in keeps crashing", ["Todoist Gmail plug-in"]),
        ("Dana is learning Spanish for the DELE B2 exam in Seville.",
         ["Dana", "learning Spanish", "DELE B2 exam", "Seville"]),
        ("I'm torn between Django and FastAPI for the backend.",
         ["Django", "FastAPI", "backend"]),
    ],
)
def test_noun_phrases_from_token_rules(sentence: str, expected: list[str]) -> None:
    found = candidates(sentence, "en")
    assert [c.text for c in found] == expected
    for c in found:  # offsets index the sentence: a candidate is always verbatim
        assert sentence[c.start : c.end] == c.text


def test_verbs_after_introducers_and_imperatives_are_not_phrases() -> None:
    assert texts("I want to achieve my goals and validate the idea") == []
    assert "Check" not in " ".join(texts("Check the logs, then restart nginx"))
    assert texts("Melanie painted a lake sunrise") == ["Melanie", "lake sunrise"]


def test_proper_names_are_flagged() -> None:
    found = {c.text: c.proper for c in candidates("Yesterday Caroline met the GPT-4o team", "en")}
    assert found["Caroline"] and found["GPT-4o team"]
    assert not any(c.proper for c in candidates("Painting is a fun way to relax", "en"))


@pytest.mark.parametrize(
    ("phrase", "reason"),
    [
        ("achieve", None),  # a bare verb alone is caught in context (see above), not here
        ("validate", None),
        ("Software", "generic"),
        ("stuff", "function_word_edge"),  # a light noun, listed with the function words
        ("difference", "generic"),
        ("False", "code"),
        ("get_user_id", "code"),
        ("getElementById", "code"),
        ("settings.py", "code"),
        ("8px", "code"),
        ("{{name}}", "markup"),
        ("<div>", "markup"),
        ("&nbsp;", "markup"),
        ("Submit", "ui"),
        ("gemakkelijk", "adjective"),
        ("powerful", "adjective"),
        ("tough", "adjective"),
        ("quickly", "adverb_edge"),
        ("Portuguese quickly", "adverb_edge"),
        ("Wat moet", "function_word_edge"),
        ("support group with", "function_word_edge"),
        ("the support group", "function_word_edge"),
        ("Sunday mornings", "date"),
        ("October", "date"),
        ("Todoist Gmail plug-in", None),
        ("Ikigai", None),
        ("LGBTQ", None),
        ("iPhone", None),
        ("Agile Scrum Sprint", None),
    ],
)
def test_junk_reason(phrase: str, reason: str | None) -> None:
    lang = "nl" if phrase in ("gemakkelijk", "Wat moet") else "en"
    assert junk_reason(phrase, lang) == reason


def test_dutch_function_words_and_lemmas() -> None:
    assert texts("Je kunt hieronder één optie kiezen, dat is gemakkelijk.", "nl") == [
        "optie kiezen"
    ]
    assert lemma("huizen", "nl") == "huis"
    assert lemma("habits", "en") == "habit"


@pytest.mark.parametrize(
    ("sentence", "family"),
    [
        ("I went to a support group yesterday.", "event"),
        ("I usually paint on Sunday mornings.", "behavioral_pattern"),
        ("I'm planning to open a bakery someday.", "goal"),
        ("I think kindness matters more than money.", "belief"),
        ("I'm swamped with the kids and work.", "tension"),
        ("I'm working on a mobile app for hikers.", "project"),
        ("The lake at sunrise.", "entity"),
    ],
)
def test_sentence_cues_give_seed_types(sentence: str, family: str) -> None:
    assert sentence_type(sentence) == family


def test_rank_lexical_prefers_names_and_repeats_and_is_deterministic() -> None:
    from collections import Counter

    sentence = "My sister and I visited the botanical garden near Kew Gardens"
    found = candidates(sentence, "en")
    first = rank(sentence, found, Counter())
    assert first[0].text == "Kew Gardens"
    repeated = rank(sentence, found, Counter({"sister": 3}))
    assert repeated[0].text == "Kew Gardens" and repeated[1].text == "sister"
    embedded = rank(sentence, found, Counter(), HashingEmbedder())
    assert embedded == rank(sentence, found, Counter(), HashingEmbedder())
    assert sorted(c.text for c in embedded) == sorted(c.text for c in found)


def test_mmr_trades_relevance_for_diversity() -> None:
    query = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    items = np.array([[0.99, 0.14, 0.0], [0.98, 0.2, 0.0], [0.7, 0.0, 0.71]], dtype=np.float32)
    items /= np.linalg.norm(items, axis=1, keepdims=True)
    assert mmr(query, items, 0.0) == [0, 1, 2]  # relevance only
    assert mmr(query, items, 0.7)[:2] == [0, 2]  # the near-duplicate waits

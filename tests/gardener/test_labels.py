"""Topic labels from class-based TF-IDF."""

from __future__ import annotations

from gardener.labels import (
    ctfidf_keywords,
    detect_languages,
    label_from_keywords,
    stop_words_for,
    tokenize,
)


def test_distinctive_words_rank_first_and_shared_words_last():
    docs = [
        ["garden compost soil", "compost heap in the garden", "garden soil and worms"],
        ["guitar chords practice", "practice guitar scales", "guitar in the garden"],
    ]
    keywords = ctfidf_keywords(docs, top_n=3)
    # "garden" is frequent in topic 0 and rare in topic 1, so it still leads topic 0
    assert keywords == [["garden", "compost", "soil"], ["guitar", "practice", "chords"]]
    assert label_from_keywords(keywords[1]) == ", ".join(keywords[1][:3])


def test_deterministic_and_empty_safe():
    assert ctfidf_keywords([["alpha beta", "beta alpha"], ["gamma delta"]]) == [
        ["alpha", "beta"], ["delta", "gamma"]]
    assert ctfidf_keywords([["the of"], []]) == [[], []]
    assert label_from_keywords([]) == "unlabelled"
    assert tokenize("The Compost-heap, 2026!") == ["compost-heap"]


def test_stop_words_of_every_language_found_and_only_those():
    english = ["I want to configure the Kubernetes cluster with helm charts"] * 3
    dutch = ["Hoe vul ik mijn belastingaangifte in voor de Belastingdienst dit jaar"] * 3
    assert detect_languages(english + dutch) == ["en", "nl"]
    assert detect_languages(english) == ["en"]
    stop = stop_words_for(english + dutch)
    assert {"mijn", "voor", "want", "the"} <= stop and "helm" not in stop
    keywords = ctfidf_keywords([english, dutch], top_n=3)
    assert not set(keywords[1]) & {"hoe", "ik", "mijn", "voor", "de", "dit"}
    assert "belastingaangifte" in keywords[1]
    assert set(keywords[0]) <= {"configure", "kubernetes", "cluster", "helm", "charts"}
    assert "voor" not in stop_words_for(english)  # Dutch list only when Dutch is there


def test_terms_shared_by_two_documents_rank_before_one_document_words():
    docs = [["rust cli budget", "rust cli export", "zebra zebra zebra zebra"], ["garden soil"]]
    assert ctfidf_keywords(docs, top_n=3)[0][:2] == ["cli", "rust"]

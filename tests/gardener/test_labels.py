"""Topic labels from class-based TF-IDF."""

from __future__ import annotations

from gardener.labels import ctfidf_keywords, label_from_keywords, tokenize


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

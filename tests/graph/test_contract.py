"""The GraphStore lineage contract: the same tests and expected answers on every backend.

Read-only: one synced store per backend (``synced`` fixture); writes live in test_contract_sync.
"""

from __future__ import annotations

import pytest
from builders import HOSTILE, T2, Built

from graph import SCHEMA, GraphError, GraphStore

Synced = tuple[GraphStore, Built]


def test_counts_cover_every_kind(synced: Synced) -> None:
    counts = synced[0].counts()
    assert set(counts) == set(SCHEMA.kinds())
    assert counts["Message"] == 8 and counts["Conversation"] == 2
    assert counts["NEXT"] == 6  # 5 + 1 in A (branch m3b), 1 in B
    assert counts["HAS_MESSAGE"] == 8 and counts["CONTAINS_MESSAGE"] == 3
    assert counts["Concept"] == 4 and counts["EVIDENCE_FOR"] == 3
    assert counts["RELATES"] == 3 and counts["MERGED_INTO"] == 1 and counts["SPLIT_INTO"] == 1
    assert counts["Topic"] == 1 and counts["BELONGS_TO"] == 1 and counts["Segment"] == 1


def test_evidence_quotes_are_verbatim(synced: Synced) -> None:
    graph, built = synced
    rows = graph.evidence_for_concept(built.concepts["rust"])
    hostile = graph.evidence_for_concept(built.concepts["hostile"])
    messages = {m.id: m for m in built.messages.values()}
    assert [r.quote for r in rows] == ["learn Rust", "Okay."]
    for row in [*rows, *hostile]:
        message = messages[row.message_id]
        assert message.text[row.start : row.end] == row.quote
        assert row.conversation_id == message.conversation_id
        assert row.role == message.role
        assert row.created_at is not None and row.created_at.startswith("2024-01-01T10:0")
    assert [r.quote for r in hostile] == [HOSTILE]
    assert graph.evidence_for_concept("concept_missing") == []


def test_concepts_for_message(synced: Synced) -> None:
    graph, built = synced
    refs = graph.concepts_for_message(built.messages["m3"].id)
    c = built.concepts
    assert [r.concept_id for r in refs] == sorted([c["rust"], c["hostile"]])
    assert {r.title for r in refs} == {"Learning Rust", HOSTILE}
    assert all(len(r.evidence_ids) == 1 for r in refs)
    assert graph.concepts_for_message(built.messages["m2"].id) == []


def test_window_follows_next_and_branches(synced: Synced) -> None:
    graph, built = synced
    m = built.messages
    window = graph.window(m["m3"].id, 1)
    wide = graph.window(m["m2"].id, 2)
    assert [(w.offset, w.message_id) for w in window] == [
        (-1, m["m2"].id), (0, m["m3"].id), (1, m["m4"].id)
    ]
    assert [(w.offset, w.message_id) for w in wide] == [
        (-1, m["m1"].id), (0, m["m2"].id), (1, m["m3"].id), (1, m["m3b"].id), (2, m["m4"].id)
    ]
    assert window[1].text == m["m3"].text
    assert graph.window("nope", 2) == []
    assert [w.message_id for w in graph.window(m["b1"].id, 0)] == [m["b1"].id]


def test_concept_history(synced: Synced) -> None:
    graph, built = synced
    c = built.concepts
    history = graph.concept_history(c["rust"])
    old = graph.concept_history(c["old"])
    assert history is not None and old is not None
    assert graph.concept_history("concept_missing") is None
    assert [(r["revision"], r["action"], r["title"]) for r in history.revisions] == [
        (1, "create", "Rust"), (2, "refine", "Learning Rust")
    ]
    assert history.merged_from == (c["old"],) and history.split_from == (c["split"],)
    assert old.merged_into == (c["rust"],) and old.split_into == ()


@pytest.mark.parametrize(
    ("at", "relations", "rust_title"),
    [
        ("2024-01-15T00:00:00.000000+00:00", {"r1", "r3"}, "Rust"),
        (T2.replace("+00:00", ".000000+00:00"), {"r1", "r2", "r3"}, "Rust"),
        ("2024-03-15T00:00:00.000000+00:00", {"r2", "r3"}, "Learning Rust"),
        ("2024-05-01T00:00:00.000000+00:00", {"r3"}, "Learning Rust"),
        ("2023-12-31T00:00:00.000000+00:00", set(), None),
    ],
)
def test_as_of_is_bitemporal(
    synced: Synced, at: str, relations: set[str], rust_title: str | None
) -> None:
    graph, built = synced
    state = graph.as_of(at, believed_at=at)
    names = {v: k for k, v in built.relations.items()}
    assert {names[r.relation_id] for r in state.relations} == relations
    titles = {c.concept_id: c.title for c in state.concepts}
    assert titles.get(built.concepts["rust"]) == rust_title


def test_as_of_separates_world_time_from_system_time(synced: Synced) -> None:
    graph, built = synced
    names = {v: k for k, v in built.relations.items()}
    at = "2024-03-15T00:00:00.000000+00:00"
    then = graph.as_of(at, believed_at=at)
    now = graph.as_of(at, believed_at="2030-01-01T00:00:00.000000+00:00")
    # r2 was believed on 2024-03-15 but has since been retracted (expired_at): known-now drops it.
    assert {names[r.relation_id] for r in then.relations} == {"r2", "r3"}
    assert {names[r.relation_id] for r in now.relations} == {"r3"}
    assert (then.at, then.believed_at) == (at, at)
    # Nothing had been seen in the world before the first evidence, whatever we know now.
    assert graph.as_of("2023-06-01T00:00:00.000000+00:00",
                       believed_at="2030-01-01T00:00:00.000000+00:00").concepts == ()


def test_hostile_values_are_inert(synced: Synced) -> None:
    graph, built = synced
    before = graph.counts()
    rows = graph.run_cypher(
        "MATCH (c:Concept) WHERE c.title = $title RETURN c.id AS id, c.title AS title",
        {"title": HOSTILE},
    )
    none = graph.run_cypher(
        "MATCH (c:Concept) WHERE c.id = $id RETURN c.id AS id",
        {"id": "x'}) MATCH (n) DETACH DELETE n //"},
    )
    titles = graph.run_cypher("MATCH (c:Conversation) RETURN c.title AS t")
    assert rows == [{"id": built.concepts["hostile"], "title": HOSTILE}]
    assert none == []
    assert HOSTILE in {r["t"] for r in titles}
    assert graph.counts() == before


def test_unknown_kind_is_refused(synced: Synced) -> None:
    graph, _ = synced
    with pytest.raises(GraphError, match="unknown graph label"):
        graph.ids("Message) DETACH DELETE (n")
    with pytest.raises(GraphError):
        graph.run_cypher("THIS IS NOT CYPHER")
    assert len(graph.ids("Message")) == 8


def _doc_queries() -> list[str]:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "graph-schema.md").read_text("utf-8")
    return [block.split("```", 1)[0] for block in text.split("```cypher\n")[1:]]


@pytest.mark.parametrize("query", _doc_queries())
def test_documented_queries_run(synced: Synced, query: str) -> None:
    graph, built = synced
    anchor = (built.messages["m3"].id if "(m:Message {id: $id})" in query
              else built.concepts["rust"] if "MERGED_INTO" not in query
              else built.concepts["old"])
    params = {"id": anchor, "t": "2024-03-15T00:00:00.000000+00:00"}
    used = {name: value for name, value in params.items() if f"${name}" in query}
    rows = graph.run_cypher(query, used)
    assert rows or "conflicts_with" in query, query  # the builder has no conflicts

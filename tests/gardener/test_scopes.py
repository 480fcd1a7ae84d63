"""Two users in one store: the gardener plans per (user, assistant) scope, never across two."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from gardener.scopes import partition_rows
from pipeline.cli.app import main
from pipeline.garden import garden_store
from pipeline.settings import Settings

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"

# what -> SQL listing the rows that link two rows of different scopes (must be none)
CROSSING = {
    "merged_into": "SELECT a.id FROM concepts a JOIN concepts b ON b.id = a.merged_into"
                   " WHERE a.user_scope != b.user_scope OR a.assistant_scope != b.assistant_scope",
    "concept_links": "SELECT l.from_concept_id FROM concept_links l"
                     " JOIN concepts a ON a.id = l.from_concept_id"
                     " JOIN concepts b ON b.id = l.to_concept_id WHERE a.user_scope !="
                     " b.user_scope OR a.assistant_scope != b.assistant_scope",
    "relations": "SELECT r.id FROM relations r JOIN concepts a ON a.id = r.source_concept_id"
                 " JOIN concepts b ON b.id = r.target_concept_id WHERE a.user_scope !="
                 " b.user_scope OR a.assistant_scope != b.assistant_scope",
    "evidence": "SELECT e.id FROM evidence e JOIN concepts c ON c.id = e.concept_id"
                " WHERE e.user_scope != c.user_scope OR e.assistant_scope != c.assistant_scope",
    "memberships": "SELECT m.topic_id FROM topic_memberships m JOIN concepts c ON c.id ="
                   " m.concept_id JOIN topics t ON t.id = m.topic_id WHERE c.user_scope !="
                   " t.user_scope OR c.assistant_scope != t.assistant_scope",
    "parent_topics": "SELECT t.id FROM topics t JOIN parent_topics p ON p.id = t.parent_id"
                     " WHERE t.user_scope != p.user_scope OR"
                     " t.assistant_scope != p.assistant_scope",
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("scopes") / "store"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CONCEPTMEM_EMBEDDER", "hashing")
        mp.setenv("NUMBA_CACHE_DIR", str(Path.home() / ".cache" / "conceptmem" / "numba"))
        base = ["--store", str(root)]
        assert main([*base, "--user-scope", "alice", "ingest", str(SAMPLE)]) == 0
        assert main([*base, "--user-scope", "bob", "ingest",
                     str(SAMPLE / "chatgpt_conversations.json")]) == 0
        assert main([*base, "extract", "--offline"]) == 0
        assert main([*base, "garden", "--trials", "2"]) == 0
    return root


def _rows(store: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(store / "staging.db")
    try:
        return list(conn.execute(sql))
    finally:
        conn.close()


@pytest.mark.parametrize("what", sorted(CROSSING))
def test_no_gardener_row_links_two_scopes(store: Path, what: str) -> None:
    assert _rows(store, CROSSING[what]) == []


def test_both_scopes_were_gardened_with_their_own_scope(store: Path) -> None:
    concepts = _rows(store, "SELECT DISTINCT user_scope FROM concepts ORDER BY 1")
    assert concepts == [("alice",), ("bob",)]
    topics = _rows(store, "SELECT DISTINCT user_scope FROM topics WHERE active = 1 ORDER BY 1")
    assert topics and set(topics) <= {("alice",), ("bob",)}  # never the run's default scope
    topic_plans = _rows(store, "SELECT user_scope FROM gardener_plans WHERE step = 'topics'")
    assert sorted(topic_plans) == [("alice",), ("bob",)]  # each user clustered on their own
    plans = _rows(store, "SELECT user_scope, assistant_scope, plan FROM gardener_plans")
    assert {p[0] for p in plans} == {"alice", "bob"}
    for user, assistant, plan in plans:
        stored = json.loads(str(plan))
        assert (stored["user_scope"], stored["assistant_scope"]) == (user, assistant)


def test_same_named_concept_stays_two_concepts(store: Path) -> None:
    shared = _rows(store, "SELECT lower(title), COUNT(DISTINCT id) FROM concepts"
                          " WHERE state IN ('active', 'weak') GROUP BY lower(title)"
                          " HAVING COUNT(DISTINCT user_scope) = 2")
    assert shared, "bob's export is part of alice's: some titles must exist in both scopes"
    assert all(int(str(n)) >= 2 for _, n in shared)


def test_regardening_two_scopes_plans_nothing(store: Path) -> None:
    settings = Settings(store=store, embedder="hashing", garden_trials=2,  # type: ignore[call-arg]
                        llm_base_url=None, llm_api_key=None)
    report = garden_store(settings)
    assert report.plans and all(plan.empty for plan in report.plans)
    assert {(p.user_scope, p.assistant_scope) for p in report.plans} == {
        ("alice", "default-assistant"), ("bob", "default-assistant")}


def test_partition_follows_the_concept() -> None:
    prov = {"assistant_scope": "a"}
    rows = {
        "concepts": [{"id": "c1", "user_scope": "u1", **prov},
                     {"id": "c2", "user_scope": "u2", **prov}],
        "evidence": [{"id": "e1", "concept_id": "c2", "user_scope": "u1", **prov}],
        "topics": [{"id": "t1", "parent_id": "p1", "user_scope": "u1", **prov}],
        "topic_memberships": [{"concept_id": "c2", "topic_id": "t1", "user_scope": "u1", **prov}],
        "parent_topics": [{"id": "p1", "user_scope": "u1", **prov}],
    }
    parts = partition_rows(rows)
    assert list(parts) == [("u1", "a"), ("u2", "a")]
    assert [r["id"] for r in parts[("u2", "a")]["evidence"]] == ["e1"]
    assert [r["id"] for r in parts[("u2", "a")]["topics"]] == ["t1"]
    assert [r["id"] for r in parts[("u2", "a")]["parent_topics"]] == ["p1"]
    assert [r["id"] for r in parts[("u1", "a")]["concepts"]] == ["c1"]


def test_revert_is_recorded_under_the_plans_scope(store: Path) -> None:
    """Last in the module: it changes the store."""
    plan = _rows(store, "SELECT id FROM gardener_plans WHERE user_scope = 'bob' AND status ="
                        " 'applied' ORDER BY applied_at DESC, rowid DESC LIMIT 1")
    assert plan, "gardening bob's export applied at least one plan"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CONCEPTMEM_EMBEDDER", "hashing")
        assert main(["--store", str(store), "garden", "--revert", str(plan[0][0])]) == 0
    runs = _rows(store, "SELECT user_scope FROM runs WHERE stage = 'garden-revert'")
    assert runs == [("bob",)]
    assert _rows(store, CROSSING["merged_into"]) == []

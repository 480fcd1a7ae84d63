"""Two users' exports in one store: no read path returns the other's data; gardening keeps
them apart; a row that mixes them is a conflict."""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conftest import SAMPLE, store_settings

from graph import GraphError
from pipeline import lineage
from pipeline.extract import extract_store
from pipeline.forget import Selector, forget
from pipeline.garden import garden_store
from pipeline.health import diagnose
from pipeline.ingest import ingest_paths
from pipeline.policy import PolicyRow, visible
from pipeline.settings import Settings
from pipeline.sync import sync_store
from staging import StagingStore
from staging.receipts import read_receipts

ALICE, BOB = ("alice", "asst-1"), ("bob", "asst-1")


def _as(settings: Settings, scope: tuple[str, str]) -> Settings:
    return settings.model_copy(update={"user_scope": scope[0], "assistant_scope": scope[1]})


def _ids(settings: Settings, sql: str, scope: tuple[str, str]) -> list[str]:
    conn = sqlite3.connect(settings.staging_db if "concepts" in sql else settings.source_db)
    try:
        return [r[0] for r in conn.execute(sql, scope)]
    finally:
        conn.close()


@pytest.fixture(scope="module")
def two_users(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    base = store_settings(tmp_path_factory.mktemp("two") / "store")
    ingest_paths(_as(base, ALICE), [SAMPLE])
    ingest_paths(_as(base, BOB), [SAMPLE / "chatgpt_conversations.json"])
    extract_store(base, offline=True)
    sync_store(base)
    return base


def _concepts(s: Settings, scope: tuple[str, str]) -> list[str]:
    return _ids(s, "SELECT id FROM concepts WHERE user_scope = ? AND assistant_scope = ?", scope)


def _messages(s: Settings, scope: tuple[str, str]) -> list[str]:
    return _ids(s, "SELECT id FROM messages WHERE user_scope = ? AND assistant_scope = ?", scope)


def test_lineage_and_cypher_show_only_the_readers_scope(two_users: Settings) -> None:
    alice = _as(two_users, ALICE)
    bob_concept, bob_message = _concepts(two_users, BOB)[0], _messages(two_users, BOB)[0]
    alice_concept, alice_message = _concepts(two_users, ALICE)[0], _messages(two_users, ALICE)[0]
    assert lineage.concept_evidence(alice, alice_concept)
    for call in (lambda: lineage.concept_evidence(alice, bob_concept),
                 lambda: lineage.concept_history(alice, bob_concept),
                 lambda: lineage.message_concepts(alice, bob_message),
                 lambda: lineage.message_window(alice, bob_message, 2)):
        with pytest.raises(GraphError, match="is not in the graph"):
            call()
    window = lineage.message_window(alice, alice_message, 50)
    assert window and {w.message_id for w in window} <= set(_messages(two_users, ALICE))
    state = lineage.state_as_of(alice, "2100-01-01")
    assert {c.concept_id for c in state.concepts} <= set(_concepts(two_users, ALICE))
    assert len(state.concepts) > 10
    nodes = lineage.run_cypher(alice, "MATCH (c:Concept) RETURN c.id AS id")
    assert nodes and {r["id"] for r in nodes} <= set(_concepts(two_users, ALICE))
    texts = lineage.run_cypher(alice, "MATCH (m:Message) RETURN m.id AS id, m.text AS t")
    assert {r["id"] for r in texts} == set(_messages(two_users, ALICE))


def test_right_user_wrong_assistant_sees_nothing(two_users: Settings) -> None:
    other = _as(two_users, ("alice", "asst-2"))
    with pytest.raises(GraphError):
        lineage.concept_evidence(other, _concepts(two_users, ALICE)[0])
    assert lineage.state_as_of(other, "2100-01-01").concepts == ()
    assert lineage.run_cypher(other, "MATCH (c:Concept) RETURN c.id AS id") == []
    now = datetime.now(UTC)
    assert not visible(ALICE, ("alice", "asst-2"), None, now)
    assert visible(ALICE, ALICE, PolicyRow("m", "personal", None), now)
    expired = PolicyRow("m", "personal", (now - timedelta(days=1)).isoformat())
    assert not visible(ALICE, ALICE, expired, now)


def test_receipts_by_scope_hold_no_other_scope(two_users: Settings) -> None:
    staging = StagingStore.open(two_users.staging_db)
    try:
        mine = read_receipts(staging.db, scope=ALICE)
        map_targets = {r["target"] for r in read_receipts(staging.db, stage="map")}
    finally:
        staging.close()
    assert all((r["user_scope"], r["assistant_scope"]) == ALICE for r in mine)
    assert map_targets  # the extract run wrote map receipts for both users' segments


def test_forget_a_user_scope_leaves_the_other_intact(
    two_users: Settings, copy_store: Callable[[Settings], Settings]
) -> None:
    settings = copy_store(two_users)
    before = sorted(_concepts(settings, ALICE))
    report = forget(settings, Selector(user_scope="bob"))
    assert report.messages == len(_messages(two_users, BOB)) > 0
    assert _messages(settings, BOB) == [] and _concepts(settings, BOB) == []
    assert sorted(_concepts(settings, ALICE)) == before
    assert diagnose(_as(settings, ALICE)).state == "healthy"


def test_gardening_two_users_together_is_not_a_scope_conflict(
    two_users: Settings, copy_store: Callable[[Settings], Settings]
) -> None:
    """Driven for real: the gardener plans per scope, so gardening both users at once leaves
    every merge, relation, evidence span and topic within one scope."""
    settings = copy_store(two_users)
    assert diagnose(settings).state == "healthy"
    garden_store(settings)
    report = diagnose(settings)
    assert [f for f in report.findings if f.state == "scope_conflict"] == []
    assert report.state != "scope_conflict"


def test_evidence_moved_onto_another_users_concept_is_a_scope_conflict(
    two_users: Settings, copy_store: Callable[[Settings], Settings]
) -> None:
    """A real conflict (a write outside the gardener moves bob's span onto alice's concept)."""
    settings = copy_store(two_users)
    conn = sqlite3.connect(settings.staging_db)
    try:
        with conn:
            conn.execute(
                "UPDATE evidence SET concept_id = ? WHERE id = (SELECT MIN(id) FROM evidence"
                " WHERE user_scope = ?)", (_concepts(settings, ALICE)[0], BOB[0]))
    finally:
        conn.close()
    report = diagnose(settings)
    assert report.state == "scope_conflict"
    assert "evidence_from_another_scope" in {
        f.reason for f in report.findings if f.state == "scope_conflict"}

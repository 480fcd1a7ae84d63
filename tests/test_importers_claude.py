"""Claude importer: 2024 and 2025 layouts, branching, thinking kept apart, malformed input."""

from __future__ import annotations

import itertools
import json
import sqlite3
from pathlib import Path

import pytest

from ontology import Message
from pipeline.errors import InputFileError
from pipeline.ingest import ingest_paths
from pipeline.settings import Settings
from staging import SourceStore

FIXTURES = Path(__file__).parent / "fixtures"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "claude"
EDGE = FIXTURES / "claude_edge_cases.json"


def _messages(settings: Settings) -> dict[str, Message]:
    store = SourceStore.open(settings.source_db)
    try:
        return {m.external_id: m for m in store.messages()}
    finally:
        store.close()


def _count(settings: Settings, table: str) -> int:
    with sqlite3.connect(settings.source_db) as conn:
        return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


@pytest.mark.parametrize(("name", "conversations", "messages"), [
    ("claude-to-sqlite_artifacts.json", 1, 20),
    ("claude-to-sqlite_example.json", 1, 2),
])
def test_committed_samples(settings: Settings, name: str, conversations: int,
                           messages: int) -> None:
    report = ingest_paths(settings, [FIXTURES / name])
    assert report.files[0].format == "claude"
    assert (report.totals.conversations, report.totals.messages) == (conversations, messages)
    stored = _messages(settings)
    assert all(m.on_current_branch for m in stored.values())  # old layout: one chain
    roles = {m.role for m in stored.values()}
    assert roles == {"user", "assistant"}


def test_artifacts_sample_chains_by_time_not_export_order(settings: Settings) -> None:
    ingest_paths(settings, [FIXTURES / "claude-to-sqlite_artifacts.json"])
    ordered = sorted(_messages(settings).values(), key=lambda m: m.position)
    times = [m.created_at for m in ordered]
    assert times == sorted(times)  # type: ignore[type-var]
    assert ordered[0].parent_id is None
    assert all(b.parent_id == a.id for a, b in itertools.pairwise(ordered))
    assert "<antArtifact" in "".join(m.text for m in ordered)


@pytest.mark.parametrize(("name", "conversations", "messages", "current"), [
    ("handwritten_chatlore_claude_conversations.json", 3, 7, 6),
    ("yaleman_anthropic-data_conversations.json", 1, 2, 2),
])
def test_unlicensed_samples_from_shared_data(
    settings: Settings, name: str, conversations: int, messages: int, current: int
) -> None:
    path = SHARED / name
    if not path.exists():
        pytest.skip(f"{path} is absent (local-only sample, not committed: no license)")
    report = ingest_paths(settings, [path])
    assert (report.totals.conversations, report.totals.messages) == (conversations, messages)
    stored = _messages(settings)
    assert sum(m.on_current_branch for m in stored.values()) == current
    for message in stored.values():
        thinking = [p.text for p in message.parts if p.kind == "thinking"]
        assert all(t and t not in message.text for t in thinking)


def test_edge_cases(settings: Settings) -> None:
    report = ingest_paths(settings, [EDGE])
    assert (report.totals.conversations, report.totals.messages) == (4, 9)
    m = _messages(settings)
    assert m["q1"].role == "user" and m["q1"].parent_id is None  # all-zero uuid = root
    assert m["a1"].parent_id == m["a2"].parent_id == m["q1"].id  # a retry: two siblings
    assert [k for k in ("q1", "a1", "a2", "q2") if m[k].on_current_branch] == ["q1", "a2", "q2"]
    assert m["a1"].text == "The kitchen may be too cold."
    assert [p.kind for p in m["a1"].parts] == ["thinking"]
    assert m["a2"].text == "Try feeding twice a day at a 1:1:1 ratio."
    assert [p.kind for p in m["a2"].parts] == ["tool_use", "tool_result"]
    assert m["a2"].parts[1].text == "100"
    attachment = m["q1"].parts[0]
    assert attachment.kind == "attachment" and "day 2" in attachment.text
    assert m["q1"].metadata["files"] == ["jar.jpg"]
    # old layout: chained in time order although the export lists o2 first
    assert m["o1"].parent_id is None and m["o2"].parent_id == m["o1"].id
    assert m["o3"].text == "  \n " and m["o3"].parent_id == m["o2"].id  # kept verbatim
    # thinking run into the top-level text: the answer comes from the text blocks only
    assert m["t2"].text == "Botanically yes; culinarily it is a vegetable."
    assert m["t2"].parts[0].text == "The user asks about botany."
    with sqlite3.connect(settings.source_db) as conn:
        empty = conn.execute(
            "SELECT metadata FROM conversations WHERE title = 'No messages at all'"
        ).fetchone()
    assert json.loads(empty[0]) == {"chat_messages": "missing"}


def test_broken_records_are_quarantined(settings: Settings, tmp_path: Path) -> None:
    records = json.loads(EDGE.read_text())
    records.insert(1, {"name": "no uuid", "chat_messages": []})
    records.append({"uuid": "bad-role", "chat_messages": [{"uuid": "x", "sender": "robot",
                                                           "text": "beep"}]})
    records.append({"uuid": "bad-list", "chat_messages": {"not": "a list"}})
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(records))
    report = ingest_paths(settings, [path])
    assert report.totals.messages == 9
    reasons = sorted(r.reason for r in report.totals.rejected)
    assert reasons == ["chat_messages is a dict, not a list", "conversation has no uuid",
                       "message x: unknown role 'robot'"]
    assert _count(settings, "quarantine") == 3


def test_truncated_claude_export_stores_nothing(settings: Settings, tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    path.write_text(EDGE.read_text()[:-200])
    with pytest.raises(InputFileError, match="truncated"):
        ingest_paths(settings, [path])
    assert _count(settings, "messages") == 0 and _count(settings, "sources") == 0


def test_newer_export_with_a_retry_adds_only_the_new_branch(
    settings: Settings, tmp_path: Path
) -> None:
    full = json.loads(EDGE.read_text())[:1]
    old = json.loads(json.dumps(full))
    old[0]["chat_messages"] = old[0]["chat_messages"][:2]  # before the retry and follow-up
    old_path, new_path = tmp_path / "old.json", tmp_path / "new.json"
    old_path.write_text(json.dumps(old))
    new_path.write_text(json.dumps(full))
    ingest_paths(settings, [old_path])
    assert _messages(settings)["a1"].on_current_branch
    report = ingest_paths(settings, [new_path])
    assert (report.totals.conversations, report.totals.messages) == (0, 2)
    assert report.totals.messages_updated == 1  # a1 left the current branch
    m = _messages(settings)
    assert not m["a1"].on_current_branch and m["q2"].on_current_branch

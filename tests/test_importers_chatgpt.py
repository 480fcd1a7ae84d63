"""ChatGPT importer: real and hand-written samples, content types, malformed input."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from ontology import Message
from pipeline.errors import ImportFormatError, InputFileError
from pipeline.ingest import ingest_paths
from pipeline.settings import Settings
from staging import SourceStore

FIXTURES = Path(__file__).parent / "fixtures"
TREE = FIXTURES / "librechat_chatgpt-tree.json"
MODERN = FIXTURES / "handwritten_librechat_chatgpt-modern-export.json"


def _messages(settings: Settings) -> list[Message]:
    store = SourceStore.open(settings.source_db)
    try:
        return list(store.messages())  # read back through pydantic validation
    finally:
        store.close()


def _rows(settings: Settings, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(settings.source_db) as conn:
        return conn.execute(sql).fetchall()


def test_tree_sample_keeps_every_branch_and_flags_the_current_path(settings: Settings) -> None:
    report = ingest_paths(settings, [TREE])
    assert (report.totals.conversations, report.totals.messages) == (1, 12)
    messages = _messages(settings)
    by_ext = {m.external_id[:8]: m for m in messages}
    # 13 nodes = a null root (not stored) + 12 messages, incl. an empty hidden system message.
    assert "aaa1f70c" not in by_ext
    system = by_ext["d38605d2"]
    assert (system.role, system.text, system.parent_id) == ("system", "", None)
    assert system.metadata.get("empty") is True
    assert by_ext["aaa297ba"].parent_id == system.id
    current = [m.external_id[:8] for m in messages if m.on_current_branch]
    assert current == [
        "d38605d2", "aaa297ba", "bda8a275", "aaa236a3", "db88eddf", "aaa20127", "f63b8e17"]
    # both answers to "tell me a joke" are kept as siblings
    joke = by_ext["aaa20127"].id
    assert sorted(m.external_id[:8] for m in messages if m.parent_id == joke) == [
        "d0d2a7df", "f63b8e17"]
    assert by_ext["ada93f81"].metadata["status"] == "in_progress"
    # depth-first positions, siblings by create_time
    order = [m.external_id[:8] for m in sorted(messages, key=lambda m: m.position)]
    assert order[:7] == [
        "d38605d2", "aaa297ba", "bda8a275", "aaa24023", "23afbea9", "aaa292cc", "ada93f81"]
    assert [m.position for m in messages] == sorted(m.position for m in messages)


def test_modern_export_stores_a_conversation_without_mapping(settings: Settings) -> None:
    report = ingest_paths(settings, [MODERN])
    assert (report.totals.conversations, report.totals.messages) == (3, 7)
    rows = _rows(settings, "SELECT title, metadata FROM conversations ORDER BY created_at")
    assert json.loads(rows[1][1])["mapping"] == "missing"
    counts = dict(_rows(settings, "SELECT c.title, COUNT(m.id) FROM conversations c LEFT JOIN"
                                  " messages m ON m.conversation_id = c.id GROUP BY c.id"))
    assert counts == {"Deploying the staging cluster": 5, "Corrupted entry": 0,
                      "Weeknight pasta": 2}
    context = next(m for m in _messages(settings) if m.external_id == "ctx-node")
    assert context.role == "system" and context.created_at is None
    assert context.parts[0].kind == "user_editable_context"
    assert "The user is an SRE." in context.text


def _node(node_id: str, parent: str | None, message: dict[str, Any] | None) -> dict[str, Any]:
    return {"id": node_id, "parent": parent, "children": [], "message": message}


def _msg(msg_id: str, role: str, content: dict[str, Any], ts: float | None) -> dict[str, Any]:
    return {"id": msg_id, "author": {"role": role, "name": "python" if role == "tool" else None},
            "create_time": ts, "content": content, "status": "finished_successfully",
            "metadata": {}}


def _content_types_export() -> list[dict[str, Any]]:
    specs: list[tuple[str, str, dict[str, Any]]] = [
        ("user", "m-user", {"content_type": "multimodal_text", "parts": [
            {"content_type": "image_asset_pointer", "asset_pointer": "file-service://x",
             "width": 10, "height": 10},
            "What is in this picture?"]}),
        ("assistant", "m-code", {"content_type": "code", "language": "python",
                                 "text": "print(1 + 1)"}),
        ("tool", "m-exec", {"content_type": "execution_output", "text": "2"}),
        ("tool", "m-browse", {"content_type": "tether_browsing_display",
                              "result": "Search results", "summary": None, "assets": []}),
        ("tool", "m-quote", {"content_type": "tether_quote", "url": "https://example.org",
                             "domain": "example.org", "title": "Example",
                             "text": "A quoted passage."}),
        ("tool", "m-error", {"content_type": "system_error", "name": "tool_error",
                             "text": "Timed out"}),
        ("assistant", "m-thoughts", {"content_type": "thoughts", "thoughts": [
            {"summary": "Plan", "content": "Count the objects."}]}),
        ("assistant", "m-recap", {"content_type": "reasoning_recap",
                                  "content": "Thought for 4 seconds"}),
        ("assistant", "m-final", {"content_type": "text", "parts": ["Two apples."]}),
    ]
    mapping: dict[str, Any] = {"root": _node("root", None, None)}
    parent = "root"
    for i, (role, msg_id, content) in enumerate(specs):
        node_id = f"node-{i}"
        ts = None if msg_id == "m-exec" else 1700000000.0 + i
        mapping[node_id] = _node(node_id, parent, _msg(msg_id, role, content, ts))
        parent = node_id
    return [{"id": "conv-types", "title": "types", "create_time": 1700000000.0,
             "update_time": None, "mapping": mapping, "current_node": parent}]


def test_non_text_content_types_become_parts(settings: Settings, tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(_content_types_export()))
    ingest_paths(settings, [path])
    by_ext = {m.external_id: m for m in _messages(settings)}
    assert len(by_ext) == 9
    user = by_ext["m-user"]
    assert user.text == "What is in this picture?"
    assert [p.kind for p in user.parts] == ["image", "text"]
    assert user.metadata["node_id"] == "node-0"  # message id differs from the node id
    assert by_ext["m-code"].text == "print(1 + 1)" and by_ext["m-code"].parts[0].kind == "code"
    assert by_ext["m-exec"].created_at is None and by_ext["m-exec"].text == "2"
    assert by_ext["m-browse"].text == "Search results"
    assert by_ext["m-quote"].parts[0].data["url"] == "https://example.org"
    assert by_ext["m-error"].text == "tool_error: Timed out"
    assert by_ext["m-error"].author == "python"
    thoughts = by_ext["m-thoughts"]
    assert thoughts.text == "" and thoughts.parts[0].kind == "thinking"
    assert "Count the objects." in thoughts.parts[0].text
    assert by_ext["m-recap"].parts[0].text == "Thought for 4 seconds"
    assert all(m.on_current_branch for m in by_ext.values())


def test_several_export_files_just_work(settings: Settings, tmp_path: Path) -> None:
    exports = _content_types_export()
    first, second = tmp_path / "conversations-000.json", tmp_path / "conversations-001.json"
    first.write_text(json.dumps(exports))
    second.write_text(TREE.read_text())
    report = ingest_paths(settings, [first, second])
    assert [f.format for f in report.files] == ["chatgpt", "chatgpt"]
    assert _rows(settings, "SELECT COUNT(*) FROM messages") == [(21,)]


def test_broken_conversation_is_quarantined_and_the_rest_stored(
    settings: Settings, tmp_path: Path
) -> None:
    data = json.loads(TREE.read_text())
    broken = {"id": "broken-1", "title": "bad", "mapping": ["not", "a", "dict"]}
    no_id = {"title": "no id at all", "mapping": {}}
    odd_parent = {"id": "odd", "mapping": {"n": {"parent": ["x"], "message": {
        "id": "m", "author": {"role": "user"}, "content": {"parts": ["hi"]}}}}}
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps([broken, *data, no_id, 42, odd_parent]))
    report = ingest_paths(settings, [path])
    assert report.totals.messages == 12
    reasons = {r.record: r.reason for r in report.totals.rejected}
    assert reasons["record 1 (id broken-1)"] == "mapping is a list, not an object"
    assert reasons["record 3"] == "conversation has no id or conversation_id"
    assert reasons["record 4"] == "expected an object, got int"
    assert reasons["record 5 (id odd)"].startswith("malformed record (TypeError")
    stored = _rows(settings, "SELECT record, reason, source_path FROM quarantine ORDER BY record")
    assert len(stored) == 4 and all(row[2] == str(path.resolve()) for row in stored)
    assert "quarantined record 1 (id broken-1)" in report.summary()


def test_truncated_json_raises_and_stores_nothing(settings: Settings, tmp_path: Path) -> None:
    ingest_paths(settings, [MODERN])
    before = _rows(settings, "SELECT (SELECT COUNT(*) FROM sources),"
                             " (SELECT COUNT(*) FROM conversations),"
                             " (SELECT COUNT(*) FROM messages)")
    text = TREE.read_text()
    path = tmp_path / "truncated.json"
    path.write_text(text[: len(text) // 2])
    with pytest.raises(InputFileError) as caught:
        ingest_paths(settings, [path])
    assert caught.value.path == str(path)
    assert caught.value.record == "record 1"
    assert "truncated" in caught.value.reason
    after = _rows(settings, "SELECT (SELECT COUNT(*) FROM sources),"
                            " (SELECT COUNT(*) FROM conversations),"
                            " (SELECT COUNT(*) FROM messages)")
    assert after == before
    assert _rows(settings, "SELECT COUNT(*) FROM messages_fts") == [(before[0][2],)]


def test_truncated_after_good_records_rolls_back_the_whole_file(
    settings: Settings, tmp_path: Path
) -> None:
    records = json.loads(MODERN.read_text())
    text = json.dumps(records)
    path = tmp_path / "cut.json"
    path.write_text(text[: text.rindex('{"title": "Weeknight pasta"') + 40])
    with pytest.raises(InputFileError) as caught:
        ingest_paths(settings, [path])
    assert caught.value.record == "record 3"
    assert _rows(settings, "SELECT COUNT(*) FROM conversations") == [(0,)]
    assert _rows(settings, "SELECT COUNT(*) FROM sources") == [(0,)]


def test_wrong_top_level_type_is_a_format_error(settings: Settings, tmp_path: Path) -> None:
    path = tmp_path / "number.json"
    path.write_text("42")
    with pytest.raises(ImportFormatError, match="not a JSON or JSONL export"):
        ingest_paths(settings, [path])
    path.write_text('["just", "strings"]')
    with pytest.raises(ImportFormatError, match="unknown export format"):
        ingest_paths(settings, [path])
    with pytest.raises(ImportFormatError, match="unknown format 'chatgpt-2030'"):
        ingest_paths(settings, [path], format_name="chatgpt-2030")

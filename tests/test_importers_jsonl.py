"""JSON lines of messages and ShareGPT: grouping, derived ids, bad lines quarantined."""

from __future__ import annotations

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


def _messages(settings: Settings) -> list[Message]:
    store = SourceStore.open(settings.source_db)
    try:
        return list(store.messages())
    finally:
        store.close()


def test_message_lines(settings: Settings) -> None:
    report = ingest_paths(settings, [FIXTURES / "messages.jsonl"])
    assert report.files[0].format == "jsonl"
    assert (report.totals.conversations, report.totals.messages) == (2, 6)
    rejected = {r.record: r.reason for r in report.totals.rejected}
    assert set(rejected) == {"line 7", "line 8"}
    assert rejected["line 7"] == "line: unknown role 'robot'"
    assert rejected["line 8"].startswith("invalid JSON")
    by_ext = {m.external_id: m for m in _messages(settings)}
    # t-4 comes after another conversation's lines, yet joins its parent t-3
    assert by_ext["t-4"].parent_id == by_ext["t-3"].id
    assert by_ext["t-4"].position == 3
    assert by_ext["t-3"].parent_id == by_ext["t-1"].id  # explicit parent: a branch
    assert by_ext["t-3"].text == "Regenerated: consider the shorter Alta Via 2 sections."
    books = sorted((m for m in by_ext.values() if not m.external_id.startswith("t-")),
                   key=lambda m: m.position)
    assert [m.role for m in books] == ["user", "assistant"]
    assert books[0].external_id.startswith("0:user:")  # derived from position, role, text
    assert books[1].parent_id == books[0].id
    assert books[0].created_at is not None and books[0].created_at.year == 2024


def test_message_lines_reimport_adds_nothing(settings: Settings) -> None:
    ingest_paths(settings, [FIXTURES / "messages.jsonl"])
    again = ingest_paths(settings, [FIXTURES / "messages.jsonl"])
    totals = again.totals
    assert (totals.sources, totals.conversations, totals.messages, totals.quarantined) == (
        0, 0, 0, 0)
    assert len(totals.rejected) == 2  # still reported, not stored twice


def test_sharegpt_array(settings: Settings) -> None:
    report = ingest_paths(settings, [FIXTURES / "sharegpt.json"])
    assert report.files[0].format == "sharegpt"
    assert (report.totals.conversations, report.totals.messages) == (2, 5)
    assert [r.reason for r in report.totals.rejected] == [
        "conversations is not a list of {from, value} turns"]
    roles = [m.role for m in _messages(settings)]
    assert roles.count("system") == 1 and roles.count("assistant") == 2


def test_sharegpt_lines_give_the_same_ids_as_the_array(
    settings: Settings, tmp_path: Path
) -> None:
    records = json.loads((FIXTURES / "sharegpt.json").read_text())[:2]
    lines = tmp_path / "sharegpt.jsonl"
    lines.write_text("\n".join(json.dumps(r) for r in reversed(records)) + "\n")
    ingest_paths(settings, [lines])
    first = {m.id for m in _messages(settings)}
    other = Settings(store=tmp_path / "other")
    ingest_paths(other, [FIXTURES / "sharegpt.json"])
    assert first == {m.id for m in _messages(other)}


def test_jsonl_garbage_first_line_is_a_file_error(settings: Settings, tmp_path: Path) -> None:
    path = tmp_path / "broken.jsonl"
    path.write_text('{"conversation_id": "a", "role": "user", "content": "hi"\n{}\n')
    with pytest.raises(InputFileError):
        ingest_paths(settings, [path])
    assert not settings.source_db.exists() or sqlite3.connect(settings.source_db).execute(
        "SELECT COUNT(*) FROM sources").fetchone()[0] == 0


def test_a_line_without_conversation_id_is_quarantined(
    settings: Settings, tmp_path: Path
) -> None:
    path = tmp_path / "lines.jsonl"
    path.write_text(
        '{"conversation_id": "a", "role": "user", "content": "hello"}\n'
        '{"role": "assistant", "content": "orphan"}\n'
        '[1, 2]\n'
        '{"conversation_id": "a", "role": "assistant", "content": {"bad": "content"}}\n'
    )
    report = ingest_paths(settings, [path])
    assert report.totals.messages == 1
    assert [r.reason for r in report.totals.rejected] == [
        "line has no conversation_id", "expected an object, got list",
        "content is a dict, not text"]


def test_odd_field_types_still_give_valid_messages(settings: Settings, tmp_path: Path) -> None:
    path = tmp_path / "odd.jsonl"
    path.write_text(json.dumps({"conversation_id": 7, "role": "user", "content": "hi",
                                "author": {"name": "x"}, "timestamp": "not a time",
                                "id": 12}) + "\n")
    ingest_paths(settings, [path])
    (message,) = _messages(settings)  # read back through pydantic validation
    assert (message.author, message.created_at, message.external_id) == (None, None, "12")

"""`conceptmem forget`: nothing of the deleted text left anywhere; same as never having seen it."""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conftest import SAMPLE, build, store_settings
from residue import deleted_fragments, file_residues

from ontology import normalize_name, text_hash
from pipeline.cli import main
from pipeline.forget import NothingSelected, Selector, forget
from pipeline.lineage import run_cypher
from pipeline.settings import Settings

GONE = "f02673a5-67f8-5485-b658-9b9e67f0a8e6"  # "Rust CLI for budgeting" in data/sample


def _rows(path: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(path)
    try:
        return [tuple(r) for r in conn.execute(sql)]
    finally:
        conn.close()


def _deleted_mention_hashes(settings: Settings, conversation: str) -> set[str]:
    ids = {r[0] for r in _rows(settings.source_db, "SELECT m.id FROM messages m JOIN"
           f" conversations c ON c.id = m.conversation_id WHERE c.external_id = '{conversation}'")}
    titles = [r[1] for r in _rows(settings.staging_db, "SELECT message_id, title FROM mentions")
              if r[0] in ids]
    quotes = [r[1] for r in _rows(settings.staging_db, "SELECT message_id, quote FROM evidence")
              if r[0] in ids]
    return {text_hash(normalize_name(t)) for t in titles} | {text_hash(q) for q in quotes}


def test_forget_a_conversation_leaves_no_residue(
    sample_store: Settings, copy_store: Callable[[Settings], Settings]
) -> None:
    settings = copy_store(sample_store)
    hashes = _deleted_mention_hashes(settings, GONE)
    dry = forget(settings, Selector(conversation=GONE), dry_run=True)
    assert (dry.messages, dry.conversations) == (7, 1)
    assert _rows(settings.source_db, "SELECT COUNT(*) FROM messages")[0][0] == 110  # untouched
    assert main(["--store", str(settings.store), "forget", "--conversation", GONE]) == 0
    fragments = deleted_fragments(sample_store.store, GONE, settings.store)
    assert len(fragments) > 20
    assert file_residues(settings.store, fragments) == {}
    files = {p.name for p in settings.store.iterdir()}
    assert "source.db-wal" not in files or (settings.store / "source.db-wal").stat().st_size == 0
    # every read path: FTS, the graph's lineage, the embedding cache
    assert _rows(settings.source_db,
                 "SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH 'Ledgerline'"
                 )[0][0] == _rows(settings.source_db, "SELECT COUNT(*) FROM messages WHERE"
                                  " text LIKE '%Ledgerline%'")[0][0]
    cached = {r[0] for r in _rows(settings.staging_db, "SELECT text_hash FROM embeddings")}
    live = {r[0] for r in _rows(settings.staging_db, "SELECT title FROM concepts")}
    assert hashes - {text_hash(normalize_name(t)) for t in live}  # some were deleted text...
    assert not (cached & (hashes - {text_hash(normalize_name(t)) for t in live}))  # ...gone
    conv = _rows(sample_store.source_db,
                 f"SELECT id FROM conversations WHERE external_id = '{GONE}'")[0][0]
    assert run_cypher(settings, "MATCH (c:Conversation {id: $id}) RETURN c.id",
                      {"id": conv}) == []
    receipt = _rows(settings.staging_db, "SELECT counts, status FROM receipts WHERE stage ="
                    " 'forget' AND target != run_id ORDER BY rowid")
    assert [r[1] for r in receipt] == ["started", "committed"]
    assert json.loads(str(receipt[-1][0]))["messages"] == 7
    assert _rows(settings.staging_db, "SELECT COUNT(*) FROM forgotten WHERE kind = 'message'"
                 )[0][0] == 7


def test_forget_twice_selects_nothing_and_says_so(
    sample_store: Settings, copy_store: Callable[[Settings], Settings]
) -> None:
    settings = copy_store(sample_store)
    with pytest.raises(NothingSelected):
        forget(settings, Selector(message="no-such-message"))
    with pytest.raises(Exception, match="exactly one selector"):
        forget(settings, Selector(message="a", conversation="b"))


def _without(conversation: str, target: Path) -> Path:
    target.mkdir()
    for path in SAMPLE.glob("*.json"):
        data = json.loads(path.read_text())
        if isinstance(data, list):
            data = [c for c in data if c.get("id") != conversation
                    and c.get("uuid") != conversation]
        (target / path.name).write_text(json.dumps(data))
    return target


def _state(settings: Settings) -> dict[str, object]:
    db = settings.staging_db
    topics = _rows(db, "SELECT t.label, group_concat(m.concept_id) FROM topics t JOIN"
                   " topic_memberships m ON m.topic_id = t.id WHERE t.active = 1 AND m.active"
                   " = 1 GROUP BY t.id")
    return {
        "concepts": sorted(_rows(db, "SELECT id, title, type, description, state, aliases,"
                                     " merged_into, round(confidence, 6) FROM concepts")),
        "evidence": sorted(_rows(db, "SELECT concept_id, message_id, start, \"end\", quote"
                                     " FROM evidence")),
        "relations": sorted(_rows(db, "SELECT source_concept_id, target_concept_id, relation,"
                                      " valid_at, invalid_at, evidence_message_id"
                                      " FROM relations")),
        "links": sorted(_rows(db, "SELECT from_concept_id, to_concept_id, kind, active"
                                  " FROM concept_links")),
        "topics": sorted((label, ",".join(sorted(str(ids).split(",")))) for label, ids in topics),
    }


def test_forget_equals_a_store_that_never_saw_the_conversation(
    sample_store: Settings, copy_store: Callable[[Settings], Settings], tmp_path: Path
) -> None:
    settings = copy_store(sample_store)
    forget(settings, Selector(conversation=GONE))
    never = build(store_settings(tmp_path / "never"), [_without(GONE, tmp_path / "export")])
    ours, theirs = _state(settings), _state(never)
    assert ours["concepts"] and ours["topics"]
    for key in ours:
        assert ours[key] == theirs[key], key
    shutil.rmtree(never.store)

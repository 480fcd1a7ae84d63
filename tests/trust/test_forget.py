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


def test_every_selector_resolves_by_store_or_export_id(sample_store: Settings) -> None:
    conv_id, conv_ext = _rows(sample_store.source_db, "SELECT id, external_id FROM"
                              f" conversations WHERE external_id = '{GONE}'")[0]
    msg_id, msg_ext = _rows(sample_store.source_db, "SELECT id, external_id FROM messages"
                            f" WHERE conversation_id = '{conv_id}' ORDER BY position")[0]
    source_path = _rows(sample_store.source_db, "SELECT s.path FROM sources s JOIN"
                        f" conversations c ON c.source_id = s.id WHERE c.id = '{conv_id}'")[0][0]
    in_conv = {r[0] for r in _rows(sample_store.source_db, "SELECT id FROM messages WHERE"
                                   f" conversation_id = '{conv_id}'")}
    concept = next(c for c, m in _rows(sample_store.staging_db, "SELECT concept_id, message_id"
                                       " FROM evidence ORDER BY id") if m in in_conv)

    def count(**selector: object) -> int:
        return forget(sample_store, Selector(**selector), dry_run=True).messages  # type: ignore[arg-type]

    assert count(conversation=conv_id) == count(conversation=conv_ext) == 7
    assert count(message=msg_id) == count(message=msg_ext) == 1
    assert count(source=str(source_path)) == 100  # the ChatGPT file of data/sample
    assert count(user_scope="default-user") == 110
    assert count(concept=concept) >= 1
    timed = _rows(sample_store.source_db, "SELECT COUNT(*) FROM messages WHERE created_at"
                  " IS NOT NULL")[0][0]
    assert count(between=("2000-01-01", "2100-01-01")) == timed > 90  # untimed: never picked
    with pytest.raises(NothingSelected):
        count(between=("1990-01-01", "1990-02-01"))


def test_forget_one_message_relinks_its_replies_and_stays_healthy(
    sample_store: Settings, copy_store: Callable[[Settings], Settings]
) -> None:
    from pipeline.health import diagnose

    settings = copy_store(sample_store)
    conv = _rows(settings.source_db, f"SELECT id FROM conversations WHERE external_id = '{GONE}'"
                 )[0][0]
    chain = _rows(settings.source_db, "SELECT id, parent_id FROM messages WHERE"
                  f" conversation_id = '{conv}' AND on_current_branch = 1 ORDER BY position")
    middle, parent = chain[2]
    child = chain[3][0]
    forget(settings, Selector(message=middle))
    left = dict(_rows(settings.source_db, "SELECT id, parent_id FROM messages WHERE"
                      f" conversation_id = '{conv}'"))
    assert middle not in left and left[child] == parent
    assert not _rows(settings.staging_db, "SELECT 1 FROM segment_messages WHERE message_id ="
                     f" '{middle}'")
    assert _rows(settings.staging_db, "SELECT COUNT(*) FROM segments WHERE conversation_id ="
                 f" '{conv}' AND status = 'extracted'")[0][0] >= 1  # re-segmented, re-extracted
    assert diagnose(settings).state == "healthy"

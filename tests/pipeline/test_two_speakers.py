"""Two people talking (LoCoMo, two-human ShareGPT): both are speakers whose turns are memory.

Runs the real ingest and extract stages offline on real SQLite files.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from pipeline.extract import extract_store
from pipeline.ingest import ingest_paths
from pipeline.settings import Settings

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _evidence_by_author(settings: Settings) -> dict[str, tuple[int, int]]:
    """author -> (substantive turns, turns with evidence of a live concept)."""
    source = sqlite3.connect(settings.source_db)
    source.execute("ATTACH DATABASE ? AS staging", [str(settings.staging_db)])
    rows = source.execute(
        "SELECT m.author, m.text, EXISTS (SELECT 1 FROM staging.evidence e"
        " JOIN staging.concepts c ON c.id = e.concept_id"
        " WHERE e.message_id = m.id AND c.state IN ('active', 'weak')) FROM messages m"
    ).fetchall()
    source.close()
    out: dict[str, tuple[int, int]] = {}
    for author, text, covered in rows:
        if len(text.split()) >= 6:
            turns, hits = out.get(author, (0, 0))
            out[author] = (turns + 1, hits + int(covered))
    return out


def test_locomo_speakers_are_both_people_and_both_covered(settings: Settings) -> None:
    hashing = settings.model_copy(update={"embedder": "hashing"})
    ingest_paths(hashing, [FIXTURES / "locomo_excerpt.json"])
    roles = sqlite3.connect(hashing.source_db).execute(
        "SELECT DISTINCT author, role FROM messages").fetchall()
    assert sorted(roles) == [("Caroline", "user"), ("Melanie", "user")]
    extract_store(hashing, offline=True)
    by_author = _evidence_by_author(hashing)
    for author in ("Caroline", "Melanie"):
        turns, hits = by_author[author]
        assert hits / turns >= 0.8, (author, hits, turns)
    staging = sqlite3.connect(hashing.staging_db)
    descriptions = [d for (d,) in staging.execute("SELECT description FROM concepts")]
    assert any("Melanie" in d for d in descriptions)  # who the statement is about
    assert not any("assistant" in d.casefold() for d in descriptions)


def test_two_human_sharegpt_keeps_each_speaker(settings: Settings, tmp_path: Path) -> None:
    hashing = settings.model_copy(update={"embedder": "hashing"})
    path = tmp_path / "two.json"
    path.write_text(json.dumps([{"id": "pair-1", "conversations": [
        {"from": "human", "name": "Ana", "value": "I started a pottery class in Porto last week."},
        {"from": "human", "name": "Ben", "value": "I usually go climbing with my brother."},
        {"from": "human", "name": "Ana", "value": "My goal is to sell bowls at the market."},
    ]}]))
    ingest_paths(hashing, [path], "sharegpt")
    rows = sqlite3.connect(hashing.source_db).execute(
        "SELECT author, role FROM messages ORDER BY position").fetchall()
    assert rows == [("Ana", "user"), ("Ben", "user"), ("Ana", "user")]
    extract_store(hashing, offline=True)
    assert {a: hits for a, (_, hits) in _evidence_by_author(hashing).items()} == {
        "Ana": 2, "Ben": 1}
    staging = sqlite3.connect(hashing.staging_db)
    descriptions = {d for (d,) in staging.execute("SELECT description FROM concepts")}
    assert "Something Ana wants to achieve: sell bowls at the market." in descriptions
    assert any(d.startswith("A recurring behaviour of Ben") for d in descriptions)


def test_offline_rerun_on_unchanged_input_changes_nothing(settings: Settings) -> None:
    hashing = settings.model_copy(update={"embedder": "hashing"})
    ingest_paths(hashing, [FIXTURES / "locomo_excerpt.json"])

    def dump() -> list[tuple[object, ...]]:
        db = sqlite3.connect(hashing.staging_db)
        rows = db.execute("SELECT id, title, type, state, confidence, aliases, description"
                          " FROM concepts ORDER BY id").fetchall()
        rows += db.execute("SELECT id, concept_id, message_id FROM evidence ORDER BY id").fetchall()
        db.close()
        return rows

    first_report = extract_store(hashing, offline=True)
    first = dump()
    states = {r[3] for r in first if len(r) == 7}
    assert first_report.mapping.evidence > 0 and states == {"active", "weak"}
    again = extract_store(hashing, offline=True)
    assert dump() == first
    assert again.segments_done == 0 and again.mapping.evidence == 0

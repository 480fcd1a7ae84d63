"""LoCoMo importer: session order, dia_id ids, UTC session times, image captions."""

from __future__ import annotations

import itertools
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ontology import Message
from pipeline.importers.locomo import parse_session_time
from pipeline.ingest import ingest_paths
from pipeline.settings import Settings
from staging import SourceStore

EXCERPT = Path(__file__).parent / "fixtures" / "locomo_excerpt.json"
FULL = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo_dev3.json"


def _messages(settings: Settings) -> list[Message]:
    store = SourceStore.open(settings.source_db)
    try:
        return list(store.messages())
    finally:
        store.close()


def test_session_time_parsing() -> None:
    assert parse_session_time("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56,
                                                                     tzinfo=UTC)
    assert parse_session_time("12:09 am on 13 September, 2023") == datetime(
        2023, 9, 13, 0, 9, tzinfo=UTC)
    assert parse_session_time("sometime in May") is None


def test_excerpt(settings: Settings, tmp_path: Path) -> None:
    data = json.loads(EXCERPT.read_text())
    conv = data[0]["conversation"]
    # put session 2 before session 1 in the file: order must come from N, not key order
    swapped = {k: conv[k] for k in ("speaker_a", "speaker_b", "session_2_date_time",
                                    "session_2", "session_1_date_time", "session_1")}
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([{**data[0], "conversation": swapped}]))
    report = ingest_paths(settings, [path])
    assert report.files[0].format == "locomo"
    assert (report.totals.conversations, report.totals.messages) == (1, 35)
    messages = _messages(settings)
    assert [m.external_id for m in messages[:2]] == ["D1:1", "D1:2"]
    assert messages[18].external_id == "D2:1"
    assert [m.created_at for m in messages] == sorted(m.created_at for m in messages)  # type: ignore[type-var]
    assert messages[0].created_at == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert messages[1].created_at == datetime(2023, 5, 8, 13, 56, 1, tzinfo=UTC)
    assert {m.author: m.role for m in messages} == {"Caroline": "user", "Melanie": "user"}
    image = next(m for m in messages if m.external_id == "D1:5")
    assert image.text.endswith("[image: a photo of a dog walking past a wall with a painting"
                               " of a woman]")
    assert image.parts[0].kind == "image"
    assert image.parts[0].data["query"] == "transgender pride flag mural"
    assert all(m.on_current_branch for m in messages)
    assert all(b.parent_id == a.id for a, b in itertools.pairwise(messages))


def test_dia_ids_are_scoped_by_conversation(settings: Settings, tmp_path: Path) -> None:
    data = json.loads(EXCERPT.read_text())
    path = tmp_path / "two.json"
    path.write_text(json.dumps([data[0], {**data[0], "sample_id": "conv-copy"}]))
    report = ingest_paths(settings, [path])
    assert (report.totals.conversations, report.totals.messages) == (2, 70)


def test_broken_sample_is_quarantined(settings: Settings, tmp_path: Path) -> None:
    data = json.loads(EXCERPT.read_text())
    bad = {"sample_id": "conv-bad", "conversation": {"speaker_a": "A", "speaker_b": "B",
                                                     "session_1": [{"text": "no dia id"}]}}
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([bad, data[0], {"sample_id": "x", "conversation": []}]))
    report = ingest_paths(settings, [path])
    assert report.totals.messages == 35
    assert [r.reason for r in report.totals.rejected] == [
        "session_1[0] has no dia_id", "conversation is not an object"]


def test_full_dev_subset_from_shared_data(settings: Settings) -> None:
    if not FULL.exists():
        pytest.skip(f"{FULL} is absent (LoCoMo is CC BY-NC: only an excerpt is committed)")
    report = ingest_paths(settings, [FULL])
    assert (report.totals.conversations, report.totals.messages) == (3, 1451)

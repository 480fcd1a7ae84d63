"""Write policy: sensitivity at ingest, inherited; retention at read time; redaction; provenance."""

from __future__ import annotations

import json
import re
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conftest import store_settings
from residue import file_residues

from pipeline import lineage
from pipeline.extract import extract_store
from pipeline.forget import compact_expired, redact
from pipeline.health import diagnose
from pipeline.ingest import ingest_paths
from pipeline.policy import classify, message_policies, most_sensitive, sensitivity_of
from pipeline.policy._rules import builtin_rules, luhn_ok
from pipeline.settings import Settings
from pipeline.sync import sync_store
from staging import InvalidProvenance, Provenance

LINES = [
    ("plain", "I am planning a hiking trip to the Dolomites in July with friends."),
    ("mail", "You can reach me at jo.rivera@example.org when the trip is booked."),
    ("health", "My doctor changed my medication for blood pressure last month."),
    ("card", "The booking failed with card 4111 1111 1111 1111, so I will retry."),
    ("nocard", "Order 1234 5678 9012 3456 shipped to the hiking shop on Monday."),
]


def _export(path: Path) -> Path:
    with path.open("w") as f:
        for i, (cid, text) in enumerate(LINES):
            f.write(json.dumps({"conversation_id": cid, "id": f"{cid}-1", "role": "user",
                                "content": text, "timestamp": f"2024-06-0{i + 1}T09:00:00Z"})
                    + "\n")
            f.write(json.dumps({"conversation_id": cid, "id": f"{cid}-2", "role": "assistant",
                                "content": "Noted, the hiking trip plan sounds good.",
                                "timestamp": f"2024-06-0{i + 1}T09:01:00Z"}) + "\n")
    return path


def _classes(settings: Settings) -> dict[str, str]:
    conn = sqlite3.connect(settings.source_db)
    try:
        return {ext: cls for ext, cls in conn.execute(
            "SELECT m.external_id, p.sensitivity FROM messages m JOIN message_policy p ON"
            " p.message_id = m.id")}
    finally:
        conn.close()


def test_sensitivity_is_assigned_at_ingest_by_rules(tmp_path: Path) -> None:
    settings = store_settings(tmp_path / "s")
    ingest_paths(settings, [_export(tmp_path / "export.jsonl")])
    classes = _classes(settings)
    assert classes["plain-1"] == "internal" and classes["plain-2"] == "internal"
    assert classes["mail-1"] == "personal"
    assert classes["health-1"] == classes["card-1"] == "restricted"
    assert classes["nocard-1"] == "internal"  # 16 digits failing the Luhn check
    assert len(classes) == 2 * len(LINES)


def test_settings_add_rules_and_override_a_source(tmp_path: Path) -> None:
    export = _export(tmp_path / "export.jsonl")
    settings = store_settings(tmp_path / "s", sensitivity_patterns={"personal:trip": "Dolomites"})
    ingest_paths(settings, [export])
    assert _classes(settings)["plain-1"] == "personal"
    public = store_settings(tmp_path / "p", sensitivity_source_overrides={"export.jsonl":
                                                                           "public"})
    ingest_paths(public, [export])
    assert set(_classes(public).values()) == {"public"}


@given(st.lists(st.sampled_from(["public", "internal", "personal", "restricted"]), min_size=1))
def test_a_derived_row_is_as_sensitive_as_its_most_sensitive_source(classes: list[str]) -> None:
    order = ["public", "internal", "personal", "restricted"]
    assert most_sensitive(classes) == max(classes, key=order.index)


def test_rules_are_content_shapes_not_one_file() -> None:
    rules = builtin_rules()
    assert classify("call me on +44 20 7946 0958", rules)[0] == "personal"
    assert classify("mi diagnóstico llegó ayer", rules)[0] == "restricted"
    assert classify("my api key is sk-abcdefghijklmnop1234", rules)[0] == "restricted"
    assert classify("the meeting is at 10", rules) == ("internal", [])
    assert luhn_ok("4111111111111111") and not luhn_ok("4111111111111112")


def test_expired_rows_are_never_read_then_compacted(tmp_path: Path) -> None:
    settings = store_settings(tmp_path / "s", retention_days={"restricted": 0})
    ingest_paths(settings, [_export(tmp_path / "export.jsonl")])
    extract_store(settings, offline=True)
    sync_store(settings)
    conn = sqlite3.connect(settings.staging_db)
    try:
        evidence = conn.execute("SELECT concept_id, message_id FROM evidence").fetchall()
    finally:
        conn.close()
    policies = message_policies(sqlite3.connect(settings.source_db), [m for _, m in evidence])
    expired = {m for _, m in evidence if policies[m].sensitivity == "restricted"}
    assert expired
    shown = {r["id"] for r in lineage.run_cypher(settings, "MATCH (m:Message) RETURN m.id AS id")}
    assert shown and not (shown & expired)  # the graph still holds them; reads do not show them
    for concept in {c for c, m in evidence if m in expired}:
        rows = [r.message_id for r in _evidence_or_empty(settings, concept)]
        assert not set(rows) & expired
    assert sensitivity_of(policies, expired) == "restricted"
    report = diagnose(settings)
    assert ("waiting", "expired_awaiting_compaction") in {(f.state, f.reason)
                                                          for f in report.findings}
    compacted = compact_expired(settings)
    assert compacted.expired == len([c for c in _classes_before(policies) if c == "restricted"])
    assert diagnose(settings).state == "healthy"
    assert "restricted" not in set(_classes(settings).values())


def _classes_before(policies: dict[str, object]) -> list[str]:
    return [p.sensitivity for p in policies.values()]  # type: ignore[attr-defined]


def _evidence_or_empty(settings: Settings, concept: str) -> list[lineage.EvidenceRow]:
    try:
        return lineage.concept_evidence(settings, concept)
    except Exception:  # a concept all of whose evidence expired is not visible at all
        return []


def test_redaction_rewrites_text_and_everything_derived(
    sample_store: Settings, copy_store: Callable[[Settings], Settings]
) -> None:
    settings = copy_store(sample_store)
    conn = sqlite3.connect(settings.source_db)
    rows = conn.execute("SELECT id, text FROM messages WHERE role = 'user' ORDER BY id").fetchall()
    conn.close()
    others = "\n".join(t for _, t in rows[1:])
    mid, text = rows[0]
    secret = next(text[i : i + 24] for i in range(0, len(text) - 24)
                  if text[i : i + 24] not in others and " " in text[i : i + 24])
    report = redact(settings, mid, re.escape(secret))
    assert report.spans >= 1 and report.fields[0] == "text"
    assert file_residues(settings.store, [secret]) == {}
    conn = sqlite3.connect(settings.source_db)
    try:
        new, state = conn.execute("SELECT m.text, p.redaction_state FROM messages m JOIN"
                                  " message_policy p ON p.message_id = m.id WHERE m.id = ?",
                                  [mid]).fetchone()
    finally:
        conn.close()
    assert state == "applied" and "[redacted]" in new and len(new) < len(text) + 20
    assert diagnose(settings).state == "healthy"  # quotes verify against the new text


def test_writes_without_provenance_are_rejected_at_the_boundary() -> None:
    with pytest.raises(InvalidProvenance):
        Provenance("run_1", "u", "a", "", "2024-01-01T00:00:00+00:00")
    with pytest.raises(InvalidProvenance):
        Provenance("run_1", "u", "a", "mapper", "2024-01-01T00:00:00")  # naive time
    assert Provenance("run_1", "u", "a", "mapper", "2024-01-01T00:00:00+00:00").columns()

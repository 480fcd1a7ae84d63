"""`conceptmem doctor`: one fixture per state, each built by really driving a store into it."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conftest import REPO, SAMPLE, store_settings

import pipeline.extract
from pipeline.cli import main
from pipeline.extract import extract_store
from pipeline.forget import Selector, forget
from pipeline.health import EXIT_CODES, PRECEDENCE, Finding, diagnose, worst
from pipeline.ingest import ingest_paths
from pipeline.settings import Settings
from pipeline.sync import sync_store
from staging import StagingStore, transaction
from staging.concept_repo import ConceptRepo, ConceptRow

GONE = "f02673a5-67f8-5485-b658-9b9e67f0a8e6"


def _sql(path: Path, *statements: str) -> None:
    conn = sqlite3.connect(path)
    try:
        for statement in statements:
            conn.execute(statement)
        conn.commit()
    finally:
        conn.close()


def _reasons(settings: Settings, **kwargs: object) -> set[tuple[str, str]]:
    return {(f.state, f.reason) for f in diagnose(settings, **kwargs).findings}  # type: ignore[arg-type]


def test_precedence_is_explicit_and_exit_codes_distinct() -> None:
    assert PRECEDENCE[0] == "scope_conflict" and PRECEDENCE[-1] == "healthy"
    assert len(set(EXIT_CODES.values())) == len(PRECEDENCE) and EXIT_CODES["healthy"] == 0
    assert worst(["waiting", "stale", "healthy"]) == "stale"
    assert worst([]) == "healthy"
    # a later success never hides an earlier problem
    assert worst(["scope_conflict", "waiting", "healthy"]) == "scope_conflict"
    assert Finding("stale", "graph", "x", "r").as_dict()["state"] == "stale"


def _fingerprint(settings: Settings) -> dict[str, int]:
    counts = {}
    for path in (settings.source_db, settings.staging_db):
        conn = sqlite3.connect(path)
        try:
            for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"
                                         " AND name NOT LIKE '%fts%'").fetchall():
                counts[f"{path.name}:{table}"] = conn.execute(
                    f"SELECT COUNT(*) FROM [{table}]").fetchone()[0]
        finally:
            conn.close()
    return counts


def test_fresh_run_store_is_healthy(sample_store: Settings, capsys: pytest.CaptureFixture[str]
                                    ) -> None:
    before = _fingerprint(sample_store)
    report = diagnose(sample_store)
    assert _fingerprint(sample_store) == before  # doctor only reads
    assert (report.state, report.findings) == ("healthy", [])
    assert main(["--store", str(sample_store.store), "doctor", "--json"]) == 0
    assert '"state": "healthy"' in capsys.readouterr().out


@pytest.fixture
def ingested(tmp_path: Path) -> Settings:
    settings = store_settings(tmp_path / "store")
    ingest_paths(settings, [SAMPLE])
    return settings


def test_waiting_when_messages_are_queued_for_extraction(ingested: Settings) -> None:
    report = diagnose(ingested)
    assert report.state == "waiting"
    assert ("waiting", "not_extracted_yet") in {(f.state, f.reason) for f in report.findings}
    assert main(["--store", str(ingested.store), "doctor"]) == EXIT_CODES["waiting"]


def _slow_llm() -> tuple[subprocess.Popen[str], str]:
    server = subprocess.Popen(
        [sys.executable, str(REPO / "tests" / "llm_server.py"), "--latency", "0.3"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    return server, server.stdout.readline().strip()


def _extract_receipts(settings: Settings) -> int:
    if not settings.staging_db.exists():
        return 0
    conn = sqlite3.connect(settings.staging_db)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM receipts WHERE stage = 'extract' AND"
                                " target != run_id").fetchone()[0])
    except sqlite3.OperationalError:
        return 0
    finally:
        conn.close()


def test_promotion_missing_after_an_extract_killed_midway(ingested: Settings) -> None:
    server, url = _slow_llm()
    env = {**os.environ, "PYTHONPATH": str(REPO), "CONCEPTMEM_LLM_BASE_URL": url,
           "CONCEPTMEM_LLM_API_KEY": "test", "CONCEPTMEM_LLM_MODEL": "scripted-model",
           "CONCEPTMEM_LLM_CONCURRENCY": "1", "CONCEPTMEM_EMBEDDER": "hashing"}
    try:
        worker = subprocess.Popen([sys.executable, "-m", "pipeline", "--store",
                                   str(ingested.store), "extract"], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while _extract_receipts(ingested) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        worker.send_signal(signal.SIGKILL)
        worker.wait()
    finally:
        server.stdin.close()  # type: ignore[union-attr]
        server.wait()
    report = diagnose(ingested)
    assert report.state == "promotion_missing"
    killed = [f for f in report.findings if f.reason == "extract_interrupted"]
    assert len(killed) == 1 and report.runs[killed[0].unit] == "promotion_missing"


def test_stale_when_the_code_version_changed(ingested: Settings,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipeline.extract, "__version__", "0.0.9")  # an older release wrote it
    extract_store(ingested, offline=True)
    sync_store(ingested)
    monkeypatch.undo()
    report = diagnose(ingested)
    assert report.state == "stale"
    assert ("stale", "derived_by_other_code_version") in {(f.state, f.reason)
                                                          for f in report.findings}
    assert main(["--store", str(ingested.store), "doctor"]) == EXIT_CODES["stale"]


def test_source_at_risk_when_messages_vanish_behind_the_projection(
    sample_store: Settings, copy_store: Callable[[Settings], Settings]
) -> None:
    settings = copy_store(sample_store)
    _sql(settings.source_db, "DELETE FROM messages WHERE conversation_id IN (SELECT id FROM"
         f" conversations WHERE external_id = '{GONE}')")
    report = diagnose(settings)
    assert report.state == "source_at_risk"
    reasons = {(f.state, f.reason) for f in report.findings}
    assert ("source_at_risk", "evidence_message_missing") in reasons
    assert ("stale", "graph_drift") in reasons  # also there, but outranked


def test_a_forgotten_item_still_visible_in_the_graph_is_stale(
    sample_store: Settings, copy_store: Callable[[Settings], Settings]
) -> None:
    settings = copy_store(sample_store)
    forget(settings, Selector(conversation=GONE))
    assert diagnose(settings).state == "healthy"  # a deletion is not a loss
    shutil.rmtree(settings.graph_path, ignore_errors=True)
    if settings.graph_path.exists():
        settings.graph_path.unlink()
    shutil.copy(sample_store.graph_path, settings.graph_path)  # the old projection is back
    report = diagnose(settings)
    assert report.state == "stale"
    assert ("stale", "deleted_still_visible") in {(f.state, f.reason) for f in report.findings}


def test_unverified_when_a_concept_is_written_without_lineage(
    sample_store: Settings, copy_store: Callable[[Settings], Settings]
) -> None:
    settings = copy_store(sample_store)
    staging = StagingStore.open(settings.staging_db)
    try:
        run = staging.start_run("extract", {}, pipeline.__version__, "default-user",
                                "default-assistant")
        with transaction(staging.db):
            ConceptRepo(staging).save_concept(ConceptRow(
                "c_unbacked", "Unbacked", "entity", "no evidence", "active", 0.5, [], 0,
                None, None, None), run.provenance("plugin"))
        staging.finish_run(run, "completed")
    finally:
        staging.close()
    sync_store(settings)
    report = diagnose(settings)
    assert report.state == "unverified"
    assert report.units["concept:c_unbacked"] == "unverified"


def test_uncertain_when_runs_carry_no_receipt(
    sample_store: Settings, copy_store: Callable[[Settings], Settings]
) -> None:
    settings = copy_store(sample_store)  # as a store written before receipts existed
    _sql(settings.staging_db, "DELETE FROM receipts WHERE run_id IN (SELECT id FROM runs"
         " WHERE stage = 'garden')")
    report = diagnose(settings)
    assert report.state == "uncertain"
    assert {f.reason for f in report.findings} == {"no_receipt"}


def test_degraded_when_full_text_search_misses_what_the_table_holds(
    sample_store: Settings, copy_store: Callable[[Settings], Settings]
) -> None:
    settings = copy_store(sample_store)
    _sql(settings.source_db, "INSERT INTO messages_fts(messages_fts, rowid, text) SELECT"
         " 'delete', rowid, text FROM messages ORDER BY rowid LIMIT 3")
    report = diagnose(settings)
    assert report.state == "degraded"
    assert [f.count for f in report.findings if f.reason == "fts_misses_messages"] == [3]
    assert main(["--store", str(settings.store), "doctor"]) == EXIT_CODES["degraded"]

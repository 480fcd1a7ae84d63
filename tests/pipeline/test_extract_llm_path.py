"""Extract stage and CLI on the LLM path: the ladder step stored and shown, failures explained."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from llm_server import LLAMA_CPP_PYTHON, ScriptedLLMServer, error_reply

from pipeline.cli.app import main
from pipeline.extract import extract_store
from pipeline.ingest import ingest_paths
from pipeline.llm import NothingExtracted
from pipeline.settings import Settings
from pipeline.stats import collect_stats

DATA = Path(__file__).parent / "data" / "chatgpt_small.json"


@pytest.fixture
def hashing(settings: Settings) -> Settings:
    return settings.model_copy(update={"embedder": "hashing", "llm_backoff_base_s": 0.001,
                                       "llm_max_retries": 1, "llm_concurrency": 2})


def test_llama_like_server_is_detected_stored_and_shown_in_stats(hashing: Settings) -> None:
    ingest_paths(hashing, [DATA])
    with ScriptedLLMServer(formats=LLAMA_CPP_PYTHON) as server:
        llm = hashing.model_copy(update={"llm_base_url": server.base_url, "llm_model": "tiny"})
        report = extract_store(llm)
    assert report.segments_done == 3 and report.segments_failed == 0
    assert report.structured_output == "json_object_schema"
    assert "[structured output: json_object_schema]" in report.summary()
    host = server.base_url.split("/")[2]
    assert collect_stats(llm)["structured_output"] == {f"{host} tiny": "json_object_schema"}
    conn = sqlite3.connect(llm.staging_db)
    steps = dict(conn.execute("SELECT structured_output, COUNT(*) FROM llm_calls "
                              "WHERE status = 'ok' GROUP BY 1").fetchall())
    assert steps == {"json_object_schema": 3}
    assert conn.execute("SELECT COUNT(*) FROM evidence").fetchone()[0] >= 1


def test_limit_takes_the_first_pending_segments_only(hashing: Settings) -> None:
    ingest_paths(hashing, [DATA])
    with ScriptedLLMServer() as server:
        llm = hashing.model_copy(update={"llm_base_url": server.base_url})
        first = extract_store(llm, limit=1)
        assert (first.segments_pending, first.segments_done) == (1, 1)
        rest = extract_store(llm, limit=5)
    assert (rest.segments_pending, rest.segments_done) == (2, 2)
    assert collect_stats(llm)["segments_by_status"] == {"extracted": 3}


def test_no_segment_succeeding_fails_the_run_with_what_the_server_said(
    hashing: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    always_down = ScriptedLLMServer(lambda body: error_reply(503, "model is still loading"))
    ingest_paths(hashing, [DATA])
    with always_down as server:
        llm = hashing.model_copy(update={"llm_base_url": server.base_url})
        with pytest.raises(NothingExtracted) as failed:
            extract_store(llm)
        assert len(server.requests) == 3 * 2  # one retry per segment (llm_max_retries=1)
    assert failed.value.failures == {"server_error": 3}
    assert "model is still loading" in failed.value.message
    conn = sqlite3.connect(llm.staging_db)
    status, error = conn.execute("SELECT status, error FROM runs WHERE stage = 'extract'"
                                 " ORDER BY started_at DESC").fetchone()
    assert status == "failed" and "none of the 3 segments" in error
    assert dict(conn.execute("SELECT status, COUNT(*) FROM segments GROUP BY 1")) == {"failed": 3}


def test_cli_exits_non_zero_and_prints_the_hint(
    settings: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = str(tmp_path / "cli-store")
    monkeypatch.setenv("CONCEPTMEM_EMBEDDER", "hashing")
    monkeypatch.setenv("CONCEPTMEM_LLM_MAX_RETRIES", "0")
    monkeypatch.setenv("CONCEPTMEM_LLM_CONCURRENCY", "1")
    assert main(["--store", store, "ingest", str(DATA)]) == 0
    refusing = ScriptedLLMServer(formats=frozenset({"text"}))
    with refusing as server:
        code = main(["--store", store, "extract", "--base-url", server.base_url])
    err = capsys.readouterr().err
    assert code == 1
    assert "refuses every structured-output format" in " ".join(err.split())
    assert "hint:" in err
    assert main(["--store", store, "stats", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["llm_failures"] == {"unsupported_format": 3}  # one call, each step once
    assert stats["segments_by_status"] == {"pending": 3}  # nothing half-written, retryable

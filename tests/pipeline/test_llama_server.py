"""`extract` on the bundled sample against a REAL llama.cpp server (llama-cpp-python, Gemma 3).

Started by ``bash .ci/llama.sh start`` (scripts/test.sh does it when CI=true). The model is tiny:
the test asserts the contract, not the quality: the ladder step detected from the server's
answer, validated extractions with their llm_calls rows, every mention verified (exact spans
stored, the rest rejected with a reason), at least one verbatim quote, nothing half-written.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
from pathlib import Path

import pytest

from ontology import ExtractionResult
from pipeline.cli.app import main

pytestmark = pytest.mark.llama

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"
PORT = os.environ.get("LLAMA_PORT", "18080")
URL = f"http://127.0.0.1:{PORT}/v1"
MODEL = os.environ.get("LLAMA_ALIAS", "gemma3-270m")
SEGMENTS = 2  # keeps the test within ~2-3 min on 2 shared cores


def _listening(port: str) -> bool:
    """A server is there when its port accepts (a busy one answers /v1/models only later)."""
    try:
        with socket.create_connection(("127.0.0.1", int(port)), timeout=3):
            return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def llama_url() -> str:
    if _listening(PORT):
        return URL
    reason = f"no llama.cpp server at {URL}: start one with `bash .ci/llama.sh start`"
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true: {reason}")
    pytest.skip(reason)


def test_extract_on_the_sample_against_the_real_server(
    llama_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in {"CONCEPTMEM_EMBEDDER": "hashing", "CONCEPTMEM_LLM_CONCURRENCY": "1",
                        "CONCEPTMEM_LLM_MAX_COMPLETION_TOKENS": "512",
                        "CONCEPTMEM_LLM_GRAMMAR_MAX_ITEMS": "3",
                        "CONCEPTMEM_LLM_TIMEOUT_S": "240", "CONCEPTMEM_LLM_MAX_RETRIES": "1",
                        "CONCEPTMEM_LLM_REPAIR_ATTEMPTS": "0"}.items():
        monkeypatch.setenv(name, value)
    store = str(tmp_path / "store")
    assert main(["--store", store, "ingest", *map(str, sorted(SAMPLE.glob("*.json")))]) == 0
    code = main(["--store", store, "extract", "--base-url", llama_url, "--model", MODEL,
                 "--limit", str(SEGMENTS)])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 0, err
    # llama-cpp-python refuses json_schema (HTTP 500) and constrains json_object + schema.
    assert "[structured output: json_object_schema]" in err
    conn = sqlite3.connect(Path(store) / "staging.db")
    calls = conn.execute("SELECT status, error_class, structured_output FROM llm_calls"
                         " ORDER BY written_at").fetchall()
    assert calls[0] == ("error", "unsupported_format", "json_schema")
    assert [c for c in calls if c[2] == "json_schema"] == [calls[0]]  # refused once, remembered
    step, confirmed, detail = conn.execute(
        "SELECT step, confirmed, detail FROM llm_capabilities WHERE model = ?", [MODEL]
    ).fetchone()
    assert (step, confirmed) == ("json_object_schema", 1) and "json_object" in detail
    _assert_validated_extractions(conn)
    _assert_verified_spans(conn, sqlite3.connect(Path(store) / "source.db"))
    assert main(["--store", store, "stats", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["structured_output"] == {f"127.0.0.1:{PORT} {MODEL}": "json_object_schema"}
    done = stats["segments_by_status"]
    assert done.get("extracted", 0) + done.get("failed", 0) == SEGMENTS and done["extracted"] >= 1


def _assert_validated_extractions(conn: sqlite3.Connection) -> None:
    rows = conn.execute(
        "SELECT e.payload, c.status, c.structured_output, c.reply FROM extractions e"
        " JOIN llm_calls c ON c.id = e.llm_call_id"
    ).fetchall()
    assert rows, "no extraction was stored"
    for payload, status, step, reply in rows:
        assert status == "ok" and step == "json_object_schema"
        assert ExtractionResult.model_validate_json(payload) == (
            ExtractionResult.model_validate_json(reply))


def _assert_verified_spans(conn: sqlite3.Connection, source: sqlite3.Connection) -> None:
    """Every mention went through verification: spans stored are exact, the rest carry a reason.

    The 270M model quotes verbatim but often names the wrong message of the segment
    (``quote_in_other_message``): a verified span is not guaranteed, grounding is.
    """
    texts = dict(source.execute("SELECT id, text FROM messages").fetchall())
    spans = conn.execute('SELECT quote, message_id, start, "end" FROM evidence').fetchall()
    for quote, message_id, start, end in spans:
        assert texts[message_id][start:end] == quote
    mentions = conn.execute("SELECT verified, reject_reason, quote FROM mentions").fetchall()
    assert mentions, "the model returned no mention at all"
    assert all(bool(verified) != bool(reason) for verified, reason, _ in mentions)
    segment_texts = [texts[m] for (m,) in conn.execute("SELECT message_id FROM segment_messages"
                                                       " JOIN segments s ON s.id = segment_id"
                                                       " WHERE s.status = 'extracted'")]
    grounded = [q for _, _, q in mentions if any(q and q in text for text in segment_texts)]
    assert grounded, "no mention quotes the segment verbatim"
    assert len(spans) <= sum(verified for verified, _, _ in mentions)

"""The extract stage on real SQLite files: verification, mapping, failures, resume, batch, LLM."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ontology import ExtractionRequest, ExtractionResult, RawMention
from pipeline.extract import extract_store
from pipeline.ingest import ingest_paths
from pipeline.llm import ExtractionFailed
from pipeline.llm.prompts import parse_data_block
from pipeline.settings import Settings

DATA = Path(__file__).parent / "data" / "chatgpt_small.json"
REPO = Path(__file__).resolve().parents[2]


class WordExtractor:
    """A stand-in extractor: one entity per capitalised word, plus two unverifiable mentions."""

    label = "test:words"

    def __init__(self, delay_s: float = 0.0, fail: set[str] | None = None) -> None:
        self.delay_s = delay_s
        self.fail = fail or set()

    def extract(self, request: ExtractionRequest) -> ExtractionResult:
        time.sleep(self.delay_s)
        if request.segment_id in self.fail:
            raise ExtractionFailed("server_error", "scripted", request.segment_id)
        mentions = [
            _mention(word, word, message.ref)
            for message in request.messages
            for word in dict.fromkeys(re.findall(r"\b[A-Z][a-z]{3,}\b", message.text))
        ]
        mentions.append(_mention("Ghost", "words nobody ever wrote", "m1"))
        mentions.append(_mention("Nowhere", request.messages[0].text[:20], "m99"))
        return ExtractionResult(mentions=mentions)


def _mention(title: str, quote: str, ref: str) -> RawMention:
    return RawMention(title=title, type="entity", description=f"{title}.", quote=quote,
                      message_ref=ref, confidence=0.6, relations=[])


@pytest.fixture
def hashing(settings: Settings) -> Settings:
    return settings.model_copy(update={"embedder": "hashing"})


def _export(path: Path, conversations: int) -> Path:
    """A ChatGPT export of linear two-message conversations that reuse a few names."""
    names = ["Rust", "Lyon", "Claire", "Python", "Berlin", "Kafka"]
    items = []
    for c in range(conversations):
        texts = [f"Talking with {names[c % 6]} about {names[(c + 1) % 6]} today, item {c}.",
                 f"Noted: {names[(c + 2) % 6]} and {names[c % 6]} matter to you."]
        mapping: dict[str, Any] = {"root": {"id": "root", "message": None, "parent": None,
                                            "children": [f"{c}-0"]}}
        for i, text in enumerate(texts):
            mapping[f"{c}-{i}"] = {
                "id": f"{c}-{i}", "parent": "root" if i == 0 else f"{c}-0",
                "children": [f"{c}-1"] if i == 0 else [],
                "message": {"id": f"{c}-{i}", "author": {"role": ["user", "assistant"][i]},
                            "create_time": 1.7e9 + c * 3600 + i,
                            "content": {"content_type": "text", "parts": [text]},
                            "status": "finished_successfully", "metadata": {}},
            }
        items.append({"title": f"chat {c}", "create_time": 1.7e9 + c * 3600,
                      "update_time": 1.7e9 + c * 3600, "mapping": mapping,
                      "current_node": f"{c}-1", "id": f"conv-{c}"})
    path.write_text(json.dumps(items), encoding="utf-8")
    return path


def _snapshot(settings: Settings) -> dict[str, list[tuple[Any, ...]]]:
    queries = {
        "concepts": "SELECT id, title, type, aliases, revision_count, state FROM concepts",
        "evidence": 'SELECT id, concept_id, message_id, quote, start, "end" FROM evidence',
        "mentions": "SELECT id, verified, reject_reason, start FROM mentions",
        "decisions": "SELECT mention_id, action, concept_id, reason FROM mapper_decisions",
        "extractions": "SELECT id, segment_id FROM extractions",
        "revisions": "SELECT concept_id, revision, action FROM concept_revisions",
        "relations": "SELECT id FROM relations",
        "segments": "SELECT id, status FROM segments",
    }
    conn = sqlite3.connect(settings.staging_db)
    try:
        return {name: sorted(conn.execute(sql).fetchall()) for name, sql in queries.items()}
    finally:
        conn.close()


def _assert_quotes_verbatim(settings: Settings) -> int:
    staging = sqlite3.connect(settings.staging_db)
    source = sqlite3.connect(settings.source_db)
    texts = dict(source.execute("SELECT id, text FROM messages").fetchall())
    rows = staging.execute('SELECT quote, message_id, start, "end" FROM evidence').fetchall()
    for quote, message_id, start, end in rows:
        assert texts[message_id][start:end] == quote
    orphans = staging.execute(
        "SELECT COUNT(*) FROM concepts WHERE id NOT IN (SELECT concept_id FROM evidence)"
    ).fetchone()[0]
    assert orphans == 0
    return len(rows)


def test_stage_verifies_maps_and_is_idempotent(hashing: Settings) -> None:
    ingest_paths(hashing, [DATA])
    report = extract_store(hashing, extractor=WordExtractor())
    assert report.segments_done == 3 and report.segments_failed == 0
    assert report.rejected == {"quote_not_found": 3, "unknown_message_ref": 3}
    assert report.verified == report.mentions - 6
    assert report.mapping.actions["create"] == report.concepts > 0
    assert report.mapping.actions["attach"] + report.mapping.actions["refine"] > 0  # Rust twice
    assert _assert_quotes_verbatim(hashing) == report.evidence_total
    conn = sqlite3.connect(hashing.staging_db)
    assert conn.execute("SELECT COUNT(*) FROM evidence WHERE quote LIKE '%nobody%'"
                        ).fetchone()[0] == 0
    assert conn.execute("SELECT COUNT(*) FROM mentions WHERE verified = 0 AND start IS NOT NULL"
                        ).fetchone()[0] == 0
    before = _snapshot(hashing)
    again = extract_store(hashing, extractor=WordExtractor())
    assert again.segments_done == 0 and again.mentions == 0
    assert _snapshot(hashing) == before


def test_failed_segments_are_counted_then_retried(hashing: Settings) -> None:
    ingest_paths(hashing, [DATA])
    first = extract_store(hashing, dry_run=True)
    assert first.estimate is not None and first.estimate.calls == 3
    assert not hashing.staging_db.exists()  # the dry run wrote nothing
    extract_store(hashing, batch_out=hashing.store / "batch.jsonl")  # segments only
    segment_ids = [row[0] for row in sqlite3.connect(hashing.staging_db).execute(
        "SELECT id FROM segments ORDER BY rowid")]
    report = extract_store(hashing, extractor=WordExtractor(fail={segment_ids[1]}))
    assert (report.segments_done, report.segments_failed) == (2, 1)
    assert report.llm_failures == {"server_error": 1}
    status = dict(sqlite3.connect(hashing.staging_db).execute("SELECT id, status FROM segments"))
    assert status[segment_ids[1]] == "failed"
    retry = extract_store(hashing, extractor=WordExtractor())
    assert (retry.segments_done, retry.segments_failed) == (1, 0)
    fresh = hashing.model_copy(update={"store": hashing.store.parent / "fresh"})
    ingest_paths(fresh, [DATA])
    extract_store(fresh, extractor=WordExtractor())
    assert _snapshot(hashing)["evidence"] == _snapshot(fresh)["evidence"]


_CHILD = """
import importlib.util, sys
from pathlib import Path
from pipeline.extract import extract_store
from pipeline.settings import Settings
spec = importlib.util.spec_from_file_location("stage_tests", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
extract_store(Settings(store=Path(sys.argv[2]), embedder="hashing"),
              extractor=module.WordExtractor(delay_s=0.15))
"""


def _extracted(settings: Settings) -> int:
    if not settings.staging_db.exists():
        return 0
    conn = sqlite3.connect(settings.staging_db, timeout=5)
    try:
        return int(conn.execute(
            "SELECT COUNT(*) FROM segments WHERE status = 'extracted'").fetchone()[0])
    except sqlite3.OperationalError:
        return 0
    finally:
        conn.close()


def test_kill_and_resume_matches_an_uninterrupted_run(hashing: Settings, tmp_path: Path) -> None:
    export = _export(tmp_path / "export.json", 24)
    ingest_paths(hashing, [export])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CONCEPTMEM_", "OPENAI_"))}
    child = subprocess.Popen([sys.executable, "-c", _CHILD, __file__, str(hashing.store)],
                             cwd=REPO, env=env)
    deadline = time.monotonic() + 60
    while _extracted(hashing) < 3 and time.monotonic() < deadline and child.poll() is None:
        time.sleep(0.02)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    done_at_kill = _extracted(hashing)
    assert 3 <= done_at_kill < 24  # really interrupted midway
    resumed = extract_store(hashing, extractor=WordExtractor())
    assert resumed.segments_done == 24 - done_at_kill
    fresh = hashing.model_copy(update={"store": tmp_path / "fresh"})
    ingest_paths(fresh, [export])
    extract_store(fresh, extractor=WordExtractor())
    assert _snapshot(hashing) == _snapshot(fresh)
    _assert_quotes_verbatim(hashing)


def test_batch_out_then_batch_in(hashing: Settings, tmp_path: Path) -> None:
    ingest_paths(hashing, [DATA])
    batch_in, batch_out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    written = extract_store(hashing, batch_out=batch_in)
    assert written.batch_written == 3
    lines = [json.loads(line) for line in batch_in.read_text().splitlines()]
    with batch_out.open("w") as handle:
        for line in lines:
            user = next(m["content"] for m in line["body"]["messages"] if m["role"] == "user")
            ref, _, text = parse_data_block(user)[0]
            reply = {"mentions": [
                _mention("Opening words", text[:25].strip(), ref).model_dump(),
                _mention("Invented", "this is not in the message", ref).model_dump(),
            ]}
            body = {"model": "m", "choices": [{"message": {"content": json.dumps(reply)},
                                               "finish_reason": "stop"}]}
            handle.write(json.dumps({"custom_id": line["custom_id"],
                                     "response": {"status_code": 200, "body": body}}) + "\n")
    report = extract_store(hashing, batch_in=batch_out)
    assert report.segments_done == 3 and report.rejected == {"quote_not_found": 3}
    assert report.extractor == "batch"
    conn = sqlite3.connect(hashing.staging_db)
    assert conn.execute("SELECT COUNT(*) FROM llm_calls").fetchone()[0] == 3
    _assert_quotes_verbatim(hashing)


def test_llm_path_rejects_quotes_not_in_the_message(hashing: Settings, llm_server: Any) -> None:
    from llm_server import json_reply, mention

    ingest_paths(hashing, [DATA])
    llm = hashing.model_copy(update={"llm_base_url": llm_server.base_url, "llm_concurrency": 4})
    assert not llm.offline
    llm_server.script(json_reply({"mentions": [
        mention("Made up", "a sentence that is in no message", "m1")]}))
    report = extract_store(llm)
    assert report.extractor.startswith("llm:") and report.segments_done == 3
    assert report.rejected == {"quote_not_found": 1}
    conn = sqlite3.connect(llm.staging_db)
    assert conn.execute("SELECT COUNT(*) FROM llm_calls WHERE status = 'ok'").fetchone()[0] == 3
    assert conn.execute("SELECT COUNT(*) FROM evidence WHERE quote LIKE '%no message%'"
                        ).fetchone()[0] == 0
    assert conn.execute("SELECT COUNT(*) FROM extractions WHERE llm_call_id IS NULL"
                        ).fetchone()[0] == 0
    assert _assert_quotes_verbatim(llm) > 0


def test_llm_invalid_replies_fail_the_segment_and_store_nothing(
    hashing: Settings, llm_server: Any
) -> None:
    from llm_server import text_reply

    ingest_paths(hashing, [DATA])
    llm = hashing.model_copy(update={"llm_base_url": llm_server.base_url, "llm_concurrency": 1,
                                     "llm_repair_attempts": 1})
    llm_server.script(text_reply('{"mentions": [{"title": "cut'),
                      text_reply('{"mentions": [{"title": "cut'))
    report = extract_store(llm)
    assert (report.segments_done, report.segments_failed) == (2, 1)
    ((error_class, count),) = report.llm_failures.items()
    assert count == 1 and error_class
    conn = sqlite3.connect(llm.staging_db)
    (failed,) = conn.execute("SELECT id FROM segments WHERE status = 'failed'").fetchone()
    assert conn.execute("SELECT COUNT(*) FROM extractions WHERE segment_id = ?",
                        [failed]).fetchone()[0] == 0
    assert conn.execute("SELECT COUNT(*) FROM llm_calls WHERE segment_id = ? AND status != 'ok'",
                        [failed]).fetchone()[0] == 2
    retry = extract_store(llm)  # the server now answers validly: the failed segment completes
    assert (retry.segments_done, retry.segments_failed) == (1, 0)

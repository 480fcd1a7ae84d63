"""`conceptmem run` / `extract` / `stats --json` end to end, offline, on a small ChatGPT export."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from pipeline.cli.app import main
from pipeline.run import STAGES, RunOptions, Stage, run_pipeline
from pipeline.settings import Settings

DATA = Path(__file__).parent / "data" / "chatgpt_small.json"


@pytest.fixture
def store(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CONCEPTMEM_EMBEDDER", "hashing")
    return settings.store


def _stats(store: Path, capsys: pytest.CaptureFixture[str]) -> dict:  # type: ignore[type-arg]
    capsys.readouterr()
    assert main(["--store", str(store), "stats", "--json"]) == 0
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def test_run_offline_yields_concepts_with_verbatim_evidence(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--store", str(store), "run", str(DATA)]) == 0
    assert "extract (offline:v2)" in capsys.readouterr().err
    staging = sqlite3.connect(store / "staging.db")
    source = sqlite3.connect(store / "source.db")
    texts = dict(source.execute("SELECT id, text FROM messages").fetchall())
    evidence = staging.execute('SELECT concept_id, quote, message_id, start, "end" FROM evidence')
    rows = evidence.fetchall()
    assert rows
    for _, quote, message_id, start, end in rows:
        assert texts[message_id][start:end] == quote
    concepts = {row[0] for row in staging.execute("SELECT id FROM concepts")}
    assert concepts and concepts == {row[0] for row in rows}
    first = _stats(store, capsys)
    for key in ("segments", "concepts", "evidence", "llm_calls", "rejected_mentions",
                "rejected_by_reason", "decisions"):
        assert key in first
    assert first["segments"] == 3 and first["concepts_total"] == len(concepts)
    assert first["evidence"] == len(rows) and first["llm_calls"] == 0

    assert main(["--store", str(store), "run", str(DATA)]) == 0  # idempotent re-run
    again = _stats(store, capsys)  # (later stages may change states, e.g. decay: not counts)
    keys = ("concepts_total", "evidence", "decisions", "mentions", "segments")
    assert {k: again[k] for k in keys} == {k: first[k] for k in keys}


def test_extract_dry_run_and_option_errors(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--store", str(store), "ingest", str(DATA)]) == 0
    assert main(["--store", str(store), "extract", "--dry-run"]) == 0
    assert "offline: no LLM calls would be made): 3 calls" in capsys.readouterr().err
    assert not (store / "staging.db").exists()
    code = main(["--store", str(store), "extract", "--batch-out", "a", "--batch-in", "b"])
    assert code == 1 and "exclusive" in capsys.readouterr().err
    assert main(["--store", str(store), "extract", "--offline"]) == 0
    assert _stats(store, capsys)["segments_by_status"] == {"extracted": 3}


def test_extract_without_a_store_names_the_next_step(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--store", str(store), "extract"]) == 1
    err = capsys.readouterr().err
    assert f"no store at {store}" in err and "ingest" in err
    assert not store.exists()  # a reading or failing command creates no store


def test_stage_list_is_extensible(settings: Settings) -> None:
    seen: list[str] = []

    class Done:
        def summary(self) -> str:
            return "ok"

    def record(name: str) -> Stage:
        return Stage(name, lambda s, o: seen.append(name) or Done())

    assert [stage.name for stage in STAGES][:2] == ["ingest", "extract"]
    report = run_pipeline(settings, RunOptions(), stages=[record("a"), record("b")])
    assert seen == ["a", "b"] and report.summary() == "[a] ok\n[b] ok"


SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"


def test_bundled_sample_every_quote_verbatim(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exports = sorted(SAMPLE.glob("*_conversations.json"))
    assert exports, "the bundled sample is missing"
    # ingest + extract (what `run` does before sync/garden), kept fast for the suite
    assert main(["--store", str(store), "ingest", *map(str, exports)]) == 0
    assert main(["--store", str(store), "extract"]) == 0
    staging = sqlite3.connect(store / "staging.db")
    source = sqlite3.connect(store / "source.db")
    texts = dict(source.execute("SELECT id, text FROM messages").fetchall())
    rows = staging.execute('SELECT quote, message_id, start, "end" FROM evidence').fetchall()
    assert len(rows) >= 50
    assert all(texts[mid][start:end] == quote for quote, mid, start, end in rows)
    stats = _stats(store, capsys)
    assert stats["concepts"] >= 20 and stats["segments_by_status"].get("pending", 0) == 0


def test_extract_with_base_url_uses_the_llm(
    store: Path, capsys: pytest.CaptureFixture[str], llm_server: object
) -> None:
    assert main(["--store", str(store), "ingest", str(DATA)]) == 0
    url = llm_server.base_url  # type: ignore[attr-defined]
    assert main(["--store", str(store), "extract", "--base-url", url, "--model", "m1"]) == 0
    assert "extract (llm:m1)" in capsys.readouterr().err
    stats = _stats(store, capsys)
    assert stats["llm_calls"] == 3 and stats["segments_by_status"] == {"extracted": 3}
    assert stats["evidence"] >= 1

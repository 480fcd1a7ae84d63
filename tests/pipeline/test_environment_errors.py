"""Issue 11, classes 7 and 8: environment problems and bad options are one sentence with the
next step (no traceback), and they change nothing stored."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import zipfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "graph"))

from builders import build_store

from pipeline.cli.app import main
from pipeline.settings import Settings

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CLAUDE = FIXTURES / "claude-to-sqlite_example.json"


def _run(capsys: pytest.CaptureFixture[str], store: Path, *args: str) -> tuple[int, str]:
    code = main(["--store", str(store), *args])
    captured = capsys.readouterr()
    text = captured.err + captured.out
    assert "Traceback" not in text
    return code, text


def _messages(store: Path) -> int:
    with sqlite3.connect(store / "source.db") as conn:
        return int(conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0])


@pytest.mark.parametrize("args", [
    ("stats",), ("verify",), ("lineage", "concept", "c_x"), ("lineage", "as-of", "2024-01-01"),
    ("cypher", "RETURN 1"), ("extract",), ("sync",), ("garden",),
])
def test_commands_on_a_missing_store_say_so_and_create_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...]
) -> None:
    store = tmp_path / "nowhere"
    code, text = _run(capsys, store, *args)
    assert code == 1 and f"no store at {store}" in text and "hint:" in text
    assert not store.exists()


def test_store_that_is_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "store"
    store.write_text("not a directory")
    for args in (("ingest", str(CLAUDE)), ("stats",), ("cypher", "RETURN 1")):
        code, text = _run(capsys, store, *args)
        assert code == 1 and f"--store {store} is a file" in text, text
    assert store.read_text() == "not a directory"


def test_store_that_cannot_be_created(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, text = _run(capsys, blocker / "store", "ingest", str(CLAUDE))
    assert code == 1 and "cannot create the store directory" in text and "hint:" in text


@pytest.mark.skipif(getattr(os, "geteuid", lambda: 1)() == 0,
                    reason="root can write a read-only directory")
def test_store_that_is_not_writable(settings: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--store", str(settings.store), "ingest", str(CLAUDE)]) == 0
    settings.store.chmod(0o555)
    try:
        code, text = _run(capsys, settings.store, "extract", "--offline")
    finally:
        settings.store.chmod(0o755)
    assert code == 1 and "is not writable" in text


def test_corrupt_source_db(settings: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    settings.store.mkdir()
    garbage = b"this is not an SQLite file\n" * 200
    settings.source_db.write_bytes(garbage)
    for args in (("stats",), ("ingest", str(CLAUDE)), ("extract", "--offline")):
        code, text = _run(capsys, settings.store, *args)
        assert code == 1, args
        assert f"{settings.source_db}: not a readable SQLite database" in text
        assert "restore" in text
    assert settings.source_db.read_bytes() == garbage


def test_truncated_source_db_and_a_directory_in_its_place(
    settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--store", str(settings.store), "ingest", str(CLAUDE)]) == 0
    whole = settings.source_db.read_bytes()
    settings.source_db.write_bytes(whole[: len(whole) // 3])
    code, text = _run(capsys, settings.store, "stats")
    assert code == 1 and f"{settings.source_db}: not a readable SQLite database" in text
    settings.source_db.unlink()
    settings.source_db.mkdir()
    code, text = _run(capsys, settings.store, "ingest", str(CLAUDE))
    assert code == 1 and f"{settings.source_db} is a directory, not a database file" in text


def test_malformed_neo4j_uri(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("neo4j")
    for uri in ("htp://127.0.0.1:7687", "bolt://127.0.0.1:notaport"):
        monkeypatch.setenv("NEO4J_URI", uri)
        code, text = _run(capsys, settings.store, "cypher", "RETURN 1", "--backend", "neo4j")
        assert code == 1 and "Neo4j" in text and "NEO4J_URI" in text, text


def test_corrupt_zip_member(
    settings: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    archive = tmp_path / "export.zip"
    payload = CLAUDE.read_bytes() * 20  # large enough to corrupt its middle
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr("conversations.json", payload)
    data = bytearray(archive.read_bytes())
    middle = len(data) // 3
    data[middle : middle + 64] = bytes(64)
    archive.write_bytes(bytes(data))
    code, text = _run(capsys, settings.store, "ingest", str(archive))
    assert code == 1
    assert f"{archive}!conversations.json: archive member: damaged" in text and "hint:" in text
    assert _messages(settings.store) == 0


def test_forced_wrong_format_says_so_and_exits_non_zero(
    settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in ("ingest", "run"):
        code, text = _run(capsys, settings.store, command, str(CLAUDE), "--format", "chatgpt")
        assert code == 1
        assert "--format chatgpt rejected all 1 record(s)" in text and str(CLAUDE) in text
        assert "record 1" in text and "drop --format" in text
    assert _messages(settings.store) == 0


def test_corrupt_graph_is_rebuilt_by_sync_rebuild(
    settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    build_store(settings)
    assert main(["--store", str(settings.store), "sync"]) == 0
    settings.graph_path.write_bytes(b"\x00garbage" * 4096)
    code, text = _run(capsys, settings.store, "lineage", "as-of", "2100-01-01")
    assert code == 1 and "sync --rebuild" in text
    code, text = _run(capsys, settings.store, "sync", "--rebuild")
    assert code == 0, text
    code, text = _run(capsys, settings.store, "verify")
    assert code == 0 and "in sync" in text
    assert (settings.graph_path.parent / "graph.lbug.broken").exists()


@pytest.mark.parametrize(("args", "expected"), [
    (("--param", "min_cluster_size=abc"), "--param min_cluster_size='abc': not an integer"),
    (("--param", "t=NaN"), "unknown clustering parameter 't'"),
    (("--param", "min_dist=NaN"), "--param min_dist='NaN': must be a number >= 0"),
    (("--param", "min_cluster_size=0"), "must be an integer >= 2"),
    (("--param", "cluster_selection_method=best"), "not one of eom, leaf"),
    (("--trials", "-1"), "--trials must be >= 0, got -1"),
])
def test_garden_refuses_bad_options(
    settings: Settings, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], expected: str
) -> None:
    code, text = _run(capsys, settings.store, "garden", *args)
    assert code == 1 and expected in text and "hint:" in text
    assert not settings.store.exists()


def test_cypher_nan_parameter_prints_valid_json(
    settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    build_store(settings)
    assert main(["--store", str(settings.store), "sync"]) == 0
    capsys.readouterr()
    code = main(["--store", str(settings.store), "cypher", "RETURN $t AS t, 0.0 / 0.0 AS n",
                 "--param", "t=NaN", "--json"])
    assert code == 0
    assert json.loads(capsys.readouterr().out) == [{"t": "NaN", "n": None}]


def test_invalid_setting_from_the_environment(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CONCEPTMEM_LOCK_WAIT_S", "soon")
    code, text = _run(capsys, settings.store, "stats")
    assert code == 1 and "invalid setting: lock_wait_s" in text

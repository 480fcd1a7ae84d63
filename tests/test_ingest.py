"""ingest_paths end to end: idempotence, newer exports, errors, progress, the CLI."""

from __future__ import annotations

import copy
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from ontology import Conversation, Message
from pipeline.cli import main
from pipeline.errors import ImportFormatError, InputFileError
from pipeline.ingest import ingest_paths
from pipeline.settings import Settings

FIXTURES = Path(__file__).parent / "fixtures"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
TREE = FIXTURES / "librechat_chatgpt-tree.json"
SAMPLES = sorted(p for p in FIXTURES.iterdir() if p.suffix in (".json", ".jsonl"))
TABLES = ("sources", "conversations", "messages", "quarantine", "messages_fts")


def _counts(settings: Settings) -> dict[str, int]:
    with sqlite3.connect(settings.source_db) as conn:
        return {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in TABLES}


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_reingest_adds_no_rows_and_rows_validate(settings: Settings, path: Path) -> None:
    first = ingest_paths(settings, [path])
    before = _counts(settings)
    assert before["messages"] == first.totals.messages > 0
    assert before["messages_fts"] == before["messages"]  # indexed in bulk during ingest
    with sqlite3.connect(settings.source_db) as conn:  # ... and the trigger is back
        assert conn.execute("SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger'"
                            " AND name = 'messages_ai'").fetchone() == (1,)
    again = ingest_paths(settings, [path])
    assert _counts(settings) == before
    assert (again.totals.sources, again.totals.conversations, again.totals.messages,
            again.totals.messages_updated) == (0, 0, 0, 0)
    with sqlite3.connect(settings.source_db) as conn:
        conn.row_factory = sqlite3.Row
        for row in conn.execute("SELECT * FROM messages"):
            data = dict(row)
            data["parts"] = json.loads(data["parts"])
            data["metadata"] = json.loads(data["metadata"])
            Message.model_validate(data)  # strict re-validation of what model_construct built
        for row in conn.execute("SELECT * FROM conversations"):
            Conversation.model_validate({**dict(row), "metadata": json.loads(row["metadata"])})


def test_every_shared_sample_ingests(settings: Settings) -> None:
    if not SHARED.exists():
        pytest.skip(f"{SHARED} is absent")
    paths = sorted(SHARED.glob("*/*.json"))
    report = ingest_paths(settings, paths)
    expected = {  # conversations, messages (see tests/fixtures/README.md for the counting)
        "handwritten_librechat_chatgpt-modern-export.json": (3, 7),
        "librechat_chatgpt-tree.json": (1, 12),
        "claude-to-sqlite_artifacts.json": (1, 20),
        "claude-to-sqlite_example.json": (1, 2),
        "handwritten_chatlore_claude_conversations.json": (3, 7),
        "yaleman_anthropic-data_conversations.json": (1, 2),
        "locomo_dev3.json": (3, 1451),
        "spark-first_conversations.json": (377, 1733),
        "handwritten_librechat_openwebui-export.json": (3, 6),
    }
    got = {Path(f.path).name: (f.counts.conversations, f.counts.messages) for f in report.files}
    assert got == expected


def _older(export: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same account before the regenerated joke and the story reply existed."""
    old = copy.deepcopy(export)
    mapping = old[0]["mapping"]
    for node_id in ("f63b8e17-aa5c-4ca6-a1bf-d4d285e269b8", "ada93f81-5a39-4e6d-8d2f-bd1b2e4ae6c9"):
        node = next((k for k in mapping if k.startswith(node_id[:8])), None)
        assert node is not None
        parent = mapping[node]["parent"]
        mapping[parent]["children"].remove(node)
        del mapping[node]
    old[0]["current_node"] = next(k for k in mapping if k.startswith("d0d2a7df"))
    old[0]["title"] = "older title"
    return old


def test_newer_export_adds_only_what_is_new(settings: Settings, tmp_path: Path) -> None:
    export = json.loads(TREE.read_text())
    old_path = tmp_path / "old.json"
    old_path.write_text(json.dumps(_older(export)))
    ingest_paths(settings, [old_path])
    assert _counts(settings)["messages"] == 10
    report = ingest_paths(settings, [TREE])
    totals = report.totals
    assert (totals.sources, totals.conversations, totals.messages) == (1, 0, 2)
    assert totals.messages_updated >= 1  # the old joke answer left the current branch
    with sqlite3.connect(settings.source_db) as conn:
        flags = dict(conn.execute(
            "SELECT substr(external_id, 1, 8), on_current_branch FROM messages"))
        title = conn.execute("SELECT title FROM conversations").fetchone()[0]
        sources = dict(conn.execute(
            "SELECT substr(m.external_id, 1, 8), s.path FROM messages m"
            " JOIN sources s ON s.id = m.source_id"))
    assert flags["d0d2a7df"] == 0 and flags["f63b8e17"] == 1
    assert title == "Assist user with summary"
    assert sources["f63b8e17"] == str(TREE.resolve())  # new rows point at the newer file
    assert sources["aaa297ba"] == str(old_path.resolve())


def test_user_scope_changes_every_id(settings: Settings) -> None:
    ingest_paths(settings, [TREE])
    other = settings.model_copy(update={"user_scope": "someone-else"})
    report = ingest_paths(other, [TREE])
    assert (report.totals.sources, report.totals.messages) == (1, 12)
    assert _counts(settings)["messages"] == 24


def test_bad_paths(settings: Settings, tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match="does not exist"):
        ingest_paths(settings, [tmp_path / "nope.json"])
    (tmp_path / "empty-dir").mkdir()
    (tmp_path / "empty-dir" / "notes.txt").write_text("not an export")
    with pytest.raises(InputFileError, match=r"holds no \.json or \.jsonl file"):
        ingest_paths(settings, [tmp_path / "empty-dir"])
    empty = tmp_path / "empty.json"
    empty.write_text("")
    with pytest.raises(ImportFormatError, match="empty file"):
        ingest_paths(settings, [empty])


def test_a_failing_file_keeps_earlier_files(settings: Settings, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('[{"mapping": {}, "id": "x"}, {"id": ')
    with pytest.raises(InputFileError) as caught:
        ingest_paths(settings, [TREE, bad])
    assert caught.value.hint is not None and "1 earlier file(s) were imported" in caught.value.hint
    assert _counts(settings)["sources"] == 1


def test_format_override(settings: Settings) -> None:
    path = FIXTURES / "claude-to-sqlite_example.json"
    # forced through the wrong importer: every record would be quarantined, so the file is
    # refused (naming the file, the first record and the reason) and nothing is stored
    with pytest.raises(ImportFormatError) as info:
        ingest_paths(settings, [path], format_name="chatgpt")
    assert info.value.path == str(path.resolve()) and info.value.record.startswith("record 1")
    assert "--format chatgpt rejected all 1 record(s)" in info.value.reason
    assert "conversation has no id or conversation_id" in info.value.reason
    assert _counts(settings) == dict.fromkeys(TABLES, 0)


def test_progress_bar_runs(settings: Settings) -> None:
    report = ingest_paths(settings, [TREE, FIXTURES / "messages.jsonl"], progress=True)
    assert report.totals.messages == 18
    assert "2 file(s)" in report.summary()


def test_cli_ingest_then_stats(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CONCEPTMEM_STORE", raising=False)
    store = tmp_path / "store"
    code = main(["--store", str(store), "ingest", str(TREE),
                 str(FIXTURES / "handwritten_librechat_openwebui-export.json")])
    assert code == 0
    assert "18 new message(s)" in capsys.readouterr().err
    assert main(["--store", str(store), "stats", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert (stats["sources"], stats["conversations"], stats["messages"]) == (2, 4, 18)
    with sqlite3.connect(store / "source.db") as conn:
        hits = conn.execute("SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH"
                            " 'joke'").fetchone()[0]
    assert hits == 1


def test_cli_errors_exit_non_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("[{")
    assert main(["--store", str(tmp_path / "s"), "ingest", str(bad)]) != 0
    err = capsys.readouterr().err
    assert "bad.json" in err and "record 1" in err


def test_bundled_sample_as_a_directory(settings: Settings) -> None:
    sample = Path(__file__).resolve().parents[1] / "data" / "sample"
    report = ingest_paths(settings, [sample])
    assert [f.format for f in report.files] == ["chatgpt", "claude"]
    assert [(f.counts.conversations, f.counts.messages) for f in report.files] == [
        (13, 100), (3, 10)]
    with sqlite3.connect(settings.source_db) as conn:
        off_branch = conn.execute(
            "SELECT COUNT(*) FROM messages WHERE on_current_branch = 0").fetchone()[0]
        kinds = {row[0] for row in conn.execute(
            "SELECT json_extract(value, '$.kind') FROM messages, json_each(messages.parts)")}
        hits = conn.execute(
            "SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH 'Ledgerline'"
        ).fetchone()[0]
    assert off_branch == 3  # an edited prompt with its answer, and a regenerated answer
    assert kinds == {"image", "text"}
    assert hits >= 8


def test_zip_download_is_read_in_place(settings: Settings, tmp_path: Path) -> None:
    import zipfile

    archive = tmp_path / "chatgpt-export.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.write(TREE, "conversations.json")
        zf.writestr("user.json", json.dumps({"id": "user-1", "email": "a@example.org"}))
        zf.writestr("chat.html", "<html></html>")
    report = ingest_paths(settings, [archive])
    assert [f.path for f in report.files] == [f"{archive}!conversations.json"]
    assert report.totals.messages == 12
    again = ingest_paths(settings, [archive, TREE])  # same bytes as the plain file
    assert (again.totals.sources, again.totals.messages) == (0, 0)
    with sqlite3.connect(settings.source_db) as conn:
        assert conn.execute("SELECT path FROM sources").fetchall() == [
            (f"{archive}!conversations.json",)]
    empty = tmp_path / "other.zip"
    with zipfile.ZipFile(empty, "w") as zf:
        zf.writestr("projects.json", "[]")
    with pytest.raises(InputFileError, match=r"holds no conversations\*\.json"):
        ingest_paths(settings, [empty])

"""Hostile input (issue 11, classes 5 and 6): real files written here, ingested for real.

Pathological structure is cut while streaming and quarantines only its record; an oversized
record stops its file with nothing stored; bad timestamps become null with a recorded reason;
lone surrogates become U+FFFD with a recorded repair. Never a traceback.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from pipeline.cli import main
from pipeline.errors import InputFileError
from pipeline.ingest import ingest_paths
from pipeline.settings import Settings

FIXTURES = Path(__file__).parent / "fixtures"
TABLES = ("sources", "conversations", "messages", "quarantine", "repairs", "messages_fts")
BAD_TIMES: list[Any] = [1e20, "NaN", -5, "9999-12-31T23:59:59-05:00", True, {"t": 1}, "soon"]


def counts(settings: Settings) -> dict[str, int]:
    with sqlite3.connect(settings.source_db) as conn:
        return {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in TABLES}


def rows(settings: Settings, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(settings.source_db) as conn:
        return conn.execute(sql).fetchall()


def chatgpt(index: int, text: Any = "hello", ts: Any = 1.7e9) -> dict[str, Any]:
    content = {"content_type": "text", "parts": [text]}
    message = {"id": f"m{index}", "author": {"role": "user"}, "create_time": ts,
               "content": content}
    return {"id": f"c{index}", "title": "t", "create_time": ts, "mapping": {
        "root": {"id": "root", "message": None, "parent": None, "children": [f"m{index}"]},
        f"m{index}": {"id": f"m{index}", "parent": "root", "children": [], "message": message},
    }}


def nested(levels: int) -> bytes:
    return b"[" * levels + b'"x"' + b"]" * levels


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_hundred_thousand_open_brackets_is_one_clear_error(
    settings: Settings, tmp_path: Path
) -> None:
    ingest_paths(settings, [FIXTURES / "messages.jsonl"])
    before = counts(settings)
    bomb = write(tmp_path / "bomb.json", b"[" * 100_000)
    with pytest.raises(InputFileError) as caught:
        ingest_paths(settings, [bomb])
    assert (caught.value.path, caught.value.record) == (str(bomb), "record 1")
    assert "truncated JSON" in caught.value.reason
    assert counts(settings) == before
    good = json.dumps(chatgpt(1)).encode()
    closed = write(tmp_path / "closed.json", b"[" + good + b"," + nested(20_000) + b"]")
    report = ingest_paths(settings, [closed])
    [rejected] = report.totals.rejected
    offset = len(good) + 2 + 127  # "[", the good record, "," and 127 levels that fit
    assert (rejected.record, rejected.reason) == (
        "record 2", f"nested deeper than 128 levels (at file offset {offset:,})")
    assert report.totals.messages == 1


def test_deep_conversation_is_quarantined_and_its_neighbours_stored(
    settings: Settings, tmp_path: Path
) -> None:
    deep = json.dumps(chatgpt(2, "@@")).encode().replace(b'"@@"', nested(5000))
    path = write(tmp_path / "mixed.json", b"[" + b",".join(
        [json.dumps(chatgpt(1)).encode(), deep, json.dumps(chatgpt(3)).encode()]) + b"]")
    report = ingest_paths(settings, [path])
    assert (report.totals.conversations, report.totals.messages) == (2, 2)
    [(record, reason)] = rows(settings, "SELECT record, reason FROM quarantine")
    assert record == "record 2" and reason.startswith("nested deeper than 128 levels")
    before = counts(settings)
    ingest_paths(settings, [path])
    assert counts(settings) == before


@pytest.mark.parametrize("pretty", [False, True], ids=["one-line", "pretty"])
def test_deep_object_file_and_deep_message_part(
    settings: Settings, tmp_path: Path, pretty: bool
) -> None:
    record = chatgpt(1, "@@")
    record["mapping"]["m1"]["message"]["content"] = {
        "content_type": "multimodal_text", "parts": ["@@"]}
    text = json.dumps(record, indent=2 if pretty else None).encode()
    path = write(tmp_path / "deep-part.json", text.replace(b'"@@"', nested(1500)))
    report = ingest_paths(settings, [path])
    [rejected] = report.totals.rejected
    assert rejected.reason.startswith("nested deeper than 128 levels")
    assert counts(settings)["messages"] == 0


def test_jsonl_deep_and_oversized_lines_are_quarantined_alone(
    settings: Settings, tmp_path: Path
) -> None:
    line = {"conversation_id": "a", "role": "user", "content": "hi"}
    deep = b'{"conversation_id": "a", "role": "user", "content": ' + nested(3000) + b"}"
    big = json.dumps({**line, "content": "x" * (2 << 20)}).encode()
    path = write(tmp_path / "lines.jsonl", b"\n".join([
        json.dumps(line).encode(), deep, big, json.dumps({**line, "content": "yo"}).encode(),
    ]) + b"\n")
    report = ingest_paths(settings.model_copy(update={"import_max_record_mb": 1}), [path])
    assert report.totals.messages == 2
    assert rows(settings, "SELECT record, reason FROM quarantine ORDER BY record") == [
        ("line 2", "nested deeper than 128 levels"),
        ("line 3", "line longer than 1,048,576 bytes (skipped)"),
    ]


def test_oversized_array_record_stops_the_file_and_stores_nothing(
    settings: Settings, tmp_path: Path
) -> None:
    ingest_paths(settings, [FIXTURES / "messages.jsonl"])
    before = counts(settings)
    path = write(tmp_path / "big.json", json.dumps(
        [chatgpt(1), chatgpt(2, "x" * (3 << 20))]).encode())
    with pytest.raises(InputFileError) as caught:
        ingest_paths(settings.model_copy(update={"import_max_record_mb": 1}), [path])
    assert (caught.value.path, caught.value.record) == (str(path), "record 2")
    assert "larger than 1,048,576 bytes" in caught.value.reason
    assert counts(settings) == before
    assert ingest_paths(settings, [path]).totals.messages == 2  # the default limit takes it


def test_bad_timestamps_keep_the_message_with_a_recorded_reason(
    settings: Settings, tmp_path: Path
) -> None:
    export = [chatgpt(i, f"text {i}", ts) for i, ts in enumerate(BAD_TIMES)]
    path = write(tmp_path / "times.json", json.dumps(export).encode())
    lines = [{"conversation_id": "j", "role": "user", "content": f"line {i}", "timestamp": ts}
             for i, ts in enumerate(BAD_TIMES)]
    jsonl = write(tmp_path / "times.jsonl", "\n".join(map(json.dumps, lines)).encode())
    report = ingest_paths(settings, [path, jsonl])
    assert report.totals.messages == 2 * len(BAD_TIMES) and not report.totals.rejected
    stored = rows(settings, "SELECT created_at, json_extract(metadata, '$.invalid_time')"
                            " FROM messages")
    assert all(created is None and invalid for created, invalid in stored)
    reasons = {json.loads(invalid)[key]["reason"] for _, invalid in stored
               for key in json.loads(invalid)}
    assert reasons == {"outside 1970-01-01..2999-12-31", "not a finite number",
                       "not a timestamp (bool)", "not a timestamp (dict)",
                       "neither ISO 8601 nor an epoch number"}
    # each message and each chatgpt conversation time is one repairs row
    assert counts(settings)["repairs"] == 3 * len(BAD_TIMES) == report.totals.repaired_count
    before = counts(settings)
    ingest_paths(settings, [path, jsonl])
    assert counts(settings) == before


def test_lone_surrogates_become_replacement_characters_on_record(
    settings: Settings, tmp_path: Path
) -> None:
    text = b'"lone \\udc80 high \\ud800 pair \\ud83d\\ude00 literal \\\\udc80"'
    array = json.dumps([chatgpt(1, "@@")]).encode().replace(b'"@@"', text)
    jsonl = b'{"conversation_id": "s", "role": "user", "content": ' + text + b"}\n"
    report = ingest_paths(settings, [write(tmp_path / "s.json", array),
                                     write(tmp_path / "s.jsonl", jsonl)])
    assert report.totals.messages == 2 and not report.totals.rejected
    expected = "lone \ufffd high \ufffd pair \U0001f600 literal \\udc80"
    assert rows(settings, "SELECT text FROM messages") == [(expected,), (expected,)]
    repairs = rows(settings, "SELECT record, path, reason FROM repairs ORDER BY record, reason")
    assert repairs == [
        ("line 1", "$.content", "lone surrogate \\ud800 at offset 12 replaced by U+FFFD"),
        ("line 1", "$.content", "lone surrogate \\udc80 at offset 5 replaced by U+FFFD"),
        ("record 1", "$.mapping.m1.message.content.parts[0]",
         "lone surrogate \\ud800 at offset 12 replaced by U+FFFD"),
        ("record 1", "$.mapping.m1.message.content.parts[0]",
         "lone surrogate \\udc80 at offset 5 replaced by U+FFFD"),
    ]


def test_real_non_utf8_is_still_named(settings: Settings, tmp_path: Path) -> None:
    path = write(tmp_path / "latin1.json",
                 json.dumps([chatgpt(1, "@@")]).encode().replace(b"@@", b"caf\xe9"))
    with pytest.raises(InputFileError, match="invalid bytes in UTF8 string"):
        ingest_paths(settings, [path])


def test_cli_prints_hostile_outcomes_without_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(tmp_path / "store")
    deep = write(tmp_path / "deep.jsonl", b'{"conversation_id": "a", "role": "user",'
                 b' "content": ' + nested(2000) + b'}\n{"conversation_id": "a", "role": "user",'
                 b' "content": "\\udc80", "timestamp": 1e300}\n')
    assert main(["--store", store, "ingest", str(deep)]) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err and "1 record(s) quarantined" in err
    assert "2 value(s) repaired" in err
    bomb = write(tmp_path / "bomb.json", b"[" * 100_000)
    assert main(["--store", store, "ingest", str(bomb)]) != 0
    err = capsys.readouterr().err
    assert "Traceback" not in err and "bomb.json" in err and "record 1" in err


def test_numbers_beyond_yajl_do_not_reject_the_file(settings: Settings, tmp_path: Path) -> None:
    export = [chatgpt(1, ts=10**20), chatgpt(2, ts="@@"), chatgpt(3)]
    export[2]["mapping"]["m3"]["message"]["content"] = {"content_type": "multimodal_text",
                                                        "parts": [{"big": 10**28 + 1}]}
    text = json.dumps(export).encode().replace(b'"@@"', b"1e400")
    report = ingest_paths(settings, [write(tmp_path / "numbers.json", text)])
    assert report.totals.messages == 3 and not report.totals.rejected
    assert [r.reason for r in report.totals.repaired] == 2 * [  # conversation, then message
        "timestamp '100000000000000000000': outside 1970-01-01..2999-12-31; stored as null",
    ] + 2 * ["timestamp 'Infinity': not a finite number; stored as null"]
    [(parts,)] = rows(settings, "SELECT parts FROM messages WHERE external_id = 'm3'")
    assert json.loads(parts)[0]["data"]["big"] == 10**28 + 1  # exact, not a double
    assert rows(settings, "SELECT created_at FROM messages ORDER BY external_id") == [
        (None,), (None,), ("2023-11-14T22:13:20+00:00",)]
    before = counts(settings)
    ingest_paths(settings, [tmp_path / "numbers.json"])
    assert counts(settings) == before


def test_hostile_zip_member_is_read_in_place(settings: Settings, tmp_path: Path) -> None:
    import zipfile

    deep = json.dumps(chatgpt(2, "@@")).encode().replace(b'"@@"', nested(3000))
    member = b"[" + b",".join([json.dumps(chatgpt(1, ts=10**20)).encode(), deep,
                               json.dumps(chatgpt(3, "@@")).encode().replace(
                                   b"@@", b"x\\udc80")]) + b"]"
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("conversations.json", member)
    report = ingest_paths(settings, [archive])
    assert (report.totals.conversations, report.totals.messages) == (2, 2)
    assert [r.record for r in report.totals.rejected] == ["record 2"]
    assert {r.path for r in report.totals.repaired} == {
        "conversation.create_time", "message m1.create_time",
        "$.mapping.m3.message.content.parts[0]"}


def test_many_tiny_broken_records_are_counted_not_held(
    settings: Settings, tmp_path: Path
) -> None:
    n = 3000  # enough to pass the in-memory cap; each is a quarantine row
    path = write(tmp_path / "tiny.json", b"[" + b",".join(
        [json.dumps(chatgpt(1)).encode()] + [b"{}"] * n) + b"]")
    report = ingest_paths(settings, [path])
    assert report.totals.rejected_count == n == counts(settings)["quarantine"]
    assert len(report.totals.rejected) == 1000
    assert f"{n} record(s) quarantined" in report.summary()

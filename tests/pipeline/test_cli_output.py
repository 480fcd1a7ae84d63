"""Issue 11, class 3: text from an export is printed as text, never as markup or escape codes."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest

from pipeline.cli.app import main
from pipeline.cli.output import emit_json, plain
from pipeline.settings import Settings

TERMINAL = "[/] [bold red]x[/bold red] :smile: \x1b[2J\x1b]0;pwned\x07\r\u202e"
HOSTILE = TERMINAL + "\udc80"  # a lone surrogate too (its import is the `hostile` branch's)


def _cli(settings: Settings, *args: str) -> int:
    return main(["--store", str(settings.store), *args])


def _assert_inert(text: str) -> None:
    """No escape or control code reached the terminal; markup came out literally."""
    assert "\x1b" not in text and "\x07" not in text and "\r" not in text
    assert "\u202e" not in text and "\x9b" not in text
    assert "Traceback" not in text


def test_plain_shows_controls_as_visible_escapes() -> None:
    assert plain(HOSTILE) == ("[/] [bold red]x[/bold red] :smile: \\x1b[2J\\x1b]0;pwned\\x07"
                              "\\x0d\\u202e\\udc80")
    assert plain("line one\n\tline two") == "line one\n\tline two"


def test_emit_json_is_valid_and_escapes_every_control(capsys: pytest.CaptureFixture[str]) -> None:
    emit_json({"quote": HOSTILE + "\x9b", "score": float("nan")})
    out = capsys.readouterr().out
    _assert_inert(out)
    assert json.loads(out) == {"quote": HOSTILE + "\x9b", "score": None}


def _hostile_jsonl(path: Path) -> Path:
    lines = [
        {"conversation_id": f"c{TERMINAL}", "id": f"m{TERMINAL}", "role": "user",
         "content": "I want to learn Rust this year.", "timestamp": "2024-06-01T09:00:00Z"},
        {"conversation_id": f"c{TERMINAL}", "id": "bad", "role": TERMINAL, "content": "x",
         "timestamp": "2024-06-01T09:00:01Z"},
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


def test_markup_and_escapes_in_records_are_printed_as_text_on_every_rerun(
    settings: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export = _hostile_jsonl(tmp_path / "hostile.jsonl")
    for _ in range(2):  # the issue: ingest committed, then crashed on every re-run
        assert _cli(settings, "ingest", str(export)) == 0
        captured = capsys.readouterr()
        _assert_inert(captured.err + captured.out)
        assert "1 record(s) quarantined" in captured.err and "[/]" in captured.err
    with sqlite3.connect(settings.source_db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM messages").fetchone() == (1,)
        assert conn.execute("SELECT COUNT(*) FROM quarantine").fetchone() == (1,)


@pytest.mark.skipif(sys.platform == "win32", reason="control characters in file names")
def test_errors_naming_a_hostile_file_print_it_as_text(
    settings: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "export [bold]\x1b[2J\r.json"
    bad.write_text('[{"mapping": ', encoding="utf-8")  # truncated JSON: a file-level error
    assert _cli(settings, "ingest", str(bad)) == 1
    err = capsys.readouterr().err
    _assert_inert(err)
    assert "export [bold]\\x1b[2J\\x0d.json" in err and "Error: " in err


def test_install_hints_keep_their_brackets(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "neo4j", None)  # the Neo4j driver is an extra
    assert _cli(settings, "cypher", "RETURN 1", "--backend", "neo4j") == 1
    assert "pip install 'conceptmem[neo4j]'" in capsys.readouterr().err


def test_search_results_print_message_text_as_text(
    settings: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export = tmp_path / "hostile.jsonl"
    line = {"conversation_id": "c1", "id": "m1", "role": "user",
            "content": f"learning Rust {TERMINAL} every day", "timestamp": "2024-06-01T09:00:00Z"}
    export.write_text(json.dumps(line) + "\n", encoding="utf-8")
    assert _cli(settings, "ingest", str(export)) == 0
    capsys.readouterr()
    for extra in ((), ("--json",)):
        assert _cli(settings, "search", "Rust", "--k", "1", *extra) == 0
        captured = capsys.readouterr()
        _assert_inert(captured.out + captured.err)
    assert json.loads(captured.out)[0]["excerpt"].startswith("learning Rust [/]")

"""Format auto-detection by peeking at the first record, and streaming of a file's records.

A file is one of three containers: a JSON array (``[...]``, streamed item by item with ijson
so memory stays bounded), JSON lines (one JSON value per line), or a single JSON object (read
as one record). The format is guessed from the keys of the first record.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

import ijson

from pipeline.errors import ImportFormatError, InputFileError

__all__ = [
    "FORMAT_NAMES",
    "BadLine",
    "Container",
    "Detected",
    "classify_keys",
    "detect",
    "iter_records",
]

try:  # the C backend is ~10x faster; fall back to whatever ijson picked
    _IJSON: Any = ijson.get_backend("yajl2_c")
except ImportError:  # pragma: no cover - depends on the wheel
    _IJSON = ijson

Container = Literal["array", "lines", "object"]
FORMAT_NAMES = ("chatgpt", "claude", "jsonl", "sharegpt", "locomo", "openwebui")
_BOM = b"\xef\xbb\xbf"
_NOTHING_STORED = "re-export the file or fix it; nothing from this file was stored"
_HINT = "pass --format with one of: " + ", ".join(FORMAT_NAMES)


@dataclass(frozen=True)
class Detected:
    format: str
    container: Container


@dataclass(frozen=True)
class BadLine:
    """A JSON line that does not parse; the reader yields it so it can be quarantined."""

    reason: str
    excerpt: str


def classify_keys(keys: set[str]) -> str | None:
    """The format whose records carry these top-level keys, or None."""
    rules: list[tuple[str, Callable[[set[str]], bool]]] = [
        ("chatgpt", lambda k: "mapping" in k or "current_node" in k),
        ("claude", lambda k: "chat_messages" in k or {"uuid", "name"} <= k),
        ("locomo", lambda k: {"sample_id", "conversation"} <= k),
        ("openwebui", lambda k: "chat" in k),
        ("sharegpt", lambda k: "conversations" in k),
        ("jsonl", lambda k: ("role" in k or "sender" in k) and bool({"content", "text"} & k)),
        ("chatgpt", lambda k: {"create_time", "title"} <= k),
    ]
    for name, rule in rules:
        if rule(keys):
            return name
    return None


def _skip_bom(f: IO[bytes]) -> None:
    if f.read(3) != _BOM:
        f.seek(0)


def _first_char(f: IO[bytes]) -> bytes:
    _skip_bom(f)
    while True:
        char = f.read(1)
        if not char or not char.isspace():
            f.seek(0)
            _skip_bom(f)
            return char


def _peek_lines(f: IO[bytes]) -> set[str] | None:
    """Keys of the first JSON line, or None if the first line is not a complete JSON value."""
    for raw in f:
        line = raw.strip()
        if not line:
            continue
        try:
            value = json.loads(line)
        except ValueError:
            return None
        return set(value) if isinstance(value, dict) else set()
    return set()


def _peek_keys(path: Path, f: IO[bytes], prefix: str) -> set[str]:
    """Keys of the first object at ``prefix`` ('item' for arrays, '' for one object)."""
    keys: set[str] = set()
    try:
        for event_prefix, event, value in _IJSON.parse(f):
            if event_prefix == prefix and event == "map_key":
                keys.add(value)
            elif event_prefix == prefix and event == "end_map":
                return keys
    except ijson.JSONError as exc:
        raise InputFileError(
            str(path), "record 1", f"invalid or truncated JSON ({exc})", _NOTHING_STORED
        ) from exc
    return keys


def _container(path: Path, f: IO[bytes]) -> tuple[Container, set[str]]:
    first = _first_char(f)
    if first == b"[":
        return "array", _peek_keys(path, f, "item")
    if first == b"{":
        keys = _peek_lines(f)
        f.seek(0)
        _skip_bom(f)
        if keys is not None:
            return "lines", keys
        return "object", _peek_keys(path, f, "")
    what = "an empty file" if not first else f"a file starting with {first!r}"
    raise ImportFormatError(
        str(path), "file", f"not a JSON or JSONL export: {what}", _HINT
    )


def detect(
    path: Path, override: str | None = None, opener: Callable[[], IO[bytes]] | None = None
) -> Detected:
    """Container and format of ``path``; ``override`` (``--format``) skips the key check.

    ``opener`` reads the bytes from elsewhere (a zip member); ``path`` then only names it.
    """
    if override is not None and override not in FORMAT_NAMES:
        raise ImportFormatError(str(path), "--format", f"unknown format {override!r}", _HINT)
    try:
        with (opener or (lambda: path.open("rb")))() as f:
            container, keys = _container(path, f)
    except OSError as exc:
        raise InputFileError(str(path), "file", f"cannot read ({exc.strerror or exc})") from exc
    if override is not None:
        return Detected(override, container)
    name = classify_keys(keys)
    if name is None:
        seen = ", ".join(sorted(keys)[:12]) or "no keys"
        raise ImportFormatError(
            str(path), "first record", f"unknown export format (top-level keys: {seen})", _HINT
        )
    return Detected(name, container)


def _iter_lines(f: IO[bytes]) -> Iterator[tuple[str, object]]:
    for number, raw in enumerate(f, start=1):
        line = raw.strip()
        if not line:
            continue
        try:
            yield f"line {number}", json.loads(line)
        except ValueError as exc:
            excerpt = line[:300].decode("utf-8", "replace")
            yield f"line {number}", BadLine(f"invalid JSON ({exc})", excerpt)


def iter_records(path: Path, f: IO[bytes], container: Container) -> Iterator[tuple[str, object]]:
    """(record label, value) pairs; a JSON error in an array/object is fatal for the file."""
    _skip_bom(f)
    if container == "lines":
        yield from _iter_lines(f)
        return
    index = 0
    try:
        if container == "object":
            for value in _IJSON.items(f, "", use_float=True):
                yield "record 1", value
            return
        for index, value in enumerate(_IJSON.items(f, "item", use_float=True), start=1):
            yield f"record {index}", value
    except ijson.JSONError as exc:
        where = f"record {index + 1}" if container == "array" else "record 1"
        raise InputFileError(
            str(path), where, f"invalid or truncated JSON ({exc})",
            _NOTHING_STORED,
        ) from exc
    except UnicodeDecodeError as exc:
        raise InputFileError(str(path), f"record {index + 1}", f"not UTF-8 ({exc})") from exc

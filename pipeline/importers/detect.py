"""Format auto-detection by peeking at the first record, and streaming of a file's records.

A file is one of three containers: a JSON array (``[...]``, streamed item by item with ijson
so memory stays bounded), JSON lines (one JSON value per line), or a single JSON object (read
as one record). The format is guessed from the keys of the first record.

Hostile structure is bounded while it streams (:mod:`pipeline.importers.guard`): a record
nested deeper than ``Limits.max_depth`` is yielded as a :class:`BadLine` (quarantined, the rest
of the file is read); a JSON line longer than ``Limits.max_record_bytes`` likewise; an array
item or object larger than that stops the file (:class:`~pipeline.errors.InputFileError`).
Lone surrogate escapes become U+FFFD and each replacement is appended to ``repairs``.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

import ijson

from pipeline.errors import ImportFormatError, InputFileError
from pipeline.importers.guard import (
    DEFAULT_LIMITS,
    GuardedReader,
    Limits,
    RecordTooLarge,
    too_deep,
)
from pipeline.importers.settle import settle
from staging import RepairedValue

__all__ = [
    "FORMAT_NAMES",
    "BadLine",
    "Container",
    "Detected",
    "NumberOverflow",
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
# json.loads decodes UTF-8-encoded surrogates (invalid UTF-8, but common) with surrogatepass
_RAW_SURROGATE = re.compile(b"\xed[\xa0-\xbf]")
_ESCAPED_SURROGATE = re.compile(rb"\\u[dD]")
_TOO_LARGE = (
    "split the export, or raise CONCEPTMEM_IMPORT_MAX_RECORD_MB; nothing from this file was"
    " stored"
)
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


class NumberOverflow(InputFileError):
    """yajl refused a number (an integer beyond 64 bits, 1e400): read the file again with
    ``tag_numbers`` (see :class:`~pipeline.importers.guard.GuardedReader`)."""


def _json_error(path: Path, record: str, exc: Exception, tag_numbers: bool) -> InputFileError:
    message = _first_line(exc)
    error = NumberOverflow if "overflow" in message and not tag_numbers else InputFileError
    return error(str(path), record, f"invalid or truncated JSON ({message})", _NOTHING_STORED)


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


def _read_line(f: IO[bytes], limit: int) -> bytes | None:
    """The next line (b"" at the end); None for a line longer than ``limit`` (skipped)."""
    line = f.readline(limit + 1)
    if len(line) <= limit or line.endswith(b"\n"):
        return line
    while line and not line.endswith(b"\n"):
        line = f.readline(1 << 20)
    return None


def _peek_lines(path: Path, f: IO[bytes], limits: Limits) -> set[str] | None:
    """Keys of the first JSON line, or None if the first line is not a complete JSON value."""
    while (raw := _read_line(f, limits.max_record_bytes)) is not None:
        line = raw.strip()
        if not line:
            if not raw:
                return set()
            continue
        if too_deep(line, limits.max_depth):  # its top-level keys survive the depth cut
            try:
                return _peek_keys(path, io.BytesIO(line), "", limits)
            except InputFileError:
                return None
        try:
            value = json.loads(line)
        except ValueError:
            return None
        return set(value) if isinstance(value, dict) else set()
    return None


def _first_line(exc: Exception) -> str:
    """The parser's message without the excerpt of the file yajl appends to it."""
    message = exc.args[0] if exc.args else ""
    if isinstance(message, bytes):
        message = message.decode("utf-8", "replace")
    return (str(message).strip().splitlines() or [type(exc).__name__])[0]


def _not_utf8(exc: UnicodeDecodeError) -> str:
    return f"not UTF-8 (byte {exc.object[exc.start]:#04x} cannot start or continue a character)"


def _peek_keys(path: Path, f: IO[bytes], prefix: str, limits: Limits) -> set[str]:
    """Keys of the first object at ``prefix`` ('item' for arrays, '' for one object)."""
    try:
        return _peek_keys_once(path, f, prefix, limits, tag_numbers=False)
    except NumberOverflow:
        f.seek(0)
        _skip_bom(f)
        return _peek_keys_once(path, f, prefix, limits, tag_numbers=True)


def _peek_keys_once(
    path: Path, f: IO[bytes], prefix: str, limits: Limits, tag_numbers: bool
) -> set[str]:
    keys: set[str] = set()
    reader = GuardedReader(f, limits, 1 if prefix else 0, tag_numbers)
    try:
        for event_prefix, event, value in _IJSON.parse(reader):
            if event_prefix == prefix and event == "map_key":
                keys.add(value)
            elif event_prefix == prefix and event == "end_map":
                return keys
    except ijson.JSONError as exc:
        raise _json_error(path, "record 1", exc, tag_numbers) from exc
    except RecordTooLarge as exc:
        raise InputFileError(str(path), "record 1", exc.reason, _TOO_LARGE) from exc
    except UnicodeDecodeError as exc:
        raise InputFileError(str(path), "record 1", _not_utf8(exc)) from exc
    return keys


def _container(path: Path, f: IO[bytes], limits: Limits) -> tuple[Container, set[str]]:
    first = _first_char(f)
    if first == b"[":
        return "array", _peek_keys(path, f, "item", limits)
    if first == b"{":
        keys = _peek_lines(path, f, limits)
        f.seek(0)
        _skip_bom(f)
        if keys is not None:
            return "lines", keys
        return "object", _peek_keys(path, f, "", limits)
    what = "an empty file" if not first else f"a file starting with {first!r}"
    raise ImportFormatError(
        str(path), "file", f"not a JSON or JSONL export: {what}", _HINT
    )


def detect(
    path: Path, override: str | None = None, opener: Callable[[], IO[bytes]] | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> Detected:
    """Container and format of ``path``; ``override`` (``--format``) skips the key check.

    ``opener`` reads the bytes from elsewhere (a zip member); ``path`` then only names it.
    """
    if override is not None and override not in FORMAT_NAMES:
        raise ImportFormatError(str(path), "--format", f"unknown format {override!r}", _HINT)
    try:
        with (opener or (lambda: path.open("rb")))() as f:
            container, keys = _container(path, f, limits)
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


def _excerpt(value: object) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)[:300]
    except (TypeError, ValueError, RecursionError):
        return repr(value)[:300]


def _load_line(
    label: str, line: bytes, limits: Limits, repairs: list[RepairedValue]
) -> object:
    """One JSON line as a value, or a BadLine saying why not."""
    if too_deep(line, limits.max_depth):
        return BadLine(f"nested deeper than {limits.max_depth} levels",
                       line[:300].decode("utf-8", "replace"))
    try:
        value = json.loads(line)
    except ValueError as exc:
        return BadLine(f"invalid JSON ({exc})", line[:300].decode("utf-8", "replace"))
    if (b"\\" in line and _ESCAPED_SURROGATE.search(line)) or (
            b"\xed" in line and _RAW_SURROGATE.search(line)):
        settled = settle(value)
        repairs.extend(RepairedValue(label, where, what) for where, what in settled.repairs)
        value = settled.value
    return value


def _iter_lines(
    f: IO[bytes], limits: Limits, repairs: list[RepairedValue]
) -> Iterator[tuple[str, object]]:
    number = 0
    while True:
        raw = _read_line(f, limits.max_record_bytes)
        number += 1
        if raw is None:
            reason = f"line longer than {limits.max_record_bytes:,} bytes (skipped)"
            yield f"line {number}", BadLine(reason, "")
            continue
        if not raw:
            return
        line = raw.strip()
        if line:
            yield f"line {number}", _load_line(f"line {number}", line, limits, repairs)


def _settled(
    label: str, value: object, reader: GuardedReader, repairs: list[RepairedValue]
) -> object:
    """The record with its lone surrogates replaced, or a BadLine if a value was cut."""
    settled = settle(value, reader.edits)
    if settled.cuts:
        where = f" (at file offset {settled.cut_at:,})" if settled.cut_at is not None else ""
        reason = f"nested deeper than {reader.limits.max_depth} levels{where}"
        return BadLine(reason, _excerpt(settled.value))
    repairs.extend(RepairedValue(label, where, what) for where, what in settled.repairs)
    return settled.value


def iter_records(
    path: Path, f: IO[bytes], container: Container, limits: Limits = DEFAULT_LIMITS,
    repairs: list[RepairedValue] | None = None, tag_numbers: bool = False,
) -> Iterator[tuple[str, object]]:
    """(record label, value) pairs; a JSON error in an array/object is fatal for the file.

    Lone-surrogate replacements are appended to ``repairs`` (when given) as they are made. A
    number yajl cannot hold raises :class:`NumberOverflow` unless ``tag_numbers`` is set
    (slower; for a second pass over such a file).
    """
    repairs = [] if repairs is None else repairs
    _skip_bom(f)
    if container == "lines":
        yield from _iter_lines(f, limits, repairs)
        return
    index = 0
    reader = GuardedReader(f, limits, 0 if container == "object" else 1, tag_numbers)
    prefix = "" if container == "object" else "item"
    try:
        for index, value in enumerate(_IJSON.items(reader, prefix, use_float=True), start=1):
            label = f"record {index}"
            yield label, _settled(label, value, reader, repairs) if reader.edits.pending \
                else value
    except ijson.JSONError as exc:
        raise _json_error(path, f"record {index + 1}", exc, tag_numbers) from exc
    except RecordTooLarge as exc:
        raise InputFileError(str(path), f"record {index + 1}", exc.reason, _TOO_LARGE) from exc
    except UnicodeDecodeError as exc:
        raise InputFileError(str(path), f"record {index + 1}", _not_utf8(exc)) from exc

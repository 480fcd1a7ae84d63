"""Fuzz every importer end to end: random structure, depth, text and timestamps.

Records are shaped like each format, but any field may hold a hostile value (deep nesting, a
wrong type, lone surrogates, brackets and quotes in text, NaN/1e20/year-9999 times), and the
file's bytes may be cut short or hit by a stray byte. Whatever comes in, ingest either stores
it (quarantining or repairing what it must) or refuses the file with an ``InputFileError``
and stores nothing from it; re-ingesting changes nothing. Never another exception.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from pipeline.errors import InputFileError
from pipeline.ingest import ingest_paths
from pipeline.settings import Settings

TABLES = ("sources", "conversations", "messages", "quarantine", "repairs")
TEXT = st.text(alphabet=st.sampled_from(list('ab [ ]{}"\\/\n\x00\u00e9\U0001f600\ud83d\udc80')),
               max_size=10)
SCALAR = st.none() | st.booleans() | st.integers() | TEXT | st.floats(
    allow_nan=False, allow_infinity=False)
TIMES = st.sampled_from([1.7e9, 1_700_000_000_123, "2024-05-01T10:00:00Z", 1e20, -5, 0,
                         "9999-12-31T23:59:59-05:00", "NaN", "1e400", 10**30, True, "", None])


@st.composite
def deep(draw: st.DrawFn) -> Any:
    value: Any = draw(SCALAR)
    for i in range(draw(st.integers(100, 400))):
        value = [value] if i % 2 else {"k": value}
    return value


SHALLOW = st.recursive(SCALAR, lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(TEXT, inner, max_size=3), max_leaves=8)
ANY = st.one_of(SHALLOW, SHALLOW, SHALLOW, deep())


def maybe(sensible: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly the sensible value, sometimes anything at all."""
    return st.one_of(sensible, sensible, sensible, ANY)


IDS = maybe(st.sampled_from(["a", "b", "c", "d"]) | TEXT)
ROLES = maybe(st.sampled_from(["user", "assistant", "human", "gpt", "system", "tool", "Robot"]))


@st.composite
def chatgpt(draw: st.DrawFn) -> Any:
    nodes = draw(st.lists(IDS, max_size=4))
    mapping = {str(n): maybe(st.fixed_dictionaries({
        "id": st.just(str(n)), "parent": IDS, "children": maybe(st.lists(IDS, max_size=2)),
        "message": maybe(st.fixed_dictionaries({
            "id": IDS, "author": maybe(st.fixed_dictionaries({"role": ROLES})),
            "create_time": maybe(TIMES),
            "content": maybe(st.fixed_dictionaries({
                "content_type": maybe(st.sampled_from(["text", "multimodal_text", "code",
                                                       "thoughts"])),
                "parts": maybe(st.lists(maybe(TEXT), max_size=2))})),
        })),
    })) for n in nodes}
    return draw(st.fixed_dictionaries({
        "id": IDS, "title": maybe(TEXT), "create_time": maybe(TIMES),
        "update_time": maybe(TIMES), "mapping": maybe(st.fixed_dictionaries(mapping)),
        "current_node": IDS,
    }))


CLAUDE = st.fixed_dictionaries({
    "uuid": IDS, "name": maybe(TEXT), "created_at": maybe(TIMES),
    "chat_messages": maybe(st.lists(maybe(st.fixed_dictionaries({
        "uuid": IDS, "sender": ROLES, "text": maybe(TEXT), "created_at": maybe(TIMES),
        "parent_message_uuid": IDS,
        "content": maybe(st.lists(maybe(st.fixed_dictionaries({
            "type": maybe(st.sampled_from(["text", "thinking", "tool_use", "tool_result"])),
            "text": maybe(TEXT), "input": ANY})), max_size=2)),
        "attachments": maybe(st.lists(ANY, max_size=1)),
    })), max_size=3)),
})
LINE = st.fixed_dictionaries({
    "conversation_id": IDS, "role": ROLES, "content": maybe(TEXT), "timestamp": maybe(TIMES),
}, optional={"id": IDS, "parent_id": IDS})
SHAREGPT = st.fixed_dictionaries({"id": IDS, "conversations": maybe(st.lists(maybe(
    st.fixed_dictionaries({"from": ROLES, "value": maybe(TEXT)})), max_size=3))})
LOCOMO = st.fixed_dictionaries({"sample_id": IDS, "conversation": maybe(st.fixed_dictionaries({
    "speaker_a": maybe(TEXT), "speaker_b": maybe(TEXT),
    "session_1_date_time": maybe(st.sampled_from(["1:56 pm on 8 May, 2023",
                                                  "1:56 pm on 31 December, 9999"]) | TEXT),
    "session_1": maybe(st.lists(maybe(st.fixed_dictionaries({
        "speaker": maybe(TEXT), "dia_id": IDS, "text": maybe(TEXT),
        "blip_caption": maybe(TEXT)})), max_size=3)),
}))})
OPENWEBUI_MESSAGE = st.fixed_dictionaries({
    "id": IDS, "parentId": IDS, "role": ROLES, "content": maybe(TEXT),
    "timestamp": maybe(TIMES)})
OPENWEBUI = st.fixed_dictionaries({"id": IDS, "title": maybe(TEXT), "created_at": maybe(TIMES),
                                   "chat": maybe(st.fixed_dictionaries({
                                       "history": maybe(st.fixed_dictionaries({
                                           "messages": maybe(st.dictionaries(
                                               TEXT, maybe(OPENWEBUI_MESSAGE), max_size=3)),
                                           "currentId": IDS})),
                                       "messages": maybe(st.lists(OPENWEBUI_MESSAGE,
                                                                  max_size=2))}))})
FORMATS: dict[str, st.SearchStrategy[Any]] = {
    "chatgpt": chatgpt(), "claude": CLAUDE, "jsonl": LINE, "sharegpt": SHAREGPT,
    "locomo": LOCOMO, "openwebui": OPENWEBUI,
}


def counts(store: Settings) -> dict[str, int]:
    if not store.source_db.exists():
        return {}
    with sqlite3.connect(store.source_db) as conn:
        return {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in TABLES}


def encode(records: list[Any], container: str, ascii_only: bool) -> bytes:
    def dump(value: Any) -> bytes:
        return json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")

    if container == "lines":
        return b"\n".join(dump(r) for r in records) + b"\n"
    if container == "object":
        return dump(records[0] if records else {})
    return dump(records)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return Settings(store=tmp_path_factory.mktemp("fuzz") / "store", import_max_record_mb=1)


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_ingest_never_raises_anything_but_input_errors(
    fmt: str, store: Settings, tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp(fmt)

    @settings(max_examples=50, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(records=st.lists(FORMATS[fmt], min_size=1, max_size=3),
           container=st.sampled_from(["array", "lines", "object"]),
           ascii_only=st.booleans(), detect=st.booleans(),
           damage=st.one_of(st.none(), st.none(), st.none(),
                            st.tuples(st.integers(0, 10**6), st.binary(max_size=2))))
    def check(records: list[Any], container: str, ascii_only: bool, detect: bool,
              damage: tuple[int, bytes] | None) -> None:
        data = encode(records, container, ascii_only)
        if damage is not None:  # cut the file short there, or put a stray byte in
            at = damage[0] % (len(data) + 1)
            data = data[:at] + damage[1] + (data[at:] if damage[1] else b"")
        path = folder / f"export-{abs(hash(data))}.json"
        path.write_bytes(data)
        before = counts(store)
        try:
            first = ingest_paths(store, [path], None if detect else fmt)
        except InputFileError as exc:
            event("file refused")
            assert exc.path == str(path) and exc.record and exc.reason
            assert counts(store) == before  # nothing from a refused file is stored
            return
        after = counts(store)
        event(f"stored, {'some' if first.totals.rejected else 'none'} quarantined,"
              f" {'some' if first.totals.repaired else 'none'} repaired")
        assert after["quarantine"] - before.get("quarantine", 0) <= len(first.totals.rejected)
        again = ingest_paths(store, [path], None if detect else fmt)
        assert (again.totals.conversations, again.totals.messages) == (0, 0)
        assert counts(store) == after

    check()

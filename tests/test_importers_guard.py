"""The streaming guard: bytes in random chunk sizes, checked against json's own reading."""

from __future__ import annotations

import io
import json
import re
from typing import Any

import ijson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.importers.base import BadTime, read_time, timestamp
from pipeline.importers.guard import GuardedReader, Limits, RecordTooLarge, too_deep
from pipeline.importers.settle import settle

BACKEND: Any = ijson.get_backend("yajl2_c")
LONE = re.compile("[\ud800-\udfff]")
TEXT = st.text(alphabet=st.sampled_from(list('ab"\\[[[{{/\n\u00e9\U0001f600\ud83d\udc80\ude00')),
               max_size=24)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=30,
)


class Trickle(io.RawIOBase):
    """A reader that hands out the bytes in the given chunk sizes (then the rest)."""

    def __init__(self, data: bytes, sizes: list[int]) -> None:
        self.data, self.sizes, self.pos = data, list(sizes), 0

    def read(self, size: int = -1) -> bytes:
        step = self.sizes.pop(0) if self.sizes else len(self.data)
        chunk = self.data[self.pos:self.pos + max(step, 1)]
        self.pos += len(chunk)
        return chunk

    def tell(self) -> int:
        return self.pos


def depth(value: object) -> int:
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    return 0


def repaired(value: object) -> object:
    """What the guard promises: every lone surrogate replaced by U+FFFD."""
    if isinstance(value, str):
        return LONE.sub("\ufffd", value)
    if isinstance(value, list):
        return [repaired(v) for v in value]
    if isinstance(value, dict):
        return {repaired(k): repaired(v) for k, v in value.items()}
    return value


def lone_count(value: object) -> int:
    if isinstance(value, str):
        return len(LONE.findall(value))
    if isinstance(value, list):
        return sum(lone_count(v) for v in value)
    if isinstance(value, dict):
        return sum(lone_count(k) + lone_count(v) for k, v in value.items())
    return 0


def read_all(data: bytes, sizes: list[int], limits: Limits) -> list[Any]:
    reader = GuardedReader(Trickle(data, sizes), limits, record_depth=1)
    out = []
    for value in BACKEND.items(reader, "item", use_float=True):
        out.append(settle(value, reader.edits) if reader.edits.pending else value)
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=st.lists(JSON, max_size=4), sizes=st.lists(st.integers(1, 40), max_size=60),
       ascii_only=st.booleans())
def test_stream_is_unchanged_except_lone_surrogates(
    items: list[Any], sizes: list[int], ascii_only: bool
) -> None:
    if not ascii_only:  # raw lone surrogates cannot be UTF-8; json escapes them only in ascii
        items = [repaired(v) for v in items]
    data = json.dumps(items, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    reference = json.loads(data)  # json's reading: adjacent halves are one pair
    # the limit at the true depth: brackets inside strings must not count towards it
    got = read_all(data, sizes, Limits(max_depth=depth(reference)))
    values = [g.value if hasattr(g, "value") else g for g in got]
    assert values == [repaired(v) for v in reference]
    repairs = sum(len(g.repairs) for g in got if hasattr(g, "repairs"))
    assert repairs == sum(lone_count(v) for v in reference)


@settings(max_examples=60, deadline=None)
@given(levels=st.integers(5, 60), sizes=st.lists(st.integers(1, 30), max_size=80),
       limit=st.integers(3, 20), runs=st.booleans())
def test_too_deep_values_are_cut_and_neighbours_kept(
    levels: int, sizes: list[int], limit: int, runs: bool
) -> None:
    deep: Any = "x[\"]"
    for i in range(levels):  # runs: [[[[..]]]] (one token per run), else [{"k": [{"k": ...
        deep = [deep] if i % 2 or runs else {"k": deep}
    items = [{"a": 1}, {"deep": deep}, ["b"]]
    got = read_all(json.dumps(items).encode(), sizes, Limits(max_depth=limit))
    assert len(got) == 3
    middle = got[1]
    too_deep_now = levels + 2 > limit  # the array and the item's own object
    assert getattr(middle, "cuts", 0) == (1 if too_deep_now else 0)
    assert [getattr(g, "value", g) for g in (got[0], got[2])] == [{"a": 1}, ["b"]]
    assert [getattr(g, "cuts", 0) for g in (got[0], got[2])] == [0, 0]
    if too_deep_now:
        assert depth(middle.value) <= limit - 1  # inside the top-level array


def test_hundred_thousand_open_brackets_stay_small() -> None:
    reader = GuardedReader(io.BytesIO(b"[" * 100_000), Limits(), record_depth=1)
    with pytest.raises(ijson.JSONError):
        list(BACKEND.items(reader, "item"))
    assert len(reader.edits.cuts) == 1


def test_record_size_limit_counts_one_record_not_the_file() -> None:
    item = json.dumps({"t": "x" * 3000}).encode()
    many = b"[" + b",".join([item] * 2000) + b"]"  # 6 MB in records of 3 kB
    assert len(list(BACKEND.items(GuardedReader(io.BytesIO(many), Limits(
        max_record_bytes=2 << 20), 1), "item"))) == 2000
    huge = b'[{"t": "' + b"x" * (3 << 20) + b'"}]'
    with pytest.raises(RecordTooLarge):
        list(BACKEND.items(GuardedReader(io.BytesIO(huge), Limits(max_record_bytes=2 << 20), 1),
                           "item"))


def test_too_deep_ignores_brackets_inside_strings() -> None:
    assert not too_deep(json.dumps({"t": "[" * 500}).encode(), 10)
    assert too_deep(b"[" * 11 + b"]" * 11, 10)
    assert not too_deep(b"[" * 10 + b"]" * 10, 10)


@pytest.mark.parametrize(("value", "expected"), [
    (1_700_000_000, "2023-11-14T22:13:20+00:00"),
    (1_700_000_000_000, "2023-11-14T22:13:20+00:00"),  # milliseconds
    (1_700_000_000_000_000, "2023-11-14T22:13:20+00:00"),  # microseconds
    ("1700000000000000000", "2023-11-14T22:13:20+00:00"),  # nanoseconds, as text
    ("2023-11-14T23:13:20+01:00", "2023-11-14T22:13:20+00:00"),
    ("2023-11-14 22:13:20", "2023-11-14T22:13:20+00:00"),  # naive is read as UTC
    (None, None), ("", None), ("  ", None),
])
def test_read_time_accepts(value: object, expected: str | None) -> None:
    got = read_time(value)
    assert (got.isoformat() if got else None) == expected


@pytest.mark.parametrize(("value", "reason"), [
    (1e20, "outside 1970-01-01..2999-12-31"), (-5, "outside 1970-01-01..2999-12-31"),
    ("9999-12-31T23:59:59-05:00", "outside 1970-01-01..2999-12-31"),
    (float("nan"), "not a finite number"), ("inf", "not a finite number"),
    (10**400, "outside 1970-01-01..2999-12-31"), (True, "not a timestamp (bool)"),
    ([1], "not a timestamp (list)"), ("next tuesday", "neither ISO 8601 nor an epoch number"),
])
def test_read_time_refuses_with_a_reason(value: object, reason: str) -> None:
    with pytest.raises(BadTime) as caught:
        read_time(value)
    assert caught.value.reason == reason
    meta: dict[str, Any] = {}
    assert timestamp(value, "create_time", meta) is None
    assert meta["invalid_time"]["create_time"]["reason"] == reason


NUMBERS = st.integers() | st.integers(10**18, 10**40).map(lambda n: -n) | st.floats(
    allow_nan=False, allow_infinity=False) | st.sampled_from(["digits 12345678901234567890123"])


@settings(max_examples=100, deadline=None)
@given(items=st.lists(st.dictionaries(st.sampled_from(["a", "b1e999"]), NUMBERS | st.lists(
    NUMBERS, max_size=3), max_size=3), max_size=4),
    sizes=st.lists(st.integers(1, 30), max_size=80), exponent=st.sampled_from(["", "1e400",
                                                                               "-2.5E-999"]))
def test_tagged_numbers_come_back_exact(
    items: list[Any], sizes: list[int], exponent: str
) -> None:
    data = json.dumps(items).encode()
    if exponent:  # a literal json.dumps never writes: beyond a double's range
        data = data[:-1] + (b", " if items else b"") + exponent.encode() + b"]"
    reader = GuardedReader(Trickle(data, sizes), Limits(), 1, tag_numbers=True)
    got = [settle(v, reader.edits).value for v in BACKEND.items(reader, "item", use_float=True)]
    assert got == json.loads(data)

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from ontology import ensure_utc, normalize_name, stable_id


@given(st.lists(st.text(), min_size=1, max_size=5))
def test_stable_id_is_a_pure_function_of_its_parts(parts: list[str]) -> None:
    assert stable_id("x", *parts) == stable_id("x", *list(parts))
    assert stable_id("x", *parts).startswith("x_")


@given(st.lists(st.text(), min_size=1, max_size=4), st.lists(st.text(), min_size=1, max_size=4))
def test_different_parts_give_different_ids(a: list[str], b: list[str]) -> None:
    if a != b and all("\x1f" not in part for part in a + b):
        assert stable_id("x", *a) != stable_id("x", *b)


def test_joining_parts_is_unambiguous() -> None:
    assert stable_id("x", "ab", "c") != stable_id("x", "a", "bc")
    assert stable_id("x", None) == stable_id("x", "")


def test_normalize_name_folds_case_punctuation_and_space() -> None:
    assert normalize_name("  Marathon   Training!! ") == "marathon training"
    assert normalize_name("ÉCOLE") == normalize_name("école")
    assert normalize_name("rust-cli") == "rust cli"


def test_ensure_utc_converts_and_assumes_utc_for_naive() -> None:
    naive = datetime(2024, 1, 1, 12, 0)
    assert ensure_utc(naive) == datetime(2024, 1, 1, 12, 0, tzinfo=UTC)
    plus_two = datetime(2024, 1, 1, 14, 0, tzinfo=timezone(timedelta(hours=2)))
    assert ensure_utc(plus_two) == datetime(2024, 1, 1, 12, 0, tzinfo=UTC)
    assert ensure_utc(None) is None

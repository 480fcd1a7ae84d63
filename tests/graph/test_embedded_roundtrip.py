"""The embedded engine stores any text the same way through COPY (rebuilds) and UNWIND (syncs)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from graph.ladybug_backend import LadybugGraph

texts = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"),
                max_size=40)
optional_texts = st.none() | texts


@pytest.fixture(scope="module")
def graph(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LadybugGraph]:
    store = LadybugGraph(Path(tmp_path_factory.mktemp("roundtrip")) / "g.lbug")
    store.ensure_schema()
    yield store
    store.close()


def _conversation(i: int, title: str | None, external: str) -> dict[str, object]:
    return {"id": f"c{i}", "user_scope": "u", "assistant_scope": "a", "row_hash": "h",
            "source_id": external, "external_id": external, "title": title,
            "created_at": None, "updated_at": None}


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(optional_texts, texts), min_size=1, max_size=6))
@example([(None, "\r"), ("\n", ""), ('"', ","), ("a\r\nb", " x "), ("", "\\N")])
def test_copy_and_unwind_store_the_same_values(
    graph: LadybugGraph, values: list[tuple[str | None, str]]
) -> None:
    rows = [_conversation(i, title, external) for i, (title, external) in enumerate(values)]
    graph.delete_all()
    graph.bulk_load({"Conversation": rows}, {})
    copied = graph.export()["Conversation"]
    graph.delete_all()
    graph.upsert_nodes("Conversation", rows)
    merged = graph.export()["Conversation"]
    assert copied == merged == sorted(rows, key=lambda r: str(r["id"]))

"""Lineage queries over the synced graph: the Python API behind ``conceptmem lineage``.

Each function opens the configured backend, asks one question of the ``GraphStore``
protocol and returns plain dataclasses (``as_json`` turns any of them into JSON-ready data).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from graph import (
    AsOfState,
    ConceptHistory,
    ConceptRef,
    EvidenceRow,
    GraphError,
    GraphStore,
    WindowMessage,
    open_graph,
)
from graph.readonly import write_clauses
from pipeline.errors import ConfigurationError
from pipeline.policy import ReadFilter, record_read
from pipeline.settings import Settings
from staging.db import utc_now
from staging.lock import require_store
from staging.projection import canonical_time

__all__ = [
    "as_json",
    "concept_evidence",
    "concept_history",
    "distinct_spans",
    "message_concepts",
    "message_window",
    "parse_params",
    "run_cypher",
    "state_as_of",
]

T = TypeVar("T")
_SYNC_HINT = (
    "run `conceptmem sync` first; `conceptmem lineage as-of 2100-01-01 --json` lists concept ids"
)


@contextmanager
def _graph(
    settings: Settings, backend: str | None, read_only: bool = True
) -> Iterator[GraphStore]:
    if (backend or settings.graph_backend) == "embedded":
        require_store(settings.store)
    graph = open_graph(settings, backend, read_only=read_only)
    try:
        yield graph
    finally:
        graph.close()


def _ask(settings: Settings, backend: str | None, question: Callable[[GraphStore], T]) -> T:
    with _graph(settings, backend) as graph:
        return question(graph)


def _reader(settings: Settings) -> ReadFilter:
    require_store(settings.store)
    return ReadFilter.of(settings)


def _require_visible(visible: set[str], kind: str, node_id: str) -> None:
    """An id the reader may not see is reported exactly like one that does not exist."""
    if node_id not in visible:
        raise GraphError(f"{kind} {node_id!r} is not in the graph", _SYNC_HINT)


def _ids_in(value: Any, scopes: list[tuple[str, str]]) -> Iterator[str]:
    if isinstance(value, dict):
        if "user_scope" in value and "assistant_scope" in value:
            scopes.append((str(value["user_scope"]), str(value["assistant_scope"])))
        for item in value.values():
            yield from _ids_in(item, scopes)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _ids_in(item, scopes)
    elif isinstance(value, str) and value.startswith(("msg_", "c_", "conv_")):
        yield value


def _visible_rows(seen: ReadFilter, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    named: list[tuple[dict[str, Any], set[str], list[tuple[str, str]]]] = []
    for row in rows:
        scopes: list[tuple[str, str]] = []
        named.append((row, set(_ids_in(row, scopes)), scopes))
    shown = seen.ids(i for _, ids, _ in named for i in ids)
    return [row for row, ids, scopes in named
            if ids <= shown and all(scope == seen.scope for scope in scopes)]


def _require(graph: GraphStore, label: str, node_id: str) -> None:
    known = (graph.concept_history(node_id) is not None if label == "Concept"
             else bool(graph.window(node_id, 0)))
    if not known:
        raise GraphError(f"{label.lower()} {node_id!r} is not in the graph ({graph.target})",
                         _SYNC_HINT)


def concept_evidence(
    settings: Settings, concept_id: str, backend: str | None = None
) -> list[EvidenceRow]:
    """Verbatim evidence for a concept: quote, offsets, message, conversation, time, role."""
    def ask(graph: GraphStore) -> list[EvidenceRow]:
        _require(graph, "Concept", concept_id)
        return distinct_spans(graph.evidence_for_concept(concept_id))

    seen = _reader(settings)
    _require_visible(seen.concepts([concept_id]), "concept", concept_id)
    rows = _ask(settings, backend, ask)
    shown = seen.messages(r.message_id for r in rows)
    visible = [r for r in rows if r.message_id in shown]
    record_read(settings, "lineage", concept_id, [concept_id], [r.message_id for r in visible])
    return visible


def distinct_spans(rows: Sequence[EvidenceRow]) -> list[EvidenceRow]:
    """One row per (message, start, end), the most confident; order kept.

    A merge moves the merged concepts' evidence to the survivor, so two concepts that quoted the
    same sentence leave two evidence rows for one span; the history keeps both, lineage shows one.
    """
    best: dict[tuple[str, int, int], EvidenceRow] = {}
    for row in rows:
        key = (row.message_id, row.start, row.end)
        if key not in best or row.confidence > best[key].confidence:
            best[key] = row
    keep = {id(row) for row in best.values()}
    return [row for row in rows if id(row) in keep]


def message_concepts(
    settings: Settings, message_id: str, backend: str | None = None
) -> list[ConceptRef]:
    def ask(graph: GraphStore) -> list[ConceptRef]:
        _require(graph, "Message", message_id)
        return graph.concepts_for_message(message_id)

    seen = _reader(settings)
    _require_visible(seen.messages([message_id]), "message", message_id)
    refs = _ask(settings, backend, ask)
    shown = seen.concepts(r.concept_id for r in refs)
    return [r for r in refs if r.concept_id in shown]


def message_window(
    settings: Settings, message_id: str, n: int = 3, backend: str | None = None
) -> list[WindowMessage]:
    if n < 0:
        raise ConfigurationError(f"window size must be >= 0, got {n}", "pass -n 3")

    def ask(graph: GraphStore) -> list[WindowMessage]:
        _require(graph, "Message", message_id)
        return graph.window(message_id, n)

    seen = _reader(settings)
    _require_visible(seen.messages([message_id]), "message", message_id)
    window = _ask(settings, backend, ask)
    shown = seen.messages(w.message_id for w in window)
    return [w for w in window if w.message_id in shown]


def concept_history(
    settings: Settings, concept_id: str, backend: str | None = None
) -> ConceptHistory:
    def ask(graph: GraphStore) -> ConceptHistory:
        history = graph.concept_history(concept_id)
        if history is None:
            raise GraphError(
                f"concept {concept_id!r} is not in the graph ({graph.target})", _SYNC_HINT
            )
        return history

    seen = _reader(settings)
    _require_visible(seen.concepts([concept_id]), "concept", concept_id)
    history = _ask(settings, backend, ask)
    linked = seen.concepts([*history.merged_into, *history.merged_from, *history.split_into,
                            *history.split_from])
    return dataclasses.replace(
        history, **{name: tuple(i for i in getattr(history, name) if i in linked)
                    for name in ("merged_into", "merged_from", "split_into", "split_from")})


def state_as_of(
    settings: Settings,
    timestamp: str,
    backend: str | None = None,
    believed_at: str | None = None,
) -> AsOfState:
    """What held at world time ``timestamp``, as believed at ``believed_at`` (default: now).

    Both are ISO-8601 (naive = UTC). Pass ``believed_at=timestamp`` for what the memory believed
    back then; the default answers with everything known now.
    """
    at = _timestamp(timestamp)
    believed = _timestamp(believed_at or utc_now())
    state = _ask(settings, backend, lambda g: g.as_of(at, believed))
    shown = _reader(settings).concepts(
        [c.concept_id for c in state.concepts]
        + [i for r in state.relations for i in (r.source_id, r.target_id)])
    return dataclasses.replace(
        state, concepts=tuple(c for c in state.concepts if c.concept_id in shown),
        relations=tuple(r for r in state.relations
                        if r.source_id in shown and r.target_id in shown))


def _timestamp(value: str) -> str:
    try:
        at = canonical_time(value)
    except ValueError as exc:
        raise ConfigurationError(
            f"not an ISO-8601 timestamp: {value!r}", "e.g. 2024-03-01 or 2024-03-01T12:00Z"
        ) from exc
    if at is None:
        raise ConfigurationError("empty timestamp", "e.g. 2024-03-01T12:00:00Z")
    return at


def parse_params(pairs: Sequence[str]) -> dict[str, Any]:
    """``k=v`` pairs; ``v`` is strict JSON when it parses (numbers, true, null, lists), else
    text: ``NaN`` and ``Infinity`` are not JSON, so they stay the text they are."""
    params: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.isidentifier():
            raise ConfigurationError(
                f"bad --param {pair!r}: expected NAME=VALUE", "e.g. --param id=concept_abc"
            )
        try:
            params[key] = json.loads(value, parse_constant=_not_json)
        except ValueError:
            params[key] = value
    return params


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def run_cypher(
    settings: Settings, query: str, params: dict[str, Any] | None = None,
    backend: str | None = None, write: bool = False,
) -> list[dict[str, Any]]:
    """The power-user passthrough: the query text as given, values only as parameters.

    Rows that name (by id, or as a node with scope properties) a message, concept or
    conversation the reader may not see (other scope, expired) are dropped. A query that
    returns bare texts without any id or node is not filterable: `cypher` is an operator tool.

    Read-only unless ``write``: the query may not use a write or file clause, and the engine
    is opened read-only. The embedded graph is derived data and never written this way (the
    next sync would undo it; ``verify`` reports it as drift); ``write`` is for Neo4j only.
    """
    name = backend or settings.graph_backend
    if write and name == "embedded":
        raise ConfigurationError(
            "cypher --write is refused on the embedded graph: it is derived from the SQLite "
            "stores and rebuilt from them",
            "change the data through the pipeline and run `conceptmem sync`",
        )
    clauses = write_clauses(query)
    if clauses and not write:
        raise ConfigurationError(
            f"cypher is read-only: the query uses {', '.join(clauses)}",
            "the graph is a projection: change the data through the pipeline and run "
            "`conceptmem sync`" + ("; pass --write to write to Neo4j anyway"
                                   if name == "neo4j" else ""),
        )
    with _graph(settings, backend, read_only=not write) as graph:
        rows = graph.run_cypher(query, params or {})
    return _visible_rows(_reader(settings), rows)


def as_json(value: Any) -> Any:
    """Dataclasses (and lists of them) as JSON-ready data; engine values stringified."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return as_json(dataclasses.asdict(value))
    if isinstance(value, list | tuple):
        return [as_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): as_json(v) for k, v in value.items()}
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)

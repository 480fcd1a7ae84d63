"""`conceptmem lineage ...` and `conceptmem cypher`."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from pipeline import lineage
from pipeline.cli.app import settings_from
from pipeline.cli.output import emit_json
from pipeline.cli.sync_cmd import BackendName

AsJson = Annotated[bool, typer.Option("--json", help="Print JSON.")]
Backend = Annotated[
    BackendName | None, typer.Option("--backend", help="embedded (default) or neo4j.")
]
group = typer.Typer(help="Trace concepts to the exact messages that support them.",
                    no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(group, name="lineage")
    app.command("cypher")(cypher)


def _name(backend: BackendName | None) -> str | None:
    return backend.value if backend else None


def _emit(value: Any, as_json: bool) -> None:
    data = lineage.as_json(value)
    if as_json:
        emit_json(data)
        return
    for item in data if isinstance(data, list) else [data]:
        emit_json(item, indent=2)


@group.command("concept")
def concept(ctx: typer.Context, concept_id: str, as_json: AsJson = False,
            backend: Backend = None) -> None:
    """Evidence for a concept: quote, offsets, message, conversation, timestamp, role."""
    _emit(lineage.concept_evidence(settings_from(ctx), concept_id, _name(backend)), as_json)


@group.command("message")
def message(ctx: typer.Context, message_id: str, as_json: AsJson = False,
            backend: Backend = None) -> None:
    """Concepts a message supports."""
    _emit(lineage.message_concepts(settings_from(ctx), message_id, _name(backend)), as_json)


@group.command("window")
def window(
    ctx: typer.Context, message_id: str,
    n: Annotated[int, typer.Option("-n", help="Messages before and after, along NEXT.")] = 3,
    as_json: AsJson = False, backend: Backend = None,
) -> None:
    """The messages around a message (offset < 0 before, > 0 after; branches included)."""
    _emit(lineage.message_window(settings_from(ctx), message_id, n, _name(backend)), as_json)


@group.command("history")
def history(ctx: typer.Context, concept_id: str, as_json: AsJson = False,
            backend: Backend = None) -> None:
    """A concept's revisions, merges and splits."""
    _emit(lineage.concept_history(settings_from(ctx), concept_id, _name(backend)), as_json)


@group.command("as-of")
def as_of(
    ctx: typer.Context,
    timestamp: str,
    believed_at: Annotated[
        str | None,
        typer.Option("--believed-at", help="System time of the belief (default: now)."),
    ] = None,
    then: Annotated[
        bool, typer.Option("--then", help="As believed at TIMESTAMP itself.")
    ] = False,
    as_json: AsJson = False,
    backend: Backend = None,
) -> None:
    """What held at TIMESTAMP (world time), as known now or --believed-at (ISO-8601; UTC)."""
    believed = timestamp if then else believed_at
    state = lineage.state_as_of(settings_from(ctx), timestamp, _name(backend), believed)
    _emit(state, as_json)


def cypher(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="Cypher; refer to values as $name.")],
    param: Annotated[
        list[str] | None, typer.Option("--param", help="NAME=VALUE (JSON or text); repeat.")
    ] = None,
    as_json: AsJson = False, backend: Backend = None,
    write: Annotated[
        bool, typer.Option("--write", help="Allow write clauses (Neo4j only; the embedded "
                                           "graph is derived data).")
    ] = False,
) -> None:
    """Run a read-only Cypher query on the graph; values only as parameters (--param k=v)."""
    params = lineage.parse_params(param or [])
    rows = lineage.run_cypher(settings_from(ctx), query, params, _name(backend), write=write)
    _emit(rows, as_json)

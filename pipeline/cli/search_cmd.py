"""`conceptmem search "QUERY"`: messages by any route, each with the path that found it."""

from __future__ import annotations

import dataclasses
from typing import Annotated

import typer

from pipeline.cli.app import settings_from
from pipeline.cli.output import emit, emit_json, say
from pipeline.retrieval import Searcher, SearchRequest, Visibility


def register(app: typer.Typer) -> None:
    app.command("search")(search)


def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What to look for (plain text).")],
    k: Annotated[int, typer.Option("--k", min=1, help="Number of results.")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    route: Annotated[
        str, typer.Option("--route", help="flat_bm25, flat_dense, flat_hybrid or memory.")
    ] = "memory",
    as_of: Annotated[
        str | None, typer.Option("--as-of", help="Only what was known then (ISO-8601, UTC).")
    ] = None,
    conversation: Annotated[
        list[str] | None, typer.Option("--conversation", help="Only these conversation ids.")
    ] = None,
) -> None:
    """Search the memory: message id, excerpt, conversation, session/time, score, and why."""
    settings = settings_from(ctx)
    visibility = Visibility(settings.user_scope, settings.assistant_scope, as_of)
    request = SearchRequest(query, k, frozenset(conversation or ()), as_of)
    with Searcher(settings, visibility, progress=say) as searcher:
        results = searcher.search(request, route)
    if as_json:
        emit_json([dataclasses.asdict(r) for r in results])
        return
    for n, r in enumerate(results, start=1):
        when = r.created_at or "no time"
        emit(f"{n}. {r.message_id}  {r.score:.4f}  {r.conversation_id} {when}"
             f" {r.author or r.role}")
        emit(f"   {r.excerpt}")
        why = "; ".join(" > ".join(s.label or s.kind for s in path[:-1]) for path in r.paths[:3])
        emit(f"   via {', '.join(r.routes)}: {why}")
    if not results:
        emit("no results")

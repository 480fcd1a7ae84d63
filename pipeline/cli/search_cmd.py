"""`conceptmem search "QUERY"`: messages by any route, each with the path that found it."""

from __future__ import annotations

import dataclasses
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape as _escape_markup

from pipeline.cli.app import settings_from
from pipeline.cli.output import emit_json, plain
from pipeline.retrieval import Searcher, SearchRequest, Visibility


def escape(text: object) -> str:
    """Text from the store as inert text: control codes made visible, then markup escaped."""
    return _escape_markup(plain(text))


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
    err = Console(stderr=True, highlight=False)
    with Searcher(settings, visibility, progress=lambda msg: err.print(escape(msg))) as searcher:
        results = searcher.search(request, route)
    if as_json:
        emit_json([dataclasses.asdict(r) for r in results])
        return
    console = Console(highlight=False)
    for n, r in enumerate(results, start=1):
        when = r.created_at or "no time"
        console.print(f"[bold]{n}.[/] {escape(r.message_id)}  {r.score:.4f}  "
                      f"[dim]{escape(r.conversation_id)} {escape(when)}"
                      f" {escape(r.author or r.role)}[/]")
        console.print(f"   {escape(r.excerpt)}")
        why = "; ".join(" > ".join(escape(s.label or s.kind) for s in path[:-1]) for path in
                        r.paths[:3])
        console.print(f"   [dim]via {escape(', '.join(r.routes))}: {why}[/]")
    if not results:
        console.print("no results")

"""`conceptmem stats`."""

from __future__ import annotations

from typing import Annotated

import typer

from pipeline.cli.app import settings_from
from pipeline.cli.output import console, emit_json, table
from pipeline.stats import collect_stats


def register(app: typer.Typer) -> None:
    app.command("stats")(stats)


def stats(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Counts of sources, conversations, messages, segments, concepts, evidence, topics."""
    figures = collect_stats(settings_from(ctx))
    if as_json:
        emit_json(figures)
        return
    title = f"store {figures.pop('store')}"
    console().print(table(title, ("what", "count"), figures.items()))

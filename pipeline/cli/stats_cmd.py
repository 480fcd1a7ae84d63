"""`conceptmem stats`."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from pipeline.cli.app import settings_from
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
        typer.echo(json.dumps(figures, sort_keys=True))
        return
    table = Table("what", "count", title=f"store {figures.pop('store')}")
    for key, value in figures.items():
        table.add_row(key, str(value))
    Console().print(table)

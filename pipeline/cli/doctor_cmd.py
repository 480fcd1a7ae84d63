"""`conceptmem doctor`."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from pipeline.cli.app import settings_from
from pipeline.health import EXIT_CODES, diagnose


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor)


def doctor(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    graph: Annotated[
        bool, typer.Option("--graph/--no-graph", help="Also compare each synced graph.")
    ] = True,
) -> None:
    """Classify the store, each run and each unit; exit 0 only when healthy.

    Exit codes: """ + ", ".join(f"{state} {code}" for state, code in EXIT_CODES.items()) + """.
    """
    report = diagnose(settings_from(ctx), graph=graph)
    if as_json:
        typer.echo(json.dumps(report.as_dict(), sort_keys=True))
    else:
        typer.echo(report.summary())
    raise typer.Exit(report.exit_code)

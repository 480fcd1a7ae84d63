"""`conceptmem ingest`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pipeline.cli.app import settings_from
from pipeline.cli.output import say
from pipeline.ingest import ingest_paths


def register(app: typer.Typer) -> None:
    app.command("ingest")(ingest)


def ingest(
    ctx: typer.Context,
    paths: Annotated[list[Path], typer.Argument(help="Export files (JSON, JSONL).")],
    format: Annotated[
        str | None, typer.Option("--format", help="Override format auto-detection.")
    ] = None,
    user_scope: Annotated[
        str | None, typer.Option("--user-scope", help="User scope for the imported records.")
    ] = None,
) -> None:
    """Import conversation exports into the store's source database."""
    settings = settings_from(ctx, user_scope=user_scope)
    report = ingest_paths(settings, paths, format_name=format, progress=True)
    say(report.summary())

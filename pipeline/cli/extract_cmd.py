"""`conceptmem extract`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pipeline.cli.app import settings_from
from pipeline.cli.output import say
from pipeline.errors import ConfigurationError
from pipeline.extract import extract_store


def register(app: typer.Typer) -> None:
    app.command("extract")(extract)


def extract(
    ctx: typer.Context,
    offline: Annotated[
        bool, typer.Option("--offline", help="Use the offline extractor even if an LLM is set.")
    ] = False,
    model: Annotated[str | None, typer.Option("--model", help="LLM model name.")] = None,
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="OpenAI-compatible endpoint URL.")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print estimated calls and tokens; write nothing.")
    ] = False,
    batch_out: Annotated[
        Path | None, typer.Option("--batch-out", help="Write a Batch API input JSONL file.")
    ] = None,
    batch_in: Annotated[
        Path | None, typer.Option("--batch-in", help="Ingest a Batch API output JSONL file.")
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option("--limit", min=1, help="Extract at most N pending segments this run."),
    ] = None,
) -> None:
    """Extract concepts with verified evidence from the pending segments of the store."""
    if batch_out is not None and batch_in is not None:
        raise ConfigurationError("--batch-out and --batch-in are exclusive", "pass one of them")
    settings = settings_from(ctx, llm_model=model, llm_base_url=base_url)
    report = extract_store(
        settings, offline=True if offline else None, dry_run=dry_run,
        batch_out=batch_out, batch_in=batch_in, progress=True, limit=limit,
    )
    say(report.summary())

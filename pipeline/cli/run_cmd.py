"""`conceptmem run`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pipeline.cli.app import settings_from
from pipeline.cli.output import say
from pipeline.run import RunOptions, StageReport, run_pipeline


def register(app: typer.Typer) -> None:
    app.command("run")(run)


def run(
    ctx: typer.Context,
    paths: Annotated[list[Path], typer.Argument(help="Export files (JSON, JSONL).")],
    format: Annotated[
        str | None, typer.Option("--format", help="Override format auto-detection.")
    ] = None,
    offline: Annotated[
        bool, typer.Option("--offline", help="Use the offline extractor even if an LLM is set.")
    ] = False,
) -> None:
    """Ingest exports, then extract, garden and sync into the graph, in one go."""
    settings = settings_from(ctx)

    def show(name: str, report: StageReport) -> None:
        say(f"{name}: {report.summary()}")

    options = RunOptions(tuple(paths), format, True if offline else None, progress=True)
    run_pipeline(settings, options, on_stage=show)

"""The ``conceptmem`` command: global options, command registration, error mapping."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from gardener.errors import GardenerError
from graph.errors import GraphError
from pipeline.errors import ConceptmemError
from pipeline.settings import Settings
from staging.errors import StagingError

__all__ = ["app", "main", "settings_from"]

app = typer.Typer(
    name="conceptmem",
    help="Concept memory with message-level lineage from conversation exports.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
err_console = Console(stderr=True)

# Each module defines register(app); one module per stage keeps this file small.
COMMAND_MODULES = ("ingest", "stats", "extract", "run", "sync", "lineage", "garden", "forget",
                   "doctor", "redact")


@app.callback()
def _global_options(
    ctx: typer.Context,
    store: Annotated[
        Path | None,
        typer.Option("--store", envvar="CONCEPTMEM_STORE", help="Store directory."),
    ] = None,
    user_scope: Annotated[
        str | None, typer.Option("--user-scope", help="User scope for new records.")
    ] = None,
    assistant_scope: Annotated[
        str | None, typer.Option("--assistant-scope", help="Assistant scope for new records.")
    ] = None,
) -> None:
    overrides = {"store": store, "user_scope": user_scope, "assistant_scope": assistant_scope}
    ctx.obj = {key: value for key, value in overrides.items() if value is not None}


def settings_from(ctx: typer.Context, **overrides: Any) -> Settings:
    """Settings from env + global options + a command's own options (None means unset)."""
    values = dict(ctx.obj or {})
    values.update({key: value for key, value in overrides.items() if value is not None})
    return Settings(**values)


for _name in COMMAND_MODULES:
    importlib.import_module(f"pipeline.cli.{_name}_cmd").register(app)

_USER_ERRORS = (ConceptmemError, StagingError, GraphError, GardenerError)


def main(argv: list[str] | None = None) -> int:
    """Entry point: maps our errors to one clean message and a non-zero exit code."""
    try:
        app(args=argv, prog_name="conceptmem")
    except _USER_ERRORS as exc:
        err_console.print(f"[bold red]Error:[/] {exc.message}", highlight=False)
        if exc.hint:
            err_console.print(f"  [dim]hint:[/] {exc.hint}", highlight=False)
        return 1
    except SystemExit as exc:  # typer/click exit in standalone mode (usage errors: 2)
        if exc.code is None:
            return 0
        return exc.code if isinstance(exc.code, int) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The ``conceptmem`` command: global options, command registration, error mapping."""

from __future__ import annotations

import importlib
import sqlite3
import sys
from pathlib import Path
from typing import Annotated, Any

import pydantic
import typer

from gardener.errors import GardenerError
from graph.errors import GraphError
from pipeline.cli.output import error
from pipeline.errors import ConceptmemError, ConfigurationError
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

# Each module defines register(app); one module per stage keeps this file small.
COMMAND_MODULES = ("ingest", "stats", "extract", "run", "sync", "lineage", "garden",
                   "search", "eval")


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
    wait: Annotated[
        float | None,
        typer.Option("--wait", min=0.0, help="Seconds to wait for another writer of the store."),
    ] = None,
) -> None:
    overrides = {"store": store, "user_scope": user_scope, "assistant_scope": assistant_scope,
                 "lock_wait_s": wait}
    ctx.obj = {key: value for key, value in overrides.items() if value is not None}


def settings_from(ctx: typer.Context, **overrides: Any) -> Settings:
    """Settings from env + global options + a command's own options (None means unset)."""
    values = dict(ctx.obj or {})
    values.update({key: value for key, value in overrides.items() if value is not None})
    try:
        return Settings(**values)
    except pydantic.ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'settings'}: {e['msg']}" for e in exc.errors()
        )
        raise ConfigurationError(
            f"invalid setting: {problems}",
            "check the options and the CONCEPTMEM_* / NEO4J_* environment variables",
        ) from None


for _name in COMMAND_MODULES:
    importlib.import_module(f"pipeline.cli.{_name}_cmd").register(app)

_USER_ERRORS = (ConceptmemError, StagingError, GraphError, GardenerError)


def main(argv: list[str] | None = None) -> int:
    """Entry point: maps our errors to one clean message and a non-zero exit code.

    Errors of the environment that no layer below turned into ours (a file system refusing,
    a database file damaged mid-run) still get one sentence with a next step, no traceback.
    """
    try:
        app(args=argv, prog_name="conceptmem")
    except _USER_ERRORS as exc:
        error(exc.message, exc.hint)
        return 1
    except sqlite3.DatabaseError as exc:
        error(f"database error: {exc}",
              "the store may be damaged or written by another program; "
              "check it with `conceptmem stats`, restore or re-import")
        return 1
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        error(f"{where}{exc.strerror or exc}", "check the path, its permissions and free space")
        return 1
    except KeyboardInterrupt:
        error("interrupted", "re-run the command: every stage resumes where it stopped")
        return 130
    except SystemExit as exc:  # typer/click exit in standalone mode (usage errors: 2)
        if exc.code is None:
            return 0
        return exc.code if isinstance(exc.code, int) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

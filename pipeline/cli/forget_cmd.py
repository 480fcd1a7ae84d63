"""`conceptmem forget`."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Annotated

import typer

from pipeline.cli.app import settings_from
from pipeline.forget import Selector, forget


def register(app: typer.Typer) -> None:
    app.command("forget")(forget_cmd)


def forget_cmd(
    ctx: typer.Context,
    message: Annotated[
        str | None, typer.Option("--message", help="Message id (store or export id).")
    ] = None,
    conversation: Annotated[
        str | None, typer.Option("--conversation", help="Conversation id (store or export id).")
    ] = None,
    source: Annotated[
        str | None, typer.Option("--source", help="Imported file (path, sha256 or source id).")
    ] = None,
    between: Annotated[
        tuple[str, str] | None, typer.Option("--between", help="Messages created in [T1, T2).")
    ] = None,
    concept: Annotated[
        str | None, typer.Option("--concept", help="A concept and the messages behind it.")
    ] = None,
    user_scope: Annotated[
        str | None, typer.Option("--user-scope", help="Every message of a user scope.")
    ] = None,
    expired: Annotated[
        bool, typer.Option("--expired", help="Messages past their retention.")
    ] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Count, delete nothing.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Delete messages and everything derived from them (evidence, concepts, embeddings, FTS,
    LLM logs, graph), re-derive the rest, and record a content-free deletion receipt."""
    selector = Selector(
        message=message,
        conversation=conversation,
        source=source,
        between=between,
        concept=concept,
        user_scope=user_scope,
        expired_at=datetime.now(UTC).isoformat() if expired else None,
    )
    report = forget(settings_from(ctx), selector, dry_run=dry_run)
    if as_json:
        typer.echo(json.dumps(vars(report), sort_keys=True))
        return
    typer.echo(report.summary())

"""`conceptmem redact`."""

from __future__ import annotations

from typing import Annotated

import typer

from pipeline.cli.app import settings_from
from pipeline.forget import redact


def register(app: typer.Typer) -> None:
    app.command("redact")(redact_cmd)


def redact_cmd(
    ctx: typer.Context,
    message: Annotated[str, typer.Option("--message", help="Message id (store or export id).")],
    pattern: Annotated[
        str | None, typer.Option("--pattern", help="Regex to mask (default: the whole text).")
    ] = None,
) -> None:
    """Rewrite a message's stored text (masking PATTERN) and re-derive what came from it;
    the receipt records the message, fields and span count, never the content."""
    typer.echo(redact(settings_from(ctx), message, pattern).summary())

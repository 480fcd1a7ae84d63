"""`conceptmem garden` (registered by its owning issue)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Not registered yet."""

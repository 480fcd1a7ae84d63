"""Errors raised by the SQLite stores."""

from __future__ import annotations

__all__ = ["StagingError", "StoreNotFound"]


class StagingError(Exception):
    """Base of staging errors; ``hint`` says what to do next."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        self.message = message
        self.hint = hint
        super().__init__(message)


class StoreNotFound(StagingError):
    """The store directory holds no source database yet."""

"""Errors raised by the SQLite stores."""

from __future__ import annotations

from typing import Any

__all__ = ["StagingError", "StoreBusy", "StoreNotFound", "StoreUnavailable"]


class StagingError(Exception):
    """Base of staging errors; ``hint`` says what to do next."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        self.message = message
        self.hint = hint
        super().__init__(message)


class StoreNotFound(StagingError):
    """The store directory holds no source database yet."""


class StoreUnavailable(StagingError):
    """The store cannot be used: not a directory, not writable, or a database file is corrupt."""


class StoreBusy(StagingError):
    """Another process holds the store's writer lock; ``holder`` says who, if known."""

    def __init__(self, message: str, hint: str | None = None, holder: Any = None) -> None:
        super().__init__(message, hint)
        self.holder = holder

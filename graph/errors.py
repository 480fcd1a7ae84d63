"""Errors raised by graph backends."""

from __future__ import annotations

__all__ = ["GraphError", "GraphUnavailable"]


class GraphError(Exception):
    """Base of graph errors; ``hint`` says what to do next."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        self.message = message
        self.hint = hint
        super().__init__(message)


class GraphUnavailable(GraphError):
    """The backend cannot be reached or its package is not installed."""

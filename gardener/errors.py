"""Errors raised by the gardener."""

from __future__ import annotations

__all__ = ["GardenerError", "PlanCheckFailed"]


class GardenerError(Exception):
    """Base of gardener errors; ``hint`` says what to do next."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        self.message = message
        self.hint = hint
        super().__init__(message)


class PlanCheckFailed(GardenerError):
    """A plan failed a deterministic check; nothing was applied."""

    def __init__(self, step: str, failures: list[str]) -> None:
        self.step = step
        self.failures = failures
        super().__init__(
            f"{step} plan rejected: " + "; ".join(failures),
            "nothing was applied; inspect the plan with --dry-run",
        )

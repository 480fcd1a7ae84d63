"""Errors for people: each carries what went wrong, where, and what to do next."""

from __future__ import annotations

__all__ = [
    "ConceptmemError",
    "ConfigurationError",
    "ImportFormatError",
    "InputFileError",
    "MissingExtraError",
]


class ConceptmemError(Exception):
    """Base of every error the CLI turns into a clean message and a non-zero exit."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None) -> None:
        self.message = message
        self.hint = hint
        super().__init__(message if hint is None else f"{message}\n  hint: {hint}")


class InputFileError(ConceptmemError):
    """A file cannot be read as an export: names the file, the record and the reason."""

    def __init__(self, path: str, record: str, reason: str, hint: str | None = None) -> None:
        self.path = path
        self.record = record
        self.reason = reason
        super().__init__(f"{path}: {record}: {reason}", hint)


class ImportFormatError(InputFileError):
    """The file's format is unknown or does not match --format."""


class ConfigurationError(ConceptmemError):
    """A setting is missing or inconsistent."""


class MissingExtraError(ConceptmemError):
    """An optional dependency is not installed."""

    def __init__(self, package: str, extra: str | None = None) -> None:
        self.package, self.extra = package, extra
        command = (f"pip install 'conceptmem[{extra}]'" if extra
                   else "pip install --force-reinstall conceptmem (it is a core dependency)")
        super().__init__(f"{package} is not installed", command)

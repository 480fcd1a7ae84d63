"""Reading a benchmark file: one JSON list, or an error that names the file and the reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pipeline.errors import InputFileError

__all__ = ["read_json_list"]


def read_json_list(path: Path, kind: str, expected: str) -> list[Any]:
    """The top-level list of ``path`` (``kind``: "LoCoMo", ...; ``expected``: what it lists).

    Deeply nested input is refused as unreadable (``RecursionError``), never a traceback.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise InputFileError(str(path), "file", f"cannot read {kind} JSON: {exc}") from exc
    if not isinstance(data, list):
        raise InputFileError(str(path), "top level", f"expected a list of {expected}")
    return data

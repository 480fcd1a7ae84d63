"""Export importers: one module per format, auto-detected by :mod:`pipeline.importers.detect`.

A reader takes ``(record label, raw value)`` pairs from one file and yields, per conversation,
a :class:`~pipeline.importers.base.Parsed` (conversation + messages with stable ids) or a
``QuarantinedRecord`` (a broken record: where and why).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from pipeline.importers import chatgpt, claude, jsonl, locomo, openwebui
from pipeline.importers.base import ImportContext, Parsed, RecordError
from pipeline.importers.detect import (
    FORMAT_NAMES,
    Detected,
    NumberOverflow,
    detect,
    iter_records,
)
from pipeline.importers.guard import Limits
from staging import QuarantinedRecord

__all__ = [
    "FORMAT_NAMES",
    "READERS",
    "Detected",
    "ImportContext",
    "Limits",
    "NumberOverflow",
    "Parsed",
    "Reader",
    "RecordError",
    "detect",
    "iter_records",
]

Reader = Callable[
    [Iterable[tuple[str, object]], ImportContext], Iterator[Parsed | QuarantinedRecord]
]

READERS: dict[str, Reader] = {
    "chatgpt": chatgpt.read,
    "claude": claude.read,
    "jsonl": jsonl.read_messages,
    "sharegpt": jsonl.read_sharegpt,
    "locomo": locomo.read,
    "openwebui": openwebui.read,
}

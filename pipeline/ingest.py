"""Ingest conversation exports into the store's source database.

Paths are files, directories (their ``*.json``/``*.jsonl`` files) or the ``.zip`` a ChatGPT or
Claude account download comes as (its ``conversations*.json`` members, read in place). For each
file: detect the format (or take ``--format``), hash the file (sha256), then stream
its records through the format's reader and store them **in one transaction per file**.

Error policy (two levels):

* **File-level errors are fatal for that file**: unreadable file, unknown format, invalid or
  truncated JSON in an array/object export. They raise :class:`~pipeline.errors.InputFileError`
  (or :class:`~pipeline.errors.ImportFormatError`) naming the file, the record and the reason;
  the file's transaction is rolled back, so nothing from it is stored. Files before it in the
  same call stay imported (each had its own transaction); files after it are not read.
* **Record-level errors are quarantined**: a conversation or JSON line that cannot be converted
  inside an otherwise readable file is written to the ``quarantine`` table with the file, the
  record (index/line and id) and the reason, and every other record is stored. A re-import
  does not duplicate quarantine rows.
* **A forced ``--format`` that rejects every record is a file-level error**: the file is not
  that format, so nothing of it (not even quarantine rows) is stored.

Ids are content-addressed (see :mod:`pipeline.importers.base`), so re-importing a file adds no
rows, and a newer export of the same account adds only its new conversations and messages
(plus one ``sources`` row for the new file).
"""

from __future__ import annotations

import gc
import hashlib
import re
import zipfile
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Protocol

from ontology import Conversation, Message, Source, stable_id
from pipeline.errors import ImportFormatError, InputFileError
from pipeline.importers import READERS, Detected, ImportContext, Parsed, detect, iter_records
from pipeline.settings import Settings
from staging import ImportCounts, QuarantinedRecord, SourceStore, transaction
from staging.lock import writes_store

__all__ = [
    "ExportInput",
    "FileReport",
    "IngestReport",
    "expand_paths",
    "ingest_file",
    "ingest_paths",
    "sha256_file",
]

_BATCH_MESSAGES = 5000


@dataclass
class FileReport:
    path: str
    format: str
    sha256: str
    source_id: str
    counts: ImportCounts


@dataclass
class IngestReport:
    files: list[FileReport] = field(default_factory=list)

    @property
    def totals(self) -> ImportCounts:
        total = ImportCounts()
        for item in self.files:
            total.add(item.counts)
        return total

    def summary(self) -> str:
        t = self.totals
        lines = [
            f"Ingested {len(self.files)} file(s): {t.sources} new source(s),"
            f" {t.conversations} new conversation(s), {t.messages} new message(s)"
            f" ({t.messages_updated} updated), {len(t.rejected)} record(s) quarantined"
        ]
        for item in self.files:
            c = item.counts
            lines.append(
                f"  {item.path} ({item.format}): +{c.conversations} conversations,"
                f" +{c.messages} messages, {len(c.rejected)} quarantined"
            )
            lines.extend(f"    quarantined {r.record}: {r.reason}" for r in c.rejected[:10])
        return "\n".join(lines)


class _Progress(Protocol):
    def __call__(self, done: int) -> None: ...


def sha256_file(path: Path | ExportInput) -> str:
    digest = hashlib.sha256()
    export = _file_input(path) if isinstance(path, Path) else path
    with export.open() as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


_EXPORT_SUFFIXES = (".json", ".jsonl", ".ndjson")
_ZIP_MEMBER = re.compile(r"(^|/)conversations(-\d+)?\.json$")


@dataclass(frozen=True)
class ExportInput:
    """One export to read: a file, or a ``conversations*.json`` member of a zip archive."""

    name: str
    size: int
    open: Callable[[], IO[bytes]]


def _file_input(path: Path) -> ExportInput:
    return ExportInput(str(path), path.stat().st_size, lambda: path.open("rb"))


def _zip_inputs(path: Path) -> list[ExportInput]:
    try:
        with zipfile.ZipFile(path) as archive:
            members = [i for i in archive.infolist() if _ZIP_MEMBER.search(i.filename)]
    except (zipfile.BadZipFile, OSError) as exc:
        raise InputFileError(str(path), "file", f"not a readable zip archive ({exc})") from exc
    if not members:
        raise InputFileError(str(path), "archive", "holds no conversations*.json",
                             "unzip it and pass the export files")

    def opener(member: str) -> Callable[[], IO[bytes]]:
        def open_member() -> IO[bytes]:
            # the member handle keeps the archive's file open until the handle is closed
            with zipfile.ZipFile(path) as archive:
                return archive.open(member)

        return open_member

    return [ExportInput(f"{path}!{m.filename}", m.file_size, opener(m.filename))
            for m in sorted(members, key=lambda m: m.filename)]


def expand_paths(paths: Sequence[Path]) -> list[ExportInput]:
    """Files as given; a directory stands for its ``*.json``/``*.jsonl`` files (sorted); a
    ``.zip`` (ChatGPT/Claude download) for its ``conversations*.json`` members."""
    inputs: list[ExportInput] = []
    for path in paths:
        if not path.exists():
            raise InputFileError(str(path), "file", "does not exist", "check the path")
        if path.is_dir():
            found = sorted(p for p in path.iterdir()
                           if p.is_file() and p.suffix.lower() in _EXPORT_SUFFIXES)
            if not found:
                raise InputFileError(str(path), "directory", "holds no .json or .jsonl file",
                                     "pass export files or a directory of them")
            inputs.extend(_file_input(p) for p in found)
        elif path.is_file() and path.suffix.lower() == ".zip":
            inputs.extend(_zip_inputs(path))
        elif path.is_file():
            inputs.append(_file_input(path))
        else:
            raise InputFileError(str(path), "file", "is not a regular file", "pass export files")
    return inputs


class _Batch:
    """Conversations waiting for one executemany round."""

    def __init__(self, store: SourceStore, counts: ImportCounts) -> None:
        self.store, self.counts = store, counts
        self.items: list[tuple[Conversation, Sequence[Message]]] = []
        self.size = 0

    def add(self, parsed: Parsed) -> None:
        self.items.append((parsed.conversation, parsed.messages))
        self.size += len(parsed.messages) + 1
        if self.size >= _BATCH_MESSAGES:
            self.flush()

    def flush(self) -> None:
        if self.items:
            self.counts.add(self.store.add_conversations(self.items))
            self.items, self.size = [], 0


def _store_records(
    store: SourceStore, source: Source, ctx: ImportContext, f: IO[bytes],
    detected: Detected, on_progress: _Progress, forced: bool = False,
) -> ImportCounts:
    counts = ImportCounts(sources=int(store.add_source(source)))
    batch = _Batch(store, counts)
    records = iter_records(Path(source.path), f, detected.container)
    kept = 0
    for item in READERS[source.format](records, ctx):
        if isinstance(item, QuarantinedRecord):
            counts.quarantined += int(store.add_quarantine(source, item))
            counts.rejected.append(item)
        else:
            kept += 1
            batch.add(item)
        on_progress(f.tell())
    batch.flush()
    if forced and counts.rejected and not kept:  # raised inside the file's transaction
        first = counts.rejected[0]
        raise ImportFormatError(
            source.path, first.record,
            f"--format {source.format} rejected all {len(counts.rejected)} record(s)"
            f" (first: {first.reason})",
            "drop --format to auto-detect the format, or pass the right one",
        )
    return counts


_DAMAGED = (zipfile.BadZipFile, zlib.error, EOFError)  # a damaged member of a zip archive


def _damaged(name: str, exc: BaseException) -> InputFileError:
    return InputFileError(name, "archive member", f"damaged, cannot be read ({exc})",
                          "download the export again, or unzip it and pass the files")


def ingest_file(
    store: SourceStore, export: Path | ExportInput, settings: Settings,
    format_name: str | None = None, on_progress: _Progress = lambda done: None,
) -> FileReport:
    """Import one file in one transaction (see the module docstring for the error policy)."""
    if isinstance(export, Path):
        export = _file_input(export)
    name = Path(export.name)
    try:
        detected = detect(name, format_name, export.open)
        sha = sha256_file(export)
    except _DAMAGED as exc:
        raise _damaged(export.name, exc) from exc
    stored_path = export.name if "!" in export.name else str(name.resolve())
    source = Source(
        id=stable_id("src", sha, settings.user_scope), path=stored_path, sha256=sha,
        format=detected.format,
        imported_at=datetime.now(UTC), user_scope=settings.user_scope,
        assistant_scope=settings.assistant_scope,
    )
    ctx = ImportContext(source.id, settings.user_scope, settings.assistant_scope,
                        family=detected.format)
    try:
        with _gc_paused(), export.open() as f, transaction(store.db), store.bulk_import():
            counts = _store_records(store, source, ctx, f, detected, on_progress,
                                    forced=format_name is not None)
    except OSError as exc:
        raise InputFileError(export.name, "file", f"cannot read ({exc})") from exc
    except _DAMAGED as exc:
        raise _damaged(export.name, exc) from exc
    return FileReport(export.name, detected.format, sha, source.id, counts)


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while a file streams through: records are acyclic dicts freed by
    reference counting, and the collector's passes over them cost ~30% of ingest time."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextmanager
def _progress_bar(enabled: bool, total: int) -> Iterator[_Tracker]:
    if not enabled:
        yield _Tracker(None, None)
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    columns = (TextColumn("[bold]ingest"), BarColumn(), DownloadColumn(), TimeRemainingColumn())
    with Progress(*columns, transient=True, console=Console(stderr=True)) as progress:
        task = progress.add_task("ingest", total=total)
        yield _Tracker(progress, task)


class _Tracker:
    """Byte progress over all files; ``for_file`` gives the per-file callback."""

    def __init__(self, progress: object, task: object) -> None:
        self.progress, self.task, self.offset = progress, task, 0

    def for_file(self) -> _Progress:
        def update(done: int) -> None:
            if self.progress is not None:
                self.progress.update(self.task, completed=self.offset + done)  # type: ignore[attr-defined]

        return update


@writes_store("ingest", create=True)
def ingest_paths(
    settings: Settings, paths: Sequence[Path | str], format_name: str | None = None,
    progress: bool = False,
) -> IngestReport:
    """Import every path into ``settings.source_db``; one transaction per file."""
    files = expand_paths([Path(p) for p in paths])
    report = IngestReport()
    store = SourceStore.open(settings.source_db)
    try:
        with _progress_bar(progress, sum(f.size for f in files)) as tracker:
            for export in files:
                try:
                    report.files.append(
                        ingest_file(store, export, settings, format_name, tracker.for_file())
                    )
                except InputFileError as exc:
                    if report.files and exc.hint is not None:
                        exc.hint += f" ({len(report.files)} earlier file(s) were imported)"
                    raise
                tracker.offset += export.size
    finally:
        store.close()
    return report

"""One writer per store, readers welcome.

Every stage that writes a store (ingest, extract, garden, sync, run) holds ``DIR/writer.lock``
for as long as it runs. The lock is an OS file lock (``filelock``: ``flock`` on POSIX), so the
kernel releases it when its process dies, however it dies: a lock whose holder crashed is simply
free again. Who holds it is written next to it (``DIR/writer.json``: stage, pid, start time) so
that a refused writer can say "store S is busy: extract started by pid N at T"; the writer
removes it, while it still holds the lock, when it finishes.

A writer that takes the lock first closes the runs a dead writer left ``started``: they are
marked ``interrupted`` (their stage is resumable; the next run redoes the work). Readers never
take the lock; SQLite's WAL lets them read while a writer writes.

Nested use in one thread (``run`` calls ingest, then extract...) is re-entrant; another
thread of the same process is a second writer like any other.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import wraps
from pathlib import Path
from typing import Any, Protocol, TypeVar

import filelock

from staging.db import utc_now
from staging.errors import StoreBusy, StoreNotFound, StoreUnavailable

__all__ = ["LockHolder", "StoreSettings", "holder", "recover_interrupted", "require_store",
           "writer_lock", "writes_store"]

LOCK_NAME = "writer.lock"
HOLDER_NAME = "writer.json"
_held: dict[tuple[Path, int], int] = {}
_guard = threading.Lock()


@dataclass(frozen=True)
class LockHolder:
    stage: str
    pid: int
    started_at: str

    def describe(self) -> str:
        return f"{self.stage} started by pid {self.pid} at {self.started_at}"


def holder(store: Path) -> LockHolder | None:
    """Who holds (or last held) the store's writer lock, if it said so."""
    try:
        data = json.loads((store / HOLDER_NAME).read_text(encoding="utf-8"))
        return LockHolder(str(data["stage"]), int(data["pid"]), str(data["started_at"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def require_store(store: Path | str) -> Path:
    """``store`` if it is a store directory; reading commands call this and create nothing."""
    path = Path(store)
    if path.exists() and not path.is_dir():
        raise StoreUnavailable(f"--store {path} is a file, not a store directory",
                               "pass a directory (it is created on first ingest)")
    if not path.exists():
        raise StoreNotFound(f"no store at {path}",
                            "check --store (or CONCEPTMEM_STORE); `conceptmem ingest PATH...` "
                            "(or `conceptmem run PATH...`) creates one")
    return path


def _prepare(store: Path, create: bool) -> None:
    if not create or store.exists():
        require_store(store)
    else:
        try:
            store.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreUnavailable(f"cannot create the store directory {store}: {exc.strerror}",
                                   "pass a --store in a directory you can write") from exc
    if not os.access(store, os.W_OK | os.X_OK):
        raise StoreUnavailable(f"store {store} is not writable",
                               "fix its permissions or pass a --store you can write")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):  # exists but not ours, or no way to tell
        return True
    return True


def _busy(store: Path, waited: float) -> StoreBusy:
    found = None
    for _ in range(10):  # the holder writes writer.json right after it takes the lock
        found = holder(store)
        if found is not None and _alive(found.pid):
            break
        found = None
        time.sleep(0.05)
    what = found.describe() if found is not None else "another writer holds it"
    waited_text = f" (waited {waited:g} s)" if waited > 0 else ""
    return StoreBusy(
        f"store {store} is busy: {what}{waited_text}",
        "wait for it to finish, or pass --wait SECONDS (CONCEPTMEM_LOCK_WAIT_S); "
        "reading commands (stats, lineage, verify) work meanwhile",
        holder=found,
    )


def _acquire(store: Path, stage: str, wait_s: float) -> filelock.BaseFileLock:
    lock = filelock.FileLock(store / LOCK_NAME, timeout=max(0.0, wait_s), thread_local=False)
    try:
        lock.acquire()
    except filelock.Timeout:
        raise _busy(store, wait_s) from None
    except OSError as exc:
        raise StoreUnavailable(f"cannot lock store {store}: {exc.strerror or exc}",
                               "pass a --store you can write") from exc
    info = {"stage": stage, "pid": os.getpid(), "started_at": utc_now()}
    tmp = store / f".{HOLDER_NAME}.{os.getpid()}"
    tmp.write_text(json.dumps(info), encoding="utf-8")
    tmp.replace(store / HOLDER_NAME)
    return lock


@contextmanager
def writer_lock(
    store: Path | str, stage: str, *, wait_s: float = 0.0, create: bool = False
) -> Iterator[None]:
    """Hold the store's writer lock; raise ``StoreBusy`` if another process holds it.

    ``wait_s`` > 0 waits that long for the holder to finish first. ``create`` makes a missing
    store directory (ingest); otherwise a missing store raises ``StoreNotFound``.
    """
    path = Path(store).absolute()
    key = (path, threading.get_ident())  # re-entrant in one thread; other threads wait too
    with _guard:
        depth = _held.get(key, 0)
        if depth:
            _held[key] = depth + 1
    if depth:
        try:
            yield
        finally:
            with _guard:
                _held[key] -= 1
        return
    _prepare(path, create)
    lock = _acquire(path, stage, wait_s)
    with _guard:
        _held[key] = 1
    try:
        recover_interrupted(path / "staging.db")
        yield
    finally:
        with _guard:
            del _held[key]
        (path / HOLDER_NAME).unlink(missing_ok=True)  # while still holding: no race
        lock.release()


def recover_interrupted(staging_db: Path) -> int:
    """Mark the runs (and sync receipts) a dead writer left ``started`` as ``interrupted``.

    Call only while holding the writer lock: then no live process can own a started run.
    """
    if not staging_db.exists():
        return 0
    now, note = utc_now(), "interrupted: the process ended before the stage finished"
    conn = sqlite3.connect(str(staging_db), timeout=10.0)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "runs" not in tables:
            return 0
        with conn:
            changed = conn.execute(
                "UPDATE runs SET status = 'interrupted', finished_at = ?, error = ? "
                "WHERE status = 'started'", [now, note],
            ).rowcount
            if "sync_receipts" in tables:
                conn.execute("UPDATE sync_receipts SET status = 'interrupted', finished_at = ? "
                             "WHERE status = 'started'", [now])
        return int(changed)
    except sqlite3.DatabaseError as exc:
        raise StoreUnavailable(f"{staging_db}: cannot read the staging database: {exc}",
                               "restore it from a backup, or move it away and re-run "
                               "`conceptmem extract` (it is rebuilt from source.db)") from exc
    finally:
        conn.close()


class StoreSettings(Protocol):
    @property
    def store(self) -> Path: ...
    @property
    def lock_wait_s(self) -> float: ...


F = TypeVar("F", bound=Callable[..., Any])


def writes_store(stage: str, *, create: bool = False) -> Callable[[F], F]:
    """Decorate a stage function whose first argument is the settings: it runs under the lock.

    Options a stage takes to write nothing (``dry_run=True``) skip the lock.
    """
    def decorate(func: F) -> F:
        @wraps(func)
        def locked(settings: StoreSettings, *args: Any, **kwargs: Any) -> Any:
            if kwargs.get("dry_run"):
                return func(settings, *args, **kwargs)
            wait = float(getattr(settings, "lock_wait_s", 0.0) or 0.0)
            with writer_lock(settings.store, stage, wait_s=wait, create=create):
                return func(settings, *args, **kwargs)

        return locked  # type: ignore[return-value]

    return decorate
